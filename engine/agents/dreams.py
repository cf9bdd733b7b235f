"""Dreaming: ``dream`` starts a background task that asks the consolidator for a dream
made of a shuffled sample of the agent's past, its newest memories and its knowledge
(``engine.memory.dream``), then keeps it twice: appended to the note "Dreams" and
remembered as a thought.

Like a knowledge pass, a dream is a task owned by the supervisor, one per agent at a
time, at the dispatcher's lowest priority, and the end of a run waits for it within the
same grace. The reply is constrained as a summary (one paragraph of plain sentences)
and goes through the summary quality gate; a reply that fails is asked once more, then
the dream is made without the model (``montage``), as it is when the call fails or the
session has no model at all. An agent dreams at most once every ``interval`` minutes of
world time (``dream_interval`` in ``config/memory_compaction.md``): the note's world
time says when it last did.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from engine.agents.memory import MemoryStream
from engine.agents.supervisor import Supervisor, one_line
from engine.agents.thinker import Generator
from engine.errors import LLMError, VaultError
from engine.llm.request import LLMRequest, Priority
from engine.memory.dream import NOTE_TITLE, dream_prompt, montage, sample_fragments
from engine.memory.secrets import redact
from engine.memory.summary_grammar import summary_constraint, unwrap_summary
from engine.memory.summary_quality import judge_summary
from engine.memory.tokens import counter_of, prompt_room
from engine.vault.knowledge_store import KnowledgeStore
from engine.vault.vault import Vault
from engine.world.clock import format_reading, parse_reading

ASKS: Final = 2
RECENT: Final = 12
"""The newest memories a dream draws from."""
DREAM_REPLY: Final = 400
"""The reply a dream's prompt leaves room for when the options set no ``num_predict``."""

_log = logging.getLogger("mudsim.knowledge")


@dataclass
class DreamTally:
    dreamt: int = 0
    by_model: int = 0


@dataclass
class Dreams:
    vault: Vault
    clock: Callable[[], str]
    remember: Callable[[MemoryStream, str], None]
    """Records the dream as a memory of the dreamer (the simulation's)."""
    llm: Generator | None = None
    models: Mapping[str, str] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    interval: int = 1440
    """Minutes of world time between two dreams of one agent."""
    constrain: bool | None = True
    supervisor: Supervisor = field(
        default_factory=lambda: Supervisor(lambda m, e: _log.error(m, exc_info=e))
    )
    workers: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    tally: DreamTally = field(default_factory=DreamTally)

    def start(self, mind: MemoryStream) -> tuple[bool, str]:
        """``dream``: start one, or say why not (False), as one sentence for the dreamer."""
        key = mind.character.id
        if key in self.workers:
            return False, "You are dreaming already."
        try:
            again = self._next_dream(mind)
        except VaultError as exc:
            return False, f"You cannot dream now: {one_line(exc)}"
        if again is not None:
            when = again.replace("T", " ")
            return False, f"You dreamt not long ago; you can dream again after {when}."
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop (the play REPL): dream at once, without a model
            self._keep(mind, montage(self._fragments(mind), self._seed(mind)), by_model=False)
            return True, "You close your eyes and dream."
        task = self.supervisor.spawn(self._dream(mind), name=f"dream of {mind.character.name}")
        self.workers[key] = task
        task.add_done_callback(lambda _: self.workers.pop(key, None))
        return True, "You close your eyes and drift into a dream..."

    def can_dream(self, mind: MemoryStream) -> bool:
        """Whether ``dream`` would start one now (for the command grammar)."""
        try:
            return mind.character.id not in self.workers and self._next_dream(mind) is None
        except VaultError:
            return False

    def _next_dream(self, mind: MemoryStream) -> str | None:
        """When the agent may dream again (None: now)."""
        note = self.vault.notes(mind.character.folder).read(NOTE_TITLE)
        if note is None or not note.sim or self.interval <= 0:
            return None
        try:
            again = parse_reading(note.sim) + timedelta(minutes=self.interval)
            now = parse_reading(self.clock())
        except ValueError:
            return None
        return format_reading(again) if now < again else None

    async def _dream(self, mind: MemoryStream) -> None:
        fragments = self._fragments(mind)
        seed = self._seed(mind)
        text, by_model = None, False
        if self.llm is not None:  # fitted to the consolidator's context, as its model counts
            room = prompt_room(self.options, default_reply=DREAM_REPLY)
            prompt = dream_prompt(mind.character.name, fragments, room, counter_of(self.llm))
            text = await self._ask(mind, prompt)
            by_model = text is not None
        self._keep(mind, text or montage(fragments, seed), by_model=by_model)

    async def _ask(self, mind: MemoryStream, prompt: str) -> str | None:
        assert self.llm is not None
        request = LLMRequest(
            prompt=lambda: prompt, model=self.models.get(mind.character.id, ""),
            options=self.options, agent=mind.character.name, role="dream", purpose="dream",
            priority=Priority.CONSOLIDATION, constraint=summary_constraint,
            constrain=self.constrain,
        )  # fmt: skip
        for _ in range(ASKS):
            try:
                reply = await self.llm.generate(request)
            except LLMError as exc:
                _log.info("the dream of %s is made without the model: %s",
                          mind.character.name, one_line(exc))  # fmt: skip
                return None
            verdict = judge_summary(unwrap_summary(reply.text), prompt, truncated=reply.truncated)
            if verdict.summary is not None:
                return verdict.summary
        return None

    def _fragments(self, mind: MemoryStream) -> list[str]:
        try:
            old = [summary.text for _, summary in mind.store.history()]
        except VaultError:
            old = []
        recent = [memory.text for memory in mind.tail[-RECENT:]]
        try:
            folder = self.vault.agent_dir(mind.character.folder) / "knowledge"
            known = [entry.content for entry in KnowledgeStore(folder).load()]
        except VaultError:
            known = []
        fiction = self.vault.fiction_secrets  # a dream's prompt sees no secret either
        old = [redact(text, allow_fiction=fiction) for text in old]
        recent = [redact(text, allow_fiction=fiction) for text in recent]
        return sample_fragments(old, recent, known, self._seed(mind))

    @staticmethod
    def _seed(mind: MemoryStream) -> str:
        return f"{mind.character.name}:{mind.count}"

    def _keep(self, mind: MemoryStream, text: str, *, by_model: bool) -> None:
        """The dream in the note "Dreams" and as a memory (a note the disk refuses is
        logged; the memory is still kept)."""
        try:
            self.vault.notes(mind.character.folder).append(NOTE_TITLE, text, sim=self.clock())
        except (VaultError, OSError) as exc:
            _log.warning("the dream of %s was not noted: %s", mind.character.name, one_line(exc))
        self.remember(mind, text)
        self.tally.dreamt += 1
        self.tally.by_model += by_model

    def cut(self) -> None:
        """Cancel the dreams in progress now (a cancelled dream keeps nothing)."""
        for task in self.workers.values():
            task.cancel()

    async def drain(self, grace: float | None) -> None:
        """Wait ``grace`` s (None: no limit) for dreams in progress, cancel the rest (a
        cancelled dream keeps nothing)."""
        tasks = list(self.workers.values())
        if not tasks:
            return
        _, late = await asyncio.wait(tasks, timeout=grace)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late)
