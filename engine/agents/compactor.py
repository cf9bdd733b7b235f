"""Memory compaction: the waterfall of DESIGN.md, run in the background per character
(``docs/explanation/waterfall.md`` says it for people).

After each memory, ``poke`` keeps the memory bound (a memory that would take a character
past ``backpressure.bound`` commits the due chunk extractively at once: no call, no
wait; ``engine.memory.outrun``) and checks the rule (M - b > I + R): when a chunk is due
and no compaction of that character is in flight, a worker task starts, owned by the
``Supervisor``. A compaction of the chunk [b, b + R) merges S into L (L <- S with no call
when there is no L) and summarizes the chunk, side by side, each step asked, judged and
given its fallbacks in ``engine.agents.summary_steps``; then L, S and b + R are committed
together (``MemoryStream.commit``). A step that passed is kept while the other is
retried. A model's summary of a chunk the bound committed meanwhile upgrades it
(``compaction_commit.upgrade``). With ``warm`` set (the embedded model's prefix cache),
the last chunk's commit is preceded by evaluating the prompt the next turn will send.

An attempt fails on any exception or a rejection: nothing is committed, ``failures``
grows, ``last_error`` says why. A rejection is asked again at once (at most
``MAX_REJECTIONS`` a step, then the step is extractive); a server's failure counts
against the summarizer (``engine.memory.summarizer_health``: said at once, extractive
after ``FAILING_AFTER`` in a row) and is tried again after 1 s, 2 s, 4 s ... (jitter, at
most 60 s). ``force`` is ``@compact-memories``; ``drain`` ends a run (workers mid-call get
a bounded wait, the rest stays pending for the next run).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from engine import wallclock
from engine.agents import compaction_commit
from engine.agents.compaction_commit import Made, compose, made_at_once, trusted_older
from engine.agents.memory import MemoryStream, happened
from engine.agents.summary_steps import (
    MAX_REJECTIONS,
    CompactionTally,
    SummaryRejectedError,
    SummarySteps,
    extractive_budget,
)
from engine.agents.supervisor import Supervisor, one_line
from engine.agents.thinker import Generator
from engine.errors import LLMError, VaultError, about_the_request
from engine.memory.backpressure import bound
from engine.memory.outrun import Outruns
from engine.memory.record import utc_now
from engine.memory.summarizer_health import SummarizerHealth
from engine.memory.waterfall import Chunk, compaction_due, due_chunk, forced_target, next_chunk

__all__ = ["MAX_REJECTIONS", "CompactionTally", "Compactor", "SummaryRejectedError"]

_log = logging.getLogger("mudsim.compaction")


def log_error(message: str, exc: BaseException) -> None:
    """The default report: the ``mudsim`` log, with the traceback."""
    _log.error("%s", message, exc_info=exc)


def _server_failure(exc: Exception) -> bool:
    """The summarizer's server failed (5xx, a timeout, no connection), as opposed to a
    reply the gate rejected or a request the model refused."""
    return (
        isinstance(exc, LLMError)
        and not isinstance(exc, SummaryRejectedError)
        and not about_the_request(exc)
    )


@dataclass
class _Worker:
    mind: MemoryStream
    task: asyncio.Task[None] | None = None
    target: int | None = None
    """A forced compaction's end (exclusive), or None for the automatic rule only."""
    calling: int = 0
    """LLM calls in progress (``drain`` waits only for workers with some)."""
    attempt: asyncio.Future[Any] | None = None
    """The calls of the attempt in progress, and the chunk they are for (the bound
    cancels them when it has committed that chunk at once and will again)."""
    attempt_chunk: Chunk | None = None


