"""Memory compaction: the waterfall of DESIGN.md, run in the background per character.

After each memory, ``poke`` checks the rule (M - b > I + R); when a chunk is due and
no compaction of that character is in flight, a worker task starts, owned by the
``Supervisor``. A compaction of the chunk [b, b + R):

1. if a short-term summary S exists and the long-term L does not yet cover it,
   L <- LLM(merge L and S) (if there is no L, L <- S with no call);
2. S <- LLM(summary of the chunk's memories only);
3. L, S and b + R are committed together (``MemoryStream.commit``; the vault's
   recent.md is the commit point), both with ``memory_count`` = M at that moment.

With ``warm`` set (the embedded model, whose prefix cache keeps evaluated prompts), the
worker's last chunk asks for the agent's prompt as it will read after the commit (one
token, in the background) just before committing: the new summary changes the prompt
near its start, and this way the agent's next turn, which sees the commit, finds that
prompt already evaluated instead of paying for it. A failed warm is logged and changes
nothing; a cancelled one (a run's end past its grace) still commits.

Every reply goes through the quality gate (``engine.memory.summary_quality``): an
empty reply, an echo of the instructions, a refusal, a reply cut off by the token
limit or a loop is rejected. After ``MAX_REJECTIONS`` rejected replies for the same
step (the chunk starting at b, or the merge of the current S), that step no longer
asks the model: it is done extractively (``engine.memory.extractive``, within the
same length budget) and marked ``method: extractive``. A merge that passed is kept
while the chunk after it is retried, so it is not asked for twice.

An attempt fails on any exception (an LLM error, a vault or disk error, a bug) or a
rejection: nothing is committed, ``failures`` grows by one, ``last_error`` says why
(and stays after a later success: failures > 0 always comes with a reason), and the
chunk is tried again after 1 s, 2 s, 4 s ... (with jitter, at most 60 s), for as long
as the run lasts; the worker stays alive meanwhile, so new memories never start
another attempt. Errors that are not an LLM, vault or gate failure are also reported
to the supervisor (the run log, with the traceback). A worker's ``in_flight`` mark is
removed when its task ends, however it ends, even when it was cancelled before it ran.

``force`` is ``@compact-memories``: compact [b, M - I) in chunks of at most R, after
whatever is in flight. ``drain`` ends a run: workers mid-call get a bounded wait,
workers waiting to retry stop; what is left stays pending for the next run.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from engine.agents.memory import MemoryStream
from engine.agents.supervisor import Supervisor, one_line
from engine.agents.thinker import Generator
from engine.errors import LLMError, LLMResponseError, VaultError
from engine.llm.request import LLMRequest, Priority
from engine.memory.extractive import extractive_merge, extractive_summary
from engine.memory.record import utc_now
from engine.memory.summary_grammar import summary_constraint, unwrap_summary
from engine.memory.summary_prompts import chunk_prompt, merge_prompt, summary_budget
from engine.memory.summary_quality import judge_summary
from engine.memory.waterfall import Chunk, compaction_due, forced_target, next_chunk
from engine.vault.summaries import Method, Summary

MAX_REJECTIONS: Final = 3
"""Rejected replies for one step before it is done extractively."""

_log = logging.getLogger("mudsim.compaction")


def log_error(message: str, exc: BaseException) -> None:
    """The default report: the ``mudsim`` log, with the traceback."""
    _log.error("%s", message, exc_info=exc)


class SummaryRejectedError(LLMResponseError):
    """The summarizer answered, but not with a summary (the quality gate said no)."""


@dataclass
class CompactionTally:
    """What this session's compactions did, for the run summary."""

    committed: int = 0
    failed: int = 0
    """Failed attempts, of every kind (rejections included)."""
    rejected: int = 0
    """Replies the quality gate rejected."""
    extractive: int = 0
    """Summaries (of a chunk, or merged) made without the model."""


@dataclass
class _Step:
    """Rejections so far for one step of one character's next compaction."""

    at: int
    """Where the step is: a chunk's start, or the end of the S a merge folds in."""
    rejections: int = 0


