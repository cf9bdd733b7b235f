"""Named crash points, for the crash harness (``scripts/crashtest.py``) and its tests.

    crash_point("journal-mid-line")

does nothing unless the environment variable ``MUDSIM_CRASH_AT`` names that point, as
``NAME`` (the first time the process passes it) or ``NAME:N`` (the N-th time, from 1).
Then the process kills itself with SIGKILL on the spot: no ``finally``, no flush, no
atexit, exactly what a power-cord pull or an OOM kill does to the process (the OS
still has what was written). The variable is read once, at import; production runs
never set it, and an unset variable costs one comparison per point.

The points, where they are and what a kill there leaves behind:

- ``journal-mid-line``: half of a memory's JSON line is written and flushed.
- ``summary-after-history``: a compaction's history file is written, recent.md and
  longterm.md are not.
- ``summary-after-longterm``: history and longterm.md are written, recent.md (the
  commit point) is not.
- ``world-save-mid``: in a world save, between the snapshot and the agent files.
- ``miniworld-import-mid``: after each Miniworld memory file imported into a new
  character's journal (``:N``: N files imported, the rest not, the folder not renamed).
- ``knowledge-between-phases``: a knowledge pass has its candidates (and read the bank),
  the consolidation call has not been made; nothing is written.
- ``knowledge-after-plan``: a pass's commit plan (``knowledge/.committing.json``) is
  written, nothing of it applied: the pass is committed, the next reader applies it.
- ``knowledge-after-log``: the plan's log lines are appended, the bank is not written.
- ``knowledge-after-bank``: the bank is written, the pass record is not.
- ``knowledge-after-record``: the record is written, the plan not removed (nor the
  handbook written: the next run writes it again by the rules, from the bank).
- ``undo-after-plan``, ``undo-after-log``, ``undo-after-bank``: the same three points of
  an undo's commit (``@knowledge undo``; its handbook is written after the commit).
- ``knowledge-seed-before-world``: ``mudsim agent new`` has planned the new agent's seed
  (its knowledge folder holds the plan), the character is not committed: the agent
  does not exist, and the next ``agent new`` of that name clears the plan and starts over.
- ``knowledge-seed-after-world``: the character is committed (``world.yaml``), its seed
  not applied yet: the next process to read its bank applies it. The seed's own
  commit passes the pass's points, ``knowledge-after-plan`` and the rest.
- ``handbook-mid-write``: after each handbook file a write replaced (``:N``: N files
  written, the rest and ``handbook.json`` not; the ``.writing`` plan left behind).
"""

from __future__ import annotations

import os
import signal

ENV = "MUDSIM_CRASH_AT"


def _parse(value: str | None) -> tuple[str, int] | None:
    if not value:
        return None
    name, _, count = value.partition(":")
    try:
        return name, max(1, int(count)) if count else 1
    except ValueError:
        return name, 1


_TARGET = _parse(os.environ.get(ENV))
_passes: dict[str, int] = {}


def armed(name: str) -> bool:
    """Whether ``MUDSIM_CRASH_AT`` names this point: for a point that must first set up
    what a kill there leaves behind (half a journal line) before it calls ``crash_point``."""
    return _TARGET is not None and _TARGET[0] == name


def crash_point(name: str) -> None:
    """SIGKILL this process if ``MUDSIM_CRASH_AT`` names this point (and pass count)."""
    if _TARGET is None or _TARGET[0] != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] >= _TARGET[1]:
        os.kill(os.getpid(), signal.SIGKILL)
