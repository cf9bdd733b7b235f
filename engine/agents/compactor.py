"""Memory compaction: the waterfall of DESIGN.md, run in the background per character.

After each memory, ``poke`` checks the rule (M - b > I + R); when a chunk is due and
no compaction of that character is in flight, a worker task starts. A compaction of
the chunk [b, b + R):

1. if a short-term summary S exists and the long-term L does not yet cover it,
   L <- LLM(merge L and S) (if there is no L, L <- S with no call);
2. S <- LLM(summary of the chunk's memories only);
3. L, S and b + R are committed together (``MemoryStream.commit``; the vault's
   recent.md is the commit point).

Either call failing (an error, or an empty reply) commits nothing: the chunk is tried
again after 1 s, 2 s, 4 s ... up to 60 s, for as long as the run lasts, and every
failed attempt counts in ``failures``. The character keeps acting meanwhile. After a
commit the worker goes on at once while the rule still holds (catching up a backlog).

``force`` is ``@compact-memories``: compact [b, M - I) in chunks of at most R, after
whatever is in flight. ``drain`` ends a run: workers mid-call get a bounded wait,
workers waiting to retry stop; what is left stays pending for the next run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.agents.memory import MemoryStream
from engine.agents.thinker import Generator
from engine.errors import LLMError, LLMResponseError, VaultError
from engine.llm.request import LLMRequest, Priority
from engine.memory.record import utc_now
from engine.memory.summary_prompts import chunk_prompt, clean_summary, merge_prompt
from engine.memory.waterfall import Chunk, compaction_due, forced_target, next_chunk
from engine.vault.summaries import Summary


@dataclass
class _Worker:
    mind: MemoryStream
    task: asyncio.Task[None]
    target: int | None = None
    """A forced compaction's end (exclusive), or None for the automatic rule only."""
    calling: bool = False
    """True while an LLM call is in progress (``drain`` waits only for those)."""


@dataclass
class Compactor:
    llm: Generator | None
    """None when this session has no LLM: compactions stay pending."""
    models: Mapping[str, str]
    """Character id -> the summarizer model."""
    options: Mapping[str, Any]
    save_state: Callable[[MemoryStream], None]
    retry: bool = True
    """False (``mudsim do``): a failed chunk stays pending instead of being retried."""
    first_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], Any] = asyncio.sleep
    workers: dict[str, _Worker] = field(default_factory=dict)
    stopping: bool = False
    last_failure: str | None = None
    """The last failed attempt's error, for any character."""

    def poke(self, mind: MemoryStream) -> None:
        """Start a worker if the rule says a chunk is due and none is in flight."""
        if self.llm is None or self.stopping or mind.character.id in self.workers:
            return
        if compaction_due(mind.count, mind.boundary, mind.windows):
            self._start(mind, None)

    def force(self, mind: MemoryStream) -> str:
        """``@compact-memories``: what will be compacted, as one sentence."""
        target = forced_target(mind.count, mind.boundary, mind.windows)
        if target is None:
            waiting = mind.count - mind.boundary
            return (
                f"Nothing to compact for {mind.character.name}: {waiting} memories are past "
                f"the boundary (#{mind.boundary}), and the newest {mind.windows.immediate} "
                "always stay word for word."
            )
        if self.llm is None:
            return (
                f"{mind.character.name}'s memories #{mind.boundary}-#{target - 1} cannot be "
                "compacted now: this session has no language model. They will be next run."
            )
        chunks = -(-(target - mind.boundary) // mind.windows.recent)
        worker = self.workers.get(mind.character.id)
        if worker is not None:
            worker.target = max(worker.target or 0, target)
            after = " after the compaction already in flight"
        else:
            self._start(mind, target)
            after = ""
        return (
            f"Compacting {mind.character.name}'s memories #{mind.boundary}-#{target - 1} "
            f"in {chunks} chunk{'s' if chunks != 1 else ''} of at most "
            f"{mind.windows.recent}{after}; the newest {mind.windows.immediate} stay word for word."
        )

    def _start(self, mind: MemoryStream, target: int | None) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (e.g. the play REPL): it stays pending
        key = mind.character.id
        mind.in_flight = True
        self.workers[key] = _Worker(mind, loop.create_task(self._work(mind)), target)

    async def _work(self, mind: MemoryStream) -> None:
        worker = self.workers[mind.character.id]
        delay = self.first_delay
        self.save_state(mind)  # in flight: `mudsim status` can see it
        try:
            while not self.stopping:
                chunk = next_chunk(mind.count, mind.boundary, mind.windows, worker.target)
                if chunk is None:
                    break
                try:
                    worker.calling = True
                    await self._compact(mind, chunk)
                except (LLMError, VaultError) as exc:
                    mind.failures += 1
                    mind.last_error = self.last_failure = str(exc)
                    self.save_state(mind)
                    worker.calling = False
                    if not self.retry:
                        break
                    await self.sleep(delay)
                    delay = min(delay * 2, self.max_delay)
                else:
                    delay = self.first_delay
                finally:
                    worker.calling = False
        finally:
            mind.in_flight = False
            self.workers.pop(mind.character.id, None)
            self.save_state(mind)

    async def _compact(self, mind: MemoryStream, chunk: Chunk) -> None:
        name = mind.character.name
        old = mind.summaries
        longterm = old.longterm
        if old.recent is not None and old.merge_needed():
            if longterm is None:
                text = old.recent.text
            else:
                text = await self._ask(mind, merge_prompt(name, longterm.text, old.recent.text))
            longterm = Summary(text, 0, old.recent.covers_to, mind.count, utc_now())
        start, end = chunk
        memories = [memory.text for memory in mind.memories(start, end)]
        text = await self._ask(mind, chunk_prompt(name, memories))
        mind.commit(longterm, Summary(text, start, end, mind.count, utc_now()))
        mind.last_error = None
        self.save_state(mind)

    async def _ask(self, mind: MemoryStream, prompt: str) -> str:
        assert self.llm is not None
        request = LLMRequest(
            prompt=lambda: prompt,
            model=self.models.get(mind.character.id, ""),
            options=self.options,
            agent=mind.character.name,
            role="summarizer",
            priority=Priority.SUMMARY,
        )
        reply = clean_summary((await self.llm.generate(request)).text)
        if reply is None:
            raise LLMResponseError("the summarizer's reply was empty")
        return reply

    async def settle(self, within: float = 30.0) -> None:
        """Let the workers finish what is due (at most ``within`` s), then stop them."""
        tasks = [worker.task for worker in self.workers.values()]
        if tasks:
            await asyncio.wait(tasks, timeout=within)
        await self.drain(0)
        self.stopping = False  # what is due from now on may start again

    async def drain(self, grace: float = 30.0) -> None:
        """Stop starting chunks, wait ``grace`` s for calls in progress, stop the rest
        (what is left stays pending: the rule fires again on the next load)."""
        self.stopping = True
        workers = list(self.workers.values())
        waiting = [w.task for w in workers if not w.calling]
        for task in waiting:
            task.cancel()
        calling = [w.task for w in workers if w.calling]
        if calling:
            _, late = await asyncio.wait(calling, timeout=grace)
            for task in late:
                task.cancel()
        for worker in workers:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(worker.task, return_exceptions=True)
            if worker.mind.in_flight:  # cancelled before it ever ran
                worker.mind.in_flight = False
                self.workers.pop(worker.mind.character.id, None)
                self.save_state(worker.mind)
