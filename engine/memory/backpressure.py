"""Back-pressure: how far a character's unsummarized memories may run ahead (pure).

The waterfall's trigger (``engine.memory.waterfall``) starts a compaction when
M - b > I + R; in a crowded room, where every line one agent says is a memory for all
of them, memories can arrive faster than the summarizer folds them. So the agents wait
instead (DESIGN.md, "Back-pressure"):

- a character is *behind* once M - b reaches its ``limit``: I + 2R for an agent, I + 3R
  for a player (whose summaries may go after agents': no prompt waits for them);
- a character's compaction requests go before every turn request (they are *urgent*)
  from halfway between its trigger and its limit (I + R + R/2 for an agent, I + 2R for a
  player), so that in a crowd memory mostly keeps up without anyone waiting;
- while anyone is behind, no agent's command runs (nor does a new turn ask the model);
- a command adds at most one memory to each character (one result, or one event in
  its room), so an agent command never takes anyone past its limit: an agent's M - b
  stays within I + 2R and a player's within I + 3R.

A person's own commands are never held, and a summarizer may be slow or fail: so the
*bound* (``bound``: I + 2R for an agent, I + 4R for a player) is kept another way. A
memory that would take a character past it commits the due chunk extractively at
once, with no model (``engine.agents.compactor``): M - b never passes it, whatever
arrives, however slow the summarizer.
"""

from __future__ import annotations

from typing import Final

from engine.memory.waterfall import Windows

PLAYER_PATIENCE: Final = 4
"""A player's summary request lets this many times more turns go first than an agent's
(``LLMRequest.patience``)."""


def limit(windows: Windows, kind: str) -> int:
    """The M - b at which a character is behind (``kind``: agent or player): agent
    commands wait until its compaction brings it below."""
    return windows.immediate + (2 if kind == "agent" else 3) * windows.recent


def bound(windows: Windows, kind: str) -> int:
    """The most M - b a character ever has (``kind``: agent or player): a memory that
    would pass it commits the due chunk extractively at once. An agent's is its
    ``limit``, I + 2R (within the issue's I + 2R + S); a player's I + 4R."""
    return windows.immediate + (2 if kind == "agent" else 4) * windows.recent


def behind(memories: int, boundary: int, windows: Windows, kind: str) -> bool:
    """True when the character's memory is too far behind: agent commands wait for it,
    and its compaction goes first."""
    return memories - boundary >= limit(windows, kind)


def urgent(memories: int, boundary: int, windows: Windows, kind: str) -> bool:
    """True when the character's compaction requests go before every turn request: from
    halfway between the trigger (I + R) and its ``limit``."""
    start = windows.immediate + windows.recent
    return memories - boundary >= start + (limit(windows, kind) - start + 1) // 2