@dataclass
class _Worker:
    mind: MemoryStream
    task: asyncio.Task[None] | None = None
    target: int | None = None
    """A forced compaction's end (exclusive), or None for the automatic rule only."""
    calling: bool = False
    """True while an LLM call is in progress (``drain`` waits only for those)."""


@dataclass
class _Pending:
    """A character's progress on its next commit, kept across failed attempts."""

    steps: dict[str, _Step] = field(default_factory=dict)
    """"chunk" / "merge" -> its rejections."""
    merged: tuple[int, str, Method] | None = None
    """A merge that passed: (S's end, L's text, how it was made)."""


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
    constrain: bool | None = None
    """The summarizer profile's ``constrain``: decode under ``summary_grammar`` (unset:
    the backend's default, on for the embedded model and small Ollama models)."""
    first_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], Any] = asyncio.sleep
    jitter: Callable[[], float] = random.random
    """A number in [0, 1): each backoff is between half and all of its delay."""
    warm: Callable[[MemoryStream, Callable[[], MemoryStream]], Awaitable[None]] | None = None
    """Called with the character's stream and a view of it as it will be after the
    commit, just before a worker's last commit (its wait counted as a call in
    progress): the embedded model evaluates the prompt the next turn will send, since a
    new summary changes the prompt near its start. A failure is logged and changes
    nothing."""
    supervisor: Supervisor = field(default_factory=lambda: Supervisor(log_error))
    """Owns the worker tasks; unexpected errors go to its report."""
    workers: dict[str, _Worker] = field(default_factory=dict)
    stopping: bool = False
    last_failure: str | None = None
    """The last failed attempt's error, for any character."""
    tally: CompactionTally = field(default_factory=CompactionTally)
    _pending: dict[str, _Pending] = field(default_factory=dict)

    @property
    def calls_in_flight(self) -> int:
        """Compactions whose summarizer call is in progress now (what ``drain`` waits for)."""
        return sum(1 for worker in self.workers.values() if worker.calling)

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

    # -- the worker ----------------------------------------------------------------------
    def _start(self, mind: MemoryStream, target: int | None) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (e.g. the play REPL): it stays pending
        key = mind.character.id
        worker = _Worker(mind, target=target)
        mind.in_flight = True
        self.workers[key] = worker
        worker.task = self.supervisor.spawn(
            self._work(worker), name=f"memory compaction of {mind.character.name}"
        )
        worker.task.add_done_callback(lambda _: self._ended(worker))

    def _ended(self, worker: _Worker) -> None:
        """A worker's task is over (done, failed, cancelled, or cancelled unstarted)."""
        mind = worker.mind
        current = self.workers.get(mind.character.id)
        if current is worker:
            del self.workers[mind.character.id]
            current = None
        if current is None and mind.in_flight:  # (not when a newer worker has started)
            mind.in_flight = False
            self._save_quietly(mind)

    async def _work(self, worker: _Worker) -> None:
        try:
            await self._attempts(worker)
        finally:  # at once, not a loop turn later (the done callback is for unstarted tasks)
            self._ended(worker)

    async def _attempts(self, worker: _Worker) -> None:
        mind = worker.mind
        failures_in_a_row = 0
        announced = False
        while not self.stopping:
            chunk = next_chunk(mind.count, mind.boundary, mind.windows, worker.target)
            if chunk is None:
                break
            try:
                if not announced:
                    self.save_state(mind)  # in flight: `mudsim status` can see it
                    announced = True
                await self._compact(worker, chunk)
            except Exception as exc:  # every failure counts; a cancellation is no failure
                self._failed(mind, chunk, exc)
                if not self.retry:
                    break
                await self.sleep(self.backoff(failures_in_a_row))
                failures_in_a_row += 1
            else:
                failures_in_a_row = 0

    async def _warm(self, worker: _Worker, after: Callable[[], MemoryStream]) -> None:
        """Evaluate the prompt ``after`` reads as (a run's end waits for it, so the
        prefix states saved at close hold what the next start asks for)."""
        assert self.warm is not None
        worker.calling = True
        try:
            await self.warm(worker.mind, after)
        except Exception as exc:  # only a cache is lost
            _log.warning("the prompt of %s was not evaluated ahead: %s",
                        worker.mind.character.name, one_line(exc))  # fmt: skip
        finally:
            worker.calling = False

    def _last_chunk(self, worker: _Worker, end: int) -> bool:
        """No other chunk follows the one ending at ``end`` (so its commit is the one
        the agent's next turns will see)."""
        mind = worker.mind
        return next_chunk(mind.count, end, mind.windows, worker.target) is None

    def backoff(self, failures_in_a_row: int) -> float:
        """Seconds to wait after the (n+1)-th failure in a row: ``first_delay`` * 2**n,
        at most ``max_delay``, times a jitter between 1/2 and 1."""
        delay = min(self.max_delay, self.first_delay * 2.0 ** min(failures_in_a_row, 32))
        return delay * (0.5 + 0.5 * self.jitter())

    def _failed(self, mind: MemoryStream, chunk: Chunk, exc: Exception) -> None:
        if isinstance(exc, SummaryRejectedError):
            reason = str(exc)
        elif isinstance(exc, LLMError | VaultError):
            reason = one_line(exc)
        else:
            reason = f"{type(exc).__name__}: {one_line(exc)}"
            if reason != mind.last_error:  # a bug or a disk error: the log gets the traceback
                self.supervisor.report(
                    f"memory compaction of {mind.character.name} failed: {reason}", exc
                )
        mind.failures += 1
        mind.last_error = self.last_failure = reason
        self.tally.failed += 1
        self._save_quietly(mind)

    def _save_quietly(self, mind: MemoryStream) -> None:
        """Save the state; a failure is reported, never raised (the worker must go on)."""
        try:
            self.save_state(mind)
        except Exception as exc:
            self.supervisor.report(
                f"the memory state of {mind.character.name} could not be saved: {one_line(exc)}",
                exc,
            )

    # -- one attempt -----------------------------------------------------------------------
    async def _compact(self, worker: _Worker, chunk: Chunk) -> None:
        mind = worker.mind
        pending = self._pending.setdefault(mind.character.id, _Pending())
        old = mind.summaries
        merged: tuple[str, Method] | None = None
        if old.recent is not None and old.merge_needed():
            if old.longterm is None:
                merged = (old.recent.text, old.recent.method)
            else:
                merged = await self._merge(worker, pending, old.longterm, old.recent)
        start, end = chunk
        records = mind.memories(start, end)
        memories = [memory.text for memory in records]
        text, method = await self._summarize(worker, pending, chunk, memories)
        sim = next((m.sim for m in reversed(records) if m.sim), None)
        rooms = tuple(
            r for r, _ in Counter(m.location for m in records if m.location).most_common()
        )

        def summaries(count: int, now: str) -> tuple[Summary | None, Summary]:
            longterm = old.longterm
            if merged is not None and old.recent is not None:
                longterm = Summary(merged[0], 0, old.recent.covers_to, count, now, merged[1])
            return longterm, Summary(text, start, end, count, now, method, sim, rooms)

        def commit() -> None:
            mind.commit(*summaries(mind.count, utc_now()))  # M at the commit, for both
            self._pending.pop(mind.character.id, None)
            self.tally.committed += 1
            self.tally.extractive += method == "extractive"
            if merged is not None and merged[1] == "extractive" and old.longterm is not None:
                self.tally.extractive += 1  # an extractive merge (not L <- S, a copy)
            self.save_state(mind)

        def after() -> MemoryStream:  # what the next turn reads (only the texts matter)
            return mind.as_committed(*summaries(0, ""))

        if self.warm is not None and self._last_chunk(worker, end):
            try:
                await self._warm(worker, after)
            except asyncio.CancelledError:  # a run's end past its grace: the summaries stand
                try:
                    commit()
                except Exception as exc:
                    self._failed(mind, chunk, exc)
                raise
        commit()

    async def _merge(
        self, worker: _Worker, pending: _Pending, longterm: Summary, recent: Summary
    ) -> tuple[str, Method]:
        if pending.merged is not None and pending.merged[0] == recent.covers_to:
            return pending.merged[1], pending.merged[2]
        step = _step(pending, "merge", recent.covers_to)
        if step.rejections >= MAX_REJECTIONS:
            text = extractive_merge(longterm.text, recent.text, summary_budget(self.options))
            method: Method = "extractive"
        else:
            name = worker.mind.character.name
            prompt = merge_prompt(name, longterm.text, recent.text)
            text = await self._ask(worker, prompt, step, "merge into the long-term summary",
                                   purpose="merge")  # fmt: skip
            method = "llm"
        pending.merged = (recent.covers_to, text, method)
        return text, method

    async def _summarize(
        self, worker: _Worker, pending: _Pending, chunk: Chunk, memories: list[str]
    ) -> tuple[str, Method]:
        start, end = chunk
        step = _step(pending, "chunk", start)
        if step.rejections >= MAX_REJECTIONS:
            return extractive_summary(memories, summary_budget(self.options)), "extractive"
        prompt = chunk_prompt(worker.mind.character.name, memories)
        what = f"summary of #{start}-#{end - 1}"
        return await self._ask(worker, prompt, step, what, purpose="summary"), "llm"

    async def _ask(
        self, worker: _Worker, prompt: str, step: _Step, what: str, *, purpose: str
    ) -> str:
        assert self.llm is not None
        mind = worker.mind
        request = LLMRequest(
            prompt=lambda: prompt,
            model=self.models.get(mind.character.id, ""),
            options=self.options,
            agent=mind.character.name,
            role="summarizer",
            purpose=purpose,
            priority=Priority.SUMMARY,
            # an agent's next prompts wait for its summaries; a player's prompt is a
            # person: its summaries take the slots turns leave free, never a turn's
            ages=mind.character.type == "agent",
            constraint=summary_constraint,
            constrain=self.constrain,
        )
        worker.calling = True
        try:
            reply = await self.llm.generate(request)
        finally:
            worker.calling = False
        text = unwrap_summary(reply.text)
        verdict = judge_summary(text, prompt, truncated=reply.truncated)
        if verdict.summary is None:
            step.rejections += 1
            self.tally.rejected += 1
            raise SummaryRejectedError(f"{what} rejected: {verdict.problem}")
        return verdict.summary

    # -- settling and stopping ------------------------------------------------------------
    async def settle(self, within: float = 30.0) -> None:
        """Let the workers finish what is due (at most ``within`` s), then stop them."""
        await self.supervisor.wait(within)
        await self.drain(0)
        self.stopping = False  # what is due from now on may start again

    def cut(self) -> None:
        """Stop every worker now (what is left stays pending, as after ``drain``)."""
        for worker in self.workers.values():
            if worker.task is not None:
                worker.task.cancel()

    async def drain(self, grace: float | None = 30.0) -> None:
        """Stop starting chunks, wait ``grace`` s (None: no limit) for calls in progress,
        stop the rest (what is left stays pending: the rule fires again on the next load). A
        cancellation of the caller is passed on to every worker, then re-raised."""
        self.stopping = True
        workers = list(self.workers.values())
        tasks = [w.task for w in workers if w.task is not None]
        try:
            for worker in workers:
                if worker.task is not None and not worker.calling:
                    worker.task.cancel()
            calling = [w.task for w in workers if w.task is not None and w.calling]
            if calling:
                _, late = await asyncio.wait(calling, timeout=grace)
                for task in late:
                    task.cancel()
            if tasks:
                await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise


def _step(pending: _Pending, kind: str, at: int) -> _Step:
    """The rejections of this step so far (a new count when the step moved on)."""
    step = pending.steps.get(kind)
    if step is None or step.at != at:
        step = pending.steps[kind] = _Step(at)
    return step