@dataclass
class _Pending:
    """A character's progress on its next commit, kept across failed attempts."""

    merged: tuple[int, Made] | None = None
    """A merge that passed: (S's end, L)."""
    summarized: tuple[Chunk, Made] | None = None
    """A chunk's summary that passed: (the chunk, S)."""


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
    summary_chars: int | None = None
    """The most characters a summary may have: what the agent's prompt shows whole (the
    actor profile's ``summary_tokens``); None: no limit but ``num_predict``."""
    urgent: Callable[[MemoryStream], bool] = lambda mind: False
    """The character's memory is falling behind (``MemoryGate.urgent``): its requests go
    before every turn request."""
    committed: Callable[[MemoryStream], None] | None = None
    """Told after every commit (the memory gate lets held turns go)."""
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
    names: Callable[[MemoryStream], Sequence[str]] = lambda mind: ()
    """What a character's summaries may name besides its memories (its profile, the
    world's rooms, objects and people): the gate's grounding."""
    players: Literal["llm", "extractive"] = "llm"
    """How players' summaries are made: by the model, or extractively at once (a
    served world's default: connected players cost no model calls)."""
    bounded: bool = True
    """The memory bound commits extractively at once (off: a replay of a run recorded
    before it existed)."""
    notice: Callable[[str], None] = lambda line: _log.warning("%s", line)
    """Hears, as one line, when summaries start failing, fall back, answer again."""
    note: Callable[..., None] = lambda kind, **data: None
    """The run record's event (an upgrade is on the record)."""
    now: Callable[[], datetime] = wallclock.now
    health: SummarizerHealth = field(default_factory=SummarizerHealth)
    workers: dict[str, _Worker] = field(default_factory=dict)
    stopping: bool = False
    last_failure: str | None = None
    """The last failed attempt's error, for any character."""
    tally: CompactionTally = field(default_factory=CompactionTally)
    _pending: dict[str, _Pending] = field(default_factory=dict)
    outruns: Outruns = field(default_factory=Outruns)
    """Whom the bound has had to commit at once (``engine.memory.outrun``)."""

    @property
    def calls_in_flight(self) -> int:
        """Compactions whose summarizer call is in progress now (what ``drain`` waits for)."""
        return sum(1 for worker in self.workers.values() if worker.calling > 0)

    def poke(self, mind: MemoryStream) -> None:
        """After a memory: commit at once what the bound cannot wait for; then start a
        worker if the rule says a chunk is due and none is in flight."""
        if self.bounded:
            self._commit_at_once(mind)
        if self.stopping or mind.character.id in self.workers:
            return
        if not compaction_due(mind.count, mind.boundary, mind.windows):
            return
        if self.llm is not None:
            self._start(mind, None)  # (an extractive-only character's makes no call)
        elif self.bounded and self.extractive_only(mind):
            self._commit_at_once(mind, anyway=True)

    def extractive_only(self, mind: MemoryStream) -> bool:
        """``mind``'s summaries are made extractively whenever they are due (a player's,
        by ``players``)."""
        return self.players == "extractive" and mind.character.type != "agent"

    def _commit_at_once(self, mind: MemoryStream, *, anyway: bool = False) -> None:
        """Commit due chunks extractively, now, while ``mind`` is past its bound (or, with
        ``anyway``, while any is due)."""
        limit = bound(mind.windows, mind.character.type)
        while mind.count - mind.boundary > limit or (
            anyway and compaction_due(mind.count, mind.boundary, mind.windows)
        ):
            chunk = due_chunk(mind.count, mind.boundary, mind.windows)
            if chunk is None:
                return
            try:
                merged, summarized = made_at_once(
                    mind, chunk, extractive_budget(self.options, self.summary_chars)
                )
                now = self.now()
                again = self.outruns.committed_at_once(mind.character.id, now)
                self._commit(mind, chunk, mind.memories(*chunk), merged, summarized)
            except Exception as exc:  # a disk error: said, and the bound waits for the next memory
                self._failed(mind, chunk, exc)
                return
            worker = self.workers.get(mind.character.id)
            if again and worker is not None and worker.attempt is not None:
                assert worker.attempt_chunk is not None
                if worker.attempt_chunk[0] < mind.boundary:  # outrun again: a call for a
                    worker.attempt.cancel()  # committed chunk would only hold turns up

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
        free = False  # the next try needs no model: made even while stopping (it costs nothing)
        while not self.stopping or free:
            chunk = next_chunk(mind.count, mind.boundary, mind.windows, worker.target)
            if chunk is None:
                break
            stopping, free = self.stopping, False
            try:
                if not announced:
                    self.save_state(mind)  # in flight: `mudsim status` can see it
                    announced = True
                await self._compact(worker, chunk, use_model=not stopping)
            except Exception as exc:  # every failure counts; a cancellation is no failure
                self._failed(mind, chunk, exc)
                if stopping:
                    break
                if _server_failure(exc):
                    said = self.health.failed(self.now(), one_line(exc))
                    if self.retry:  # (``do`` says what stays pending, once, at its end)
                        self._say(said)
                    if self.health.failing:
                        free = True
                        continue  # the next try needs no model
                if isinstance(exc, SummaryRejectedError) and exc.exhausted:
                    free = True
                    continue  # that step's next try needs no model
                if not self.retry:
                    break
                if isinstance(exc, SummaryRejectedError):
                    continue  # the model answered: ask again at once (at most three times)
                await self.sleep(self.backoff(failures_in_a_row))
                failures_in_a_row += 1
            else:
                failures_in_a_row = 0

    async def _warm(self, worker: _Worker, after: Callable[[], MemoryStream]) -> None:
        """Evaluate the prompt ``after`` reads as (a run's end waits for it, so the
        prefix states saved at close hold what the next start asks for)."""
        assert self.warm is not None
        worker.calling += 1
        try:
            await self.warm(worker.mind, after)
        except Exception as exc:  # only a cache is lost
            _log.warning("the prompt of %s was not evaluated ahead: %s",
                        worker.mind.character.name, one_line(exc))  # fmt: skip
        finally:
            worker.calling -= 1

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

    def _note(self, mind: MemoryStream) -> None:
        """``mind.summaries_note``: why its summaries are extractive now, if they are."""
        failing = self.health.describe()
        if failing is not None and self.retry:
            mind.summaries_note = failing
        elif self.outruns.maybe(mind.character.id) and self.outrun(mind, self.now()):
            mind.summaries_note = (
                "memories come faster than the summarizer folds them; writing extractive "
                "summaries as they fall due"
            )
        else:
            mind.summaries_note = None

    def _save_quietly(self, mind: MemoryStream) -> None:
        """Save the state; a failure is reported, never raised (the worker must go on)."""
        self._note(mind)
        try:
            self.save_state(mind)
        except Exception as exc:
            self.supervisor.report(
                f"the memory state of {mind.character.name} could not be saved: {one_line(exc)}",
                exc,
            )

    # -- one attempt -----------------------------------------------------------------------
    def _steps(self, mind: MemoryStream, use_model: bool) -> SummarySteps:
        assert self.llm is not None
        return SummarySteps(self.llm, self.models, self.options, self.constrain,
                            self.summary_chars, self._urgent, self.tally, names=self.names(mind),
                            use_model=use_model and self._use_model(mind),
                            answered=lambda: self._say(self.health.answered()))  # fmt: skip

    def outrun(self, mind: MemoryStream, now: datetime) -> bool:
        """The bound outruns the model for ``mind`` (``engine.memory.outrun``)."""
        return self.outruns.outrun(mind.character.id, now)

    def _urgent(self, mind: MemoryStream) -> bool:
        """``urgent``, but not for a character the bound had to commit at once: its
        summaries would mostly upgrade what is committed, and no turn should wait for
        that."""
        return not self.outruns.not_urgent(mind.character.id) and self.urgent(mind)

    def _use_model(self, mind: MemoryStream) -> bool:
        """Whether ``mind``'s next steps ask the model: not while the bound outruns it,
        nor while the summarizer fails (but for its try once a minute)."""
        if self.extractive_only(mind):
            return False
        if not self.outruns.maybe(mind.character.id) and not self.health.failing:
            return True  # (no clock reading: a replay's record stays as it was)
        now = self.now()
        return not self.outrun(mind, now) and self.health.use_model(now)

    def _say(self, line: str | None) -> None:
        if line:
            self.notice(line)

    async def _compact(self, worker: _Worker, chunk: Chunk, *, use_model: bool = True) -> None:
        mind = worker.mind
        pending = self._pending.setdefault(mind.character.id, _Pending())
        old = mind.summaries
        steps = self._steps(mind, use_model)
        start, end = chunk
        records = mind.memories(start, end)

        async def merge() -> Made | None:
            recent, longterm = old.recent, old.longterm
            if recent is None or not old.merge_needed():
                return None
            if longterm is None:
                return Made(recent.text, recent.method, recent.grounded)
            if pending.merged is None or pending.merged[0] != recent.covers_to:
                read = mind.memory_texts
                older = trusted_older(longterm, steps.budget, steps.names, read)
                sources = read(recent.covers_from, recent.covers_to)
                text, method = await steps.merge(worker, older, recent, sources)
                pending.merged = (recent.covers_to, Made(text, method))
            return pending.merged[1]

        async def summarize() -> Made:
            if pending.summarized is None or pending.summarized[0] != chunk:
                memories = happened(records)
                text, method = await steps.chunk(worker, chunk, memories)
                pending.summarized = (chunk, Made(text, method))
            return pending.summarized[1]

        # side by side: the merge reads the old L and S, the summary the chunk's memories
        attempt = asyncio.gather(merge(), summarize(), return_exceptions=True)
        worker.attempt, worker.attempt_chunk = attempt, chunk
        try:
            folded, summarized = await attempt
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if mind.boundary == start or (task is not None and task.cancelling()):
                raise  # the worker itself is cancelled
            self._pending.pop(mind.character.id, None)
            return  # the bound committed this chunk and cancelled its calls
        finally:
            worker.attempt = worker.attempt_chunk = None
        failures = [r for r in (folded, summarized) if isinstance(r, BaseException)]
        if mind.boundary != start:  # committed at once meanwhile: an upgrade, if any
            self._upgrade(mind, chunk, old.recent.covers_to if old.recent else None,
                          folded, summarized)  # fmt: skip
            if failures:
                raise failures[0]  # still a failed attempt, though nothing waits for it
            return
        if failures:  # an exhausted step first: its next try needs no model
            exhausted = [e for e in failures if isinstance(e, SummaryRejectedError) and e.exhausted]
            raise (exhausted or failures)[0]
        assert not isinstance(folded, BaseException)
        assert not isinstance(summarized, BaseException)
        merged, made = folded, summarized

        def commit() -> None:
            if mind.boundary != start:  # committed at once while the prompt was warmed
                self._upgrade(mind, chunk, old.recent.covers_to if old.recent else None,
                              merged, made)  # fmt: skip
                return
            self._commit(mind, chunk, records, merged, made)
            self.outruns.kept_up(mind.character.id)

        def after() -> MemoryStream:  # what the next turn reads (only the texts matter)
            return mind.as_committed(*compose(mind, chunk, records, merged, made, 0, ""))

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

    def _commit(self, mind: MemoryStream, chunk: Chunk, records: Any, merged: Made | None,
                made: Made) -> None:  # fmt: skip
        """Commit ``chunk``'s compaction (L from ``merged``, S from ``made``) now."""
        had_longterm = mind.summaries.longterm is not None
        mind.commit(*compose(mind, chunk, records, merged, made, mind.count, utc_now()))
        self._pending.pop(mind.character.id, None)
        mind.rejections.clear()
        self.tally.committed += 1
        self.tally.extractive += made.method == "extractive"
        if merged is not None and merged.method == "extractive" and had_longterm:
            self.tally.extractive += 1  # an extractive merge (not L <- S, a copy)
        self._note(mind)
        self.save_state(mind)
        if self.committed is not None:
            self.committed(mind)

    def _upgrade(self, mind: MemoryStream, chunk: Chunk, merged_over: int | None,
                 merged: object, made: object) -> None:  # fmt: skip
        """The model's summaries of a chunk committed at once meanwhile: upgrades."""
        self._pending.pop(mind.character.id, None)
        done = compaction_commit.upgrade(
            mind, chunk, merged_over, merged if isinstance(merged, Made) else None,
            made if isinstance(made, Made) else None,
        )  # fmt: skip
        for kind in done:
            self.tally.upgraded += 1
            self.note("upgrade", agent=mind.character.id, summary=kind,
                      covers=[chunk[0], chunk[1]] if kind == "recent" else [0, merged_over])  # fmt: skip
        if done:
            self._save_quietly(mind)

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
                if worker.task is not None and worker.calling <= 0:
                    worker.task.cancel()
            calling = [w.task for w in workers if w.task is not None and w.calling > 0]
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
