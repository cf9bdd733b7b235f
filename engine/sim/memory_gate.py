"""The memory gate: agents wait while a character's memory is too far behind.

    gate = MemoryGate(sim.minds)
    async with gate.turn(mind) as hold:  # one agent turn
        await hold()                     # before it asks the model, and again
        ...                              # before its command runs
    gate.changed()                       # a compaction committed: held turns look again

The rule is ``engine.memory.backpressure``: while any character is behind, an agent
turn neither asks the model nor runs its command. Its command is the only way a turn
makes memories, so a crowd can push nobody past its limit; meanwhile the compactions of
those falling behind go first in the dispatcher's queue (``urgent``).

A turn that waited counts once on its agent's ``held_for_memory`` (turns, and the
seconds it waited), which the memory state keeps in the vault. The seconds are read
from ``engine.wallclock``, so a replay stamps them as the run did; a replay of a run
recorded before the gate existed turns it off (``enabled``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from engine import wallclock
from engine.memory.backpressure import behind, limit, urgent

if TYPE_CHECKING:
    from engine.agents.memory import MemoryStream

Hold = Callable[[], Awaitable[None]]
"""Waits while any character is behind (returns at once when none is)."""


class MemoryGate:
    def __init__(
        self, minds: Mapping[str, MemoryStream], compacting: Callable[[], bool] = lambda: True
    ) -> None:
        self.minds = minds
        self.compacting = compacting
        """Whether summaries are being made at all (no LLM for them: nobody waits, or the
        agents would wait for ever)."""
        self.enabled = True
        """False: back-pressure is off, turns never wait and no compaction is urgent (a
        replay of a run recorded before the gate existed)."""
        self.waiting = 0
        """Turns waiting for memory now."""
        self._wake: asyncio.Future[None] | None = None

    def behind(self, mind: MemoryStream) -> bool:
        """``mind``'s memory is too far behind: agents wait, its compaction goes first."""
        return (
            self.enabled
            and self.compacting()
            and behind(mind.count, mind.boundary, mind.windows, mind.character.type)
        )

    def urgent(self, mind: MemoryStream) -> bool:
        """``mind``'s compaction requests go before every turn request (from halfway to
        being behind, so that memory mostly keeps up before anyone must wait)."""
        return self.enabled and urgent(mind.count, mind.boundary, mind.windows, mind.character.type)

    def anyone_behind(self) -> bool:
        """Whether any character holds the agents now (looked at twice a turn: kept lean)."""
        if not self.enabled or not self.compacting():
            return False
        for mind in self.minds.values():
            if mind.count - mind.boundary >= limit(mind.windows, mind.character.type):
                return True
        return False

    def lagging(self) -> list[MemoryStream]:
        """The characters whose memory holds the agents now."""
        return [mind for mind in self.minds.values() if self.behind(mind)]

    def changed(self) -> None:
        """A compaction committed: every waiting turn looks again."""
        wake, self._wake = self._wake, None
        if wake is not None and not wake.done():
            wake.set_result(None)

    @asynccontextmanager
    async def turn(self, mind: MemoryStream) -> AsyncIterator[Hold]:
        """One turn of ``mind``'s agent: its ``hold``, and what it waited counted on its
        ``held_for_memory`` when the turn ends (however it ends)."""
        waited: list[float] = []

        async def hold() -> None:
            if not self.anyone_behind():
                return
            since = wallclock.now()
            self.waiting += 1
            try:
                while self.anyone_behind():
                    await self._next_change()
            finally:
                self.waiting -= 1
                waited.append(max(0.0, (wallclock.now() - since).total_seconds()))

        try:
            yield hold
        finally:
            if waited:
                mind.held_turns += 1
                mind.held_seconds += sum(waited)

    async def _next_change(self) -> None:
        if self._wake is None:
            self._wake = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._wake)
