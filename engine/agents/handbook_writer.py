"""Writing an agent's handbook (seed 004) after its knowledge passes.

The handbook is written as the last step of a knowledge pass that changed the bank or
extracted anything (a repeated procedure changes no entry, yet it is what a skill
needs), so it runs in the pass's task: one per agent at a time, owned by the same
supervisor, at the dispatcher's lowest priority, and the end of a run and ``do`` wait
for it as they wait for the pass. A pass that finds nothing new still writes a handbook
that does not exist yet (a vault from before the handbook).

``method`` comes from ``handbook`` in ``config/memory_compaction.md``: ``rules`` writes
it without a model (``engine.memory.handbook_rules``); ``llm`` asks the consolidator
(``engine.memory.handbook_prompts``: INIT when there is no handbook, INCREMENTAL with the
pass records since the last write, the newest ``RECORDS_READ`` at most), once more
when the reply is not a usable handbook, then falls back to the rules, as it does when
the call fails and when the prompt cannot fit the consolidator's ``num_ctx`` less the
reply (no call is made then: ``HandbookPromptTooLong``); ``auto`` is
``llm`` unless the agents think with the embedded model. A skill the model writes is
kept only when the bank holds a procedure seen in ``SKILL_PASSES`` passes that it
carries: a one-off fact never becomes a skill, whoever writes it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from engine.agents.knowledge_plan import DEFAULT_CTX
from engine.agents.memory import MemoryStream
from engine.agents.supervisor import one_line
from engine.agents.thinker import Generator
from engine.errors import LLMError, VaultError
from engine.llm.request import LLMRequest, Priority
from engine.memory.handbook import Handbook
from engine.memory.handbook_prompts import (
    HandbookInvalid,
    HandbookPromptTooLong,
    Mode,
    handbook_constraint,
    handbook_prompt,
    read_handbook,
    without_skills,
)
from engine.memory.handbook_rules import Agent, PassEvidence, rules_handbook, supported_skill
from engine.memory.json_reply import ReplyUnparseable
from engine.memory.knowledge import Entry, Stamp
from engine.memory.knowledge_view import bank_digest
from engine.memory.record import utc_now
from engine.memory.tokens import counter_of, prompt_room
from engine.vault.handbook_store import HandbookState, HandbookStore
from engine.vault.knowledge_store import KnowledgeStore, PassRecord

HandbookMethod = Literal["llm", "rules", "auto"]
ASKS: Final = 2
"""The model is asked once more when its reply is not a usable handbook."""
REPLY_TOKENS: Final = 3_000
"""``num_predict`` of a handbook call at least (the consolidator's is for a short list),
but never more than half its ``num_ctx``: the prompt needs the rest."""
RECORDS_READ: Final = 256
"""The newest pass records read for a prompt at most (the older are only counted): at
``MIN_PART`` tokens each, 256 fill a whole default window."""

_log = logging.getLogger("mudsim.knowledge")


@dataclass
class HandbookTally:
    written: int = 0
    by_llm: int = 0
    fallbacks: int = 0
    """Writes the rules made after the model was asked and failed."""
    failed: int = 0


@dataclass
class HandbookWriter:
    describe: Callable[[MemoryStream], Agent]
    """Who the agent is (name, profile, the others, the world's verbs)."""
    clock: Callable[[], str]
    llm: Generator | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    """Character id -> the consolidator model."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The consolidator profile's options."""
    method: HandbookMethod = "auto"
    embedded: bool = False
    """The agents think with the embedded model (``auto`` then means ``rules``)."""
    constrain: bool | None = True
    tally: HandbookTally = field(default_factory=HandbookTally)
    last_error: dict[str, str] = field(default_factory=dict)
    """Character id -> why its last write failed (cleared by a success)."""

    def chosen(self) -> Literal["llm", "rules"]:
        if self.llm is None or self.method == "rules":
            return "rules"
        return "rules" if self.method == "auto" and self.embedded else "llm"

    async def write(
        self, mind: MemoryStream, knowledge: KnowledgeStore, store: HandbookStore
    ) -> HandbookState:
        """Write ``mind``'s handbook from its bank and pass records (``VaultError`` when
        a file cannot be read or written; the model's failures fall back to the rules,
        as does a bank that changed while the model wrote: an undo stays undone)."""
        fallback = None
        if self.chosen() == "llm":
            entries = knowledge.load()
            records = [r for r in knowledge.passes() if r.status != "failed"]
            evidence = _evidence(knowledge, records)
            state = store.state()
            now = Stamp(sim=self.clock(), at=utc_now())
            existing = store.read()
            mode: Mode = "INCREMENTAL" if existing is not None else "INIT"
            since = state.through_pass if existing is not None and state is not None else None
            new = [r for r in records if since is None or _after(r, since, records)]
            shown = new[-RECORDS_READ:]  # the prompt has room for no more (MIN_PART each)
            texts = [(record_path(r.pass_id), knowledge.record_text(r)) for r in shown]
            try:
                handbook = await self._ask(mind, mode, texts, existing, len(new) - len(shown))
            except HandbookPromptTooLong as exc:
                fallback = f"the model was not asked: {one_line(exc)}"
                _log.info("handbook of %s: %s; the rules write it", mind.character.name, fallback)
            except (LLMError, HandbookInvalid, ReplyUnparseable) as exc:
                fallback = f"the model's handbook was not usable ({one_line(exc)})"
                _log.info("handbook of %s: %s; the rules write it", mind.character.name, fallback)
            else:
                digest = bank_digest(entries)
                if bank_digest(knowledge.load()) == digest:
                    handbook = _supported(handbook, entries, evidence)
                    through = records[-1].pass_id if records else None
                    written = store.write(handbook, HandbookState(
                        method="llm", mode=mode, through_pass=through, updated=now,
                        bank_digest=digest))  # fmt: skip
                    self._done(mind, llm=True)
                    return written
                fallback = "the knowledge bank changed while the model wrote the handbook"
        return self.write_by_rules(mind, knowledge, store, fallback=fallback)

    def write_by_rules(
        self, mind: MemoryStream, knowledge: KnowledgeStore, store: HandbookStore,
        fallback: str | None = None,
    ) -> HandbookState:  # fmt: skip
        """Write ``mind``'s handbook by the rules, now, from the bank as it is (after an
        undo, and for a handbook its bank has moved past)."""
        entries = knowledge.load()
        records = [r for r in knowledge.passes() if r.status != "failed"]
        now = Stamp(sim=self.clock(), at=utc_now())
        through = records[-1].pass_id if records else None
        handbook = rules_handbook(self.describe(mind), entries, _evidence(knowledge, records))
        written = store.write(handbook, HandbookState(
            method="rules", mode="RULES", through_pass=through, updated=now,
            fallback=fallback, bank_digest=bank_digest(entries)))  # fmt: skip
        self.tally.fallbacks += fallback is not None
        self._done(mind, llm=False)
        return written

    @staticmethod
    def behind(knowledge: KnowledgeStore, store: HandbookStore) -> bool:
        """A handbook written from another bank than the one there is now (or none, for
        a bank with entries). A handbook from before the digest is taken as it is."""
        try:
            state = store.state() if store.exists() else None
            if state is None:
                return HandbookWriter.missing(knowledge, store)
            return (
                state.bank_digest is not None and bank_digest(knowledge.load()) != state.bank_digest
            )
        except VaultError:
            return False  # a file to fix first: the write would fail on it too

    async def write_quietly(
        self, mind: MemoryStream, knowledge: KnowledgeStore, store: HandbookStore,
        warn: Callable[[str], None],
    ) -> None:  # fmt: skip
        """``write``; a failure is counted and said to ``warn``, never raised (the pass
        it follows stands)."""
        try:
            await self.write(mind, knowledge, store)
        except (VaultError, OSError) as exc:
            self.failed(mind, exc)
            warn(f"the handbook of {mind.character.name} was not written: {one_line(exc)}")

    @staticmethod
    def missing(knowledge: KnowledgeStore, store: HandbookStore) -> bool:
        """A bank with entries and no handbook (a vault from before the handbook)."""
        if store.exists():
            return False
        try:
            return bool(knowledge.bank_summary().entries)
        except VaultError:
            return False

    def failed(self, mind: MemoryStream, exc: BaseException) -> None:
        self.tally.failed += 1
        self.last_error[mind.character.id] = one_line(exc)

    def _done(self, mind: MemoryStream, *, llm: bool) -> None:
        self.tally.written += 1
        self.tally.by_llm += llm
        self.last_error.pop(mind.character.id, None)

    async def _ask(
        self, mind: MemoryStream, mode: Mode, records: list[tuple[str, str]],
        existing: Handbook | None, older: int,
    ) -> Handbook:  # fmt: skip
        """The model's handbook; ``HandbookPromptTooLong`` (before any call) when its
        prompt cannot fit ``num_ctx`` (the configured one, never raised) less the reply."""
        assert self.llm is not None
        options = {"num_ctx": DEFAULT_CTX, **self.options}
        longest = min(REPLY_TOKENS, int(options["num_ctx"]) // 2)
        options["num_predict"] = max(int(options.get("num_predict", 0)), longest)
        budget = prompt_room(options) or 0  # in tokens, as its model counts them
        prompt = handbook_prompt(mind.character.name, mode, records, existing, budget,
                                 counter_of(self.llm), older)  # fmt: skip
        request = LLMRequest(
            prompt=lambda: prompt,
            model=self.models.get(mind.character.id, ""),
            options=options,
            agent=mind.character.name,
            role="handbook",
            purpose="handbook",
            priority=Priority.CONSOLIDATION,
            constraint=handbook_constraint,
            constrain=self.constrain,
        )
        problem: Exception = HandbookInvalid("no reply")
        for _ in range(ASKS):
            reply = await self.llm.generate(request)
            try:
                return read_handbook(reply.text)
            except (HandbookInvalid, ReplyUnparseable) as exc:
                problem = exc
        raise problem


def _evidence(knowledge: KnowledgeStore, records: Sequence[PassRecord]) -> list[PassEvidence]:
    return [
        PassEvidence(r.pass_id, record_path(r.pass_id), tuple(knowledge.extracted(r)))
        for r in records
    ]


def record_path(pass_id: str) -> str:
    """A pass record as the handbook cites it (relative to the agent's folder)."""
    return f"knowledge/passes/{pass_id}.md"


def _after(record: PassRecord, since: str, records: Sequence[PassRecord]) -> bool:
    """``record`` comes after the pass ``since`` (all of them when ``since`` is gone)."""
    ids = [r.pass_id for r in records]
    return since not in ids or ids.index(record.pass_id) > ids.index(since)


def _supported(
    handbook: Handbook, entries: Sequence[Entry], evidence: Sequence[PassEvidence]
) -> Handbook:
    dropped = {name for name, text in handbook.skills.items()
               if not supported_skill(text, entries, evidence)}  # fmt: skip
    for name in sorted(dropped):
        _log.info("the model's skill %s is left out: no procedure seen in enough passes", name)
    return without_skills(handbook, dropped)
