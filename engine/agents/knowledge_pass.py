"""Knowledge passes: the background worker that fills each agent's knowledge bank.

A pass (seeds 000/001) has two LLM calls. **Extract**: what the agent noted, lived and
said since its last pass (``knowledge_inputs``) -> candidate entries, a JSON array
under a schema. **Consolidate** (only when there are candidates): the candidates and
the bank, with its capacity tier -> KEEP / UPDATE / DELETE / ADD / SKIP, applied in one
atomic commit (``KnowledgeStore.commit_pass``: log, bank, record). Each call is asked
again once when its reply does not parse. Fallbacks, as the seed says: extraction fails
-> nothing changes and the pass is recorded as failed; consolidation fails -> every
candidate is added (exact duplicates skipped); capacity unknown -> GENEROUS.

Like a compaction, a pass is a background task with an owner (the supervisor), one per
agent at a time, at the dispatcher's lowest priority, retried with backoff (at most
``ATTEMPTS`` times for one trigger: a model that is down costs a few records, not one a
minute). It starts every ``consolidate_every`` memories, at the end of a run and on
``@consolidate``. Its last step writes the agent's handbook (``handbook``:
``engine.agents.handbook_writer``) when the pass changed the bank or extracted anything;
a handbook that cannot be written is counted and logged, and the pass stands.

Here: the workers (starting, retries, undo, settling), each pass's commit and record. What
it reads, its two calls and what they make of the bank: ``engine.agents.knowledge_plan``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from engine.agents.handbook_writer import HandbookWriter
from engine.agents.knowledge_plan import Ask, PassFailed, changes, extract, pass_inputs
from engine.agents.memory import MemoryStream
from engine.agents.supervisor import Supervisor, one_line
from engine.agents.thinker import Generator
from engine.errors import LLMError, VaultError
from engine.faults import crash_point
from engine.llm.request import LLMRequest, Priority
from engine.memory.constraint import Constraint
from engine.memory.knowledge import Stamp
from engine.memory.record import utc_now
from engine.memory.tokens import counter_of
from engine.vault.knowledge_store import KnowledgeStore, PassRecord, UndoOutcome
from engine.vault.vault import Vault

ATTEMPTS: Final = 3
"""Tries of one pass before it waits for the next trigger."""

_log = logging.getLogger("mudsim.knowledge")


@dataclass
class KnowledgeTally:
    passes: int = 0
    """Passes recorded (changed, unchanged or failed)."""
    changed: int = 0
    failed: int = 0
    fallbacks: int = 0
    """Consolidations that fell back to adding every candidate."""


@dataclass
class _Worker:
    mind: MemoryStream
    task: asyncio.Task[None] | None = None


@dataclass
class AgentKnowledge:
    """What this process knows of one agent's passes (for ``@memory-status``)."""

    since: int | None = None
    """The memory seq the last completed pass read to (None: not looked up yet)."""
    failures: int = 0
    last_error: str | None = None
    in_flight: bool = False


