"""The memory gate: agents wait while a character's memory is too far behind.

    gate = MemoryGate(sim.minds)
    async with gate.turn(mind) as hold:  # one agent turn
        llm = gate.counting(llm, mind)   # what its calls queue behind compactions counts
        await hold()                     # before it asks the model, and again
        ...                              # before its command runs
    gate.changed()                       # a compaction committed: held turns look again

The rule is ``engine.memory.backpressure``: while any character is behind, an agent
turn neither asks the model nor runs its command. Its command is the only way a turn
makes memories, so a crowd can push nobody past its limit; meanwhile the compactions of
those falling behind go first in the dispatcher's queue (``urgent``).

A hold lasts at most ``HOLD_LIMIT`` seconds (a summarizer that hangs holds nobody for
ever: the memory bound keeps everyone within it without the model, by extractive
summaries), and nobody is held while the summarizer is failing (``compacting``). A
turn that waited counts once on its agent's ``held_for_memory`` (turns, and the
seconds it waited), which the memory state keeps in the vault. The seconds are read
from ``engine.wallclock``, so a replay stamps them as the run did; a replay of a run
recorded before the gate existed turns it off (``enabled``).

A turn also waits for memory when it is not held: its call waits in the dispatcher's
queue while urgent compactions go first (``engine.llm.fair_queue``). The dispatcher
says how long such a call queued (``Generation.memory_wait``: all it queued, on the
dispatcher's clock, when an urgent request went before it), and ``counting`` adds it to
the agent's ``held_for_memory`` (``queued_turns``, each turn once, and
``queued_seconds``). The run record keeps each call's figure (``memory_wait_s`` in
``calls.jsonl``) and a replay's tape serves it back, so a replay, whose own queue is
never full, counts what the run counted. (The wall clock cannot time these: when a call
queues is not a moment a replay repeats, so its draws would not line up.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from engine import wallclock
from engine.errors import LLMError
from engine.memory.backpressure import behind, limit, urgent

if TYPE_CHECKING:
    from engine.agents.memory import MemoryStream
    from engine.agents.thinker import Generator
    from engine.llm.request import Generation, LLMRequest

Hold = Callable[[], Awaitable[None]]
"""Waits while any character is behind (returns at once when none is)."""


HOLD_LIMIT = 30.0
"""Seconds a turn waits for memory at most, however long a summary takes (then it goes
on: the memory bound keeps every character within it without the model)."""


class MemoryGate:
    def __init__(
        self, minds: Mapping[str, MemoryStream], compacting: Callable[[], bool] = lambda: True,
        *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:  # fmt: skip
        self.minds = minds
        self.compacting = compacting
        """Whether the summarizer is making summaries now (no LLM for them, or one that
        is failing: nobody waits, or the agents would wait for ever)."""
        self.sleep = sleep
        """How a hold's limit is waited (the run record's: its end takes its place)."""
        self.holding: set[asyncio.Task[object]] = set()
        """The turns waiting for memory now (a stop cancels them at once: they cannot
        run while memory is behind)."""
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
        """Whether any agent's memory holds the agents now (looked at twice a turn: kept
        lean). A player's never does: a person typing fast would keep it behind whatever
        the agents did, and the memory bound holds it without them."""
        if not self.enabled or not self.compacting():
            return False
        for mind in self.minds.values():
            if mind.character.type == "agent" and mind.count - mind.boundary >= limit(
                mind.windows, "agent"
            ):
                return True
        return False

    def lagging(self) -> list[MemoryStream]:
        """The agents whose memory holds the agents now."""
        return [m for m in self.minds.values() if m.character.type == "agent" and self.behind(m)]

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
            task = asyncio.current_task()
            if task is not None:
                self.holding.add(task)
            try:
                await self._wait_while_behind()
            finally:
                self.waiting -= 1
                self.holding.discard(task)
                waited.append(max(0.0, (wallclock.now() - since).total_seconds()))

        try:
            yield hold
        finally:
            if waited:
                mind.held_turns += 1
                mind.held_seconds += sum(waited)

    def counting(self, llm: Generator, mind: MemoryStream) -> Generator:
        """``llm`` for one turn of ``mind``'s agent: what its calls waited in the queue
        behind urgent compactions is counted on ``mind``'s ``held_for_memory`` (the turn
        once, the seconds of every call), failed calls included."""
        return _Counting(llm, mind)

    async def _wait_while_behind(self) -> None:
        """Until nobody is behind, or ``HOLD_LIMIT`` seconds (``sleep``) have passed."""
        limit = asyncio.ensure_future(self.sleep(HOLD_LIMIT))
        loop = asyncio.get_running_loop()
        try:
            while self.anyone_behind() and not limit.done():
                if self._wake is None:  # made now, not a loop step later: no change is lost
                    self._wake = loop.create_future()
                change = asyncio.shield(self._wake)
                try:
                    await asyncio.wait({change, limit}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    change.cancel()  # (the shield's, not the shared wake's)
        finally:
            limit.cancel()


class _Counting:
    """One turn's calls, with what they queued behind urgent compactions counted."""

    def __init__(self, llm: Generator, mind: MemoryStream) -> None:
        self.llm, self.mind = llm, mind
        self.counted = False
        """This turn is already one of ``mind.queued_turns``."""

    async def generate(self, request: LLMRequest) -> Generation:
        try:
            generation = await self.llm.generate(request)
        except LLMError as exc:
            self._count(exc.memory_wait)
            raise
        self._count(generation.memory_wait)
        return generation

    def _count(self, seconds: float) -> None:
        if seconds <= 0:
            return
        if not self.counted:
            self.counted = True
            self.mind.queued_turns += 1
        self.mind.queued_seconds += seconds