@dataclass
class KnowledgePasses:
    vault: Vault
    llm: Generator | None
    """None when this session has no LLM: passes wait."""
    models: Mapping[str, str]
    """Character id -> the consolidator model."""
    options: Mapping[str, Any]
    """The consolidator profile's options (``num_ctx`` bounds the prompts)."""
    clock: Callable[[], str]
    """The world clock's reading."""
    every: int = 256
    """``consolidate_every``: memories between automatic passes."""
    enabled: bool = True
    """``knowledge`` in ``memory_compaction.md``: False starts no pass at all."""
    context_tokens: int | None = None
    """The consolidating model's window, for the capacity tier (None: GENEROUS)."""
    constrain: bool | None = True
    """Decode under the JSON schema / grammar (the consolidator profile may turn it off)."""
    retry: bool = True
    first_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    jitter: Callable[[], float] = random.random
    warn: Callable[[str], None] = _log.warning
    supervisor: Supervisor = field(
        default_factory=lambda: Supervisor(lambda m, e: _log.error(m, exc_info=e))
    )
    workers: dict[str, _Worker] = field(default_factory=dict)
    agents: dict[str, AgentKnowledge] = field(default_factory=dict)
    stopping: bool = False
    tally: KnowledgeTally = field(default_factory=KnowledgeTally)
    handbook: HandbookWriter | None = None
    """Writes each agent's handbook after its passes (None: no handbook)."""
    committed: Callable[[MemoryStream], None] | None = None
    """Told after each commit that changed a bank (a pass, an undo): retrieval's index is
    brought up to date then, off the agent's next turn."""

    # -- looking ---------------------------------------------------------------------------
    def store(self, mind: MemoryStream) -> KnowledgeStore:
        folder = self.vault.agent_dir(mind.character.folder) / "knowledge"
        return KnowledgeStore(folder, allow_fiction=self.vault.fiction_secrets)

    def agent(self, mind: MemoryStream) -> AgentKnowledge:
        return self.agents.setdefault(mind.character.id, AgentKnowledge())

    def since(self, mind: MemoryStream) -> int:
        """Where the last completed pass stopped reading memories (0: never)."""
        known = self.agent(mind)
        if known.since is None:
            last = self.store(mind).last_pass()
            known.since = last.memories[1] if last is not None and last.memories else 0
        return known.since

    # -- undoing -----------------------------------------------------------------------------
    def undo(self, mind: MemoryStream) -> UndoOutcome | None:
        """``@knowledge undo``: the bank as it was before its newest pass not undone, and
        the handbook written again from it by the rules in the same step (a failure to
        write it is said and counted; the undo stands). A pass in flight commits on the
        bank as it finds it then (``KnowledgeStore.commit_pass``): nothing undone comes
        back. ``VaultError`` when the bank cannot be read or written."""
        store = self.store(mind)
        outcome = store.undo()
        if outcome is not None:
            self._rules_handbook(mind, store)
            if self.committed is not None:
                self.committed(mind)
        return outcome

    def catch_up_handbooks(self, minds: list[MemoryStream]) -> None:
        """Write again, by the rules, each agent's handbook that its bank has moved past
        (a process killed between a commit and its handbook, an undo by hand)."""
        if self.handbook is None:
            return
        for mind in minds:
            if mind.character.type != "agent":
                continue
            store = self.store(mind)
            if self.handbook.behind(store, self.vault.handbook(mind.character.folder)):
                self._rules_handbook(mind, store)

    def _rules_handbook(self, mind: MemoryStream, store: KnowledgeStore) -> None:
        if self.handbook is None:
            return
        try:
            self.handbook.write_by_rules(mind, store, self.vault.handbook(mind.character.folder))
        except (VaultError, OSError) as exc:
            self.handbook.failed(mind, exc)
            self.warn(f"the handbook of {mind.character.name} was not written: {one_line(exc)}")

    # -- starting ----------------------------------------------------------------------------
    def poke(self, mind: MemoryStream) -> None:
        """Start a pass when ``every`` memories have come since the last one."""
        if self._idle(mind) and mind.count - self.since(mind) >= self.every:
            self._start(mind)

    def at_run_end(self, minds: list[MemoryStream]) -> None:
        """The end of a run: a pass for each agent with memories since its last."""
        for mind in minds:
            if self._idle(mind) and mind.count > self.since(mind):
                self._start(mind)

    def force(self, mind: MemoryStream) -> str:
        """``@consolidate``: what will happen, as one sentence."""
        name = mind.character.name
        if not self.enabled:
            return (
                f"{name}'s knowledge is not consolidated: knowledge passes are off "
                "(knowledge: false in config/memory_compaction.md)."
            )
        if self.llm is None:
            return (
                f"{name}'s knowledge cannot be consolidated now: this session has no "
                "language model. It will be at the end of the next run."
            )
        if mind.character.id in self.workers:
            return f"A knowledge pass for {name} is already in progress."
        try:
            inputs = pass_inputs(self.vault, mind, self.store(mind).last_pass(), self.warn)
        except (OSError, VaultError) as exc:
            return f"{name}'s knowledge cannot be consolidated: {one_line(exc)}"
        if inputs.empty and not self._handbook_missing(mind, self.store(mind)):
            return f"Nothing new for {name} since the last knowledge pass."
        self._start(mind)
        if inputs.empty:
            return f"Nothing new for {name} since the last knowledge pass; writing its handbook."
        start, end = inputs.memories
        what = [f"{len(inputs.notes)} note{'s' if len(inputs.notes) != 1 else ''}"]
        if end > start:
            what.append(f"memories #{start}-#{end - 1}")
        return f"Consolidating {name}'s knowledge from {' and '.join(what)}."

    def _idle(self, mind: MemoryStream) -> bool:
        return (
            self.enabled
            and self.llm is not None
            and not self.stopping
            and mind.character.type == "agent"
            and mind.character.id not in self.workers
        )

    def _start(self, mind: MemoryStream) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # no event loop (the play REPL): it waits for a run
        worker = _Worker(mind)
        self.workers[mind.character.id] = worker
        self.agent(mind).in_flight = True
        worker.task = self.supervisor.spawn(
            self._work(worker), name=f"knowledge pass of {mind.character.name}"
        )
        worker.task.add_done_callback(lambda _: self._ended(worker))

    def _ended(self, worker: _Worker) -> None:
        key = worker.mind.character.id
        if self.workers.get(key) is worker:
            del self.workers[key]
            self.agent(worker.mind).in_flight = False

    # -- the worker --------------------------------------------------------------------------
    async def _work(self, worker: _Worker) -> None:
        try:
            for attempt in range(ATTEMPTS):
                try:
                    await self._pass(worker)
                    return
                except (PassFailed, LLMError, VaultError, OSError) as exc:  # a full disk too
                    self._failed(worker.mind, exc)
                    if not self.retry or self.stopping or attempt == ATTEMPTS - 1:
                        return
                    await self.sleep(self._backoff(attempt))
        finally:
            self._ended(worker)

    def _backoff(self, failures_in_a_row: int) -> float:
        delay = min(self.max_delay, self.first_delay * 2.0 ** min(failures_in_a_row, 32))
        return delay * (0.5 + 0.5 * self.jitter())

    def _failed(self, mind: MemoryStream, exc: Exception) -> None:
        known = self.agent(mind)
        known.failures += 1
        known.last_error = one_line(exc)
        self.tally.failed += 1
        self.warn(f"the knowledge pass of {mind.character.name} failed: {known.last_error}")

    async def _pass(self, worker: _Worker) -> None:
        mind = worker.mind
        store = self.store(mind)
        try:
            inputs = pass_inputs(self.vault, mind, store.last_pass(), self.warn)
        except OSError as exc:
            raise PassFailed(f"its memories could not be read ({one_line(exc)})") from exc
        if inputs.empty:
            if self._handbook_missing(mind, store):
                await self._write_handbook(mind, store)  # a bank from before the handbook
            return
        started = Stamp(sim=self.clock(), at=utc_now())
        pass_id = store.new_pass_id()
        record = PassRecord.model_validate(
            {
                "pass": pass_id,
                "status": "failed",
                "started": started,
                "finished": started,
                "memories": list(inputs.memories),
                "notes": [title for title, _ in inputs.notes],
                "summaries": [name for name, _ in inputs.summaries],
            }
        )
        try:
            found, from_notes = await extract(self._asker(worker), mind.character.name,
                                              started.sim, inputs, self.options,
                                              allow_fiction=self.vault.fiction_secrets,
                                              tokens=counter_of(self.llm))  # fmt: skip
            candidates = found + from_notes
            bank = store.load()  # a corrupt bank: the pass fails, the file stays
        except (PassFailed, LLMError, VaultError) as exc:
            self._record(store, record, error=one_line(exc))
            raise
        crash_point("knowledge-between-phases")
        made = await changes(self._asker(worker), mind.character.name, bank, candidates,
                             from_notes, pass_id, inputs, clock=self.clock,
                             options=self.options, context_tokens=self.context_tokens,
                             tokens=counter_of(self.llm))  # fmt: skip
        applied, tier, fallback, cap = made.applied, made.tier, made.fallback, made.cap
        counts: dict[str, int] = {}
        for change in applied.changes:
            counts[change.op] = counts.get(change.op, 0) + 1
        done = record.model_copy(
            update={
                "status": "changed" if applied.changes else "unchanged",
                "finished": Stamp(sim=self.clock(), at=utc_now()),
                "candidates": len(candidates),
                "operations": counts,
                "tier": tier,
                "capacity_tokens": cap.tokens if cap else None,
                "capacity_percent": cap.percent if cap else None,
                "fallback": fallback,
            }
        )
        triples = [(c.type, c.content, list(c.tags)) for c in candidates]
        store.commit_pass(pass_id, tier, applied.changes, done, triples)
        known = self.agent(mind)
        known.since, known.failures, known.last_error = inputs.memories[1], 0, None
        self.tally.passes += 1
        self.tally.changed += bool(applied.changes)
        self.tally.fallbacks += fallback is not None
        if applied.changes or candidates:
            await self._write_handbook(mind, store)
        if applied.changes and self.committed is not None:
            self.committed(mind)

    def _handbook_missing(self, mind: MemoryStream, store: KnowledgeStore) -> bool:
        handbook = self.vault.handbook(mind.character.folder)
        return self.handbook is not None and self.handbook.missing(store, handbook)

    async def _write_handbook(self, mind: MemoryStream, store: KnowledgeStore) -> None:
        if self.handbook is not None:
            handbook = self.vault.handbook(mind.character.folder)
            await self.handbook.write_quietly(mind, store, handbook, self.warn)

    def _record(self, store: KnowledgeStore, record: PassRecord, *, error: str) -> None:
        failed = record.model_copy(
            update={"error": error, "finished": Stamp(sim=self.clock(), at=utc_now())}
        )
        try:
            store.write_pass(failed, [], [])
            self.tally.passes += 1
        except (OSError, VaultError) as exc:
            self.warn(f"the failed knowledge pass could not be recorded: {one_line(exc)}")

    def _asker(self, worker: _Worker) -> Ask:
        return lambda prompt, constraint, purpose: self._ask(worker, prompt, constraint, purpose)

    async def _ask(
        self, worker: _Worker, prompt: str, constraint: Callable[[], Constraint], purpose: str
    ) -> str:
        assert self.llm is not None
        mind = worker.mind
        request = LLMRequest(
            prompt=lambda: prompt,
            model=self.models.get(mind.character.id, ""),
            options=self.options,
            agent=mind.character.name,
            role="consolidator",
            purpose=purpose,
            priority=Priority.CONSOLIDATION,
            constraint=constraint,
            constrain=self.constrain,
        )
        return (await self.llm.generate(request)).text

    # -- settling and stopping ---------------------------------------------------------------
    async def settle(self, within: float = 30.0) -> None:
        """Let passes in progress finish (at most ``within`` s), then stop the rest."""
        await self.supervisor.wait(within)
        await self.drain(0)
        self.stopping = False

    def cut(self) -> None:
        """Cancel the passes in progress now (a cancelled pass wrote nothing)."""
        for worker in self.workers.values():
            if worker.task is not None:
                worker.task.cancel()

    async def drain(self, grace: float | None = 30.0) -> None:
        """Start no more passes; wait ``grace`` s (None: no limit) for those in progress,
        cancel the rest (a cancelled pass wrote nothing: its commit is the last step)."""
        self.stopping = True
        tasks = [w.task for w in self.workers.values() if w.task is not None]
        if not tasks:
            return
        try:
            _, late = await asyncio.wait(tasks, timeout=grace)
            for task in late:
                task.cancel()
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            raise
