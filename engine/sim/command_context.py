"""The commands' view of a running simulation (``engine.commands.context``'s protocol),
bound to one caller."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.commands import Registry
from engine.commands.context import Doorkeeper, TrainingCapture
from engine.llm.status import render_llm_status
from engine.memory.retrieval import line
from engine.sim.prompting import build_prompt
from engine.vault.accounts import AccountStore
from engine.vault.bans import BanStore
from engine.vault.handbook_store import HandbookStore
from engine.vault.knowledge_store import KnowledgeStore, UndoOutcome
from engine.vault.notes import NoteStore
from engine.world.events import Event, EventKind
from engine.world.model import Character
from engine.world.world import World

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation


@dataclass
class SimContext:
    """The commands' view of the simulation, bound to one caller."""

    sim: Simulation
    caller: Character
    events: list[Event] = field(default_factory=list)
    """What the command emitted, delivered once it has finished (and saved)."""

    @property
    def world(self) -> World:
        return self.sim.world

    @property
    def registry(self) -> Registry:
        return self.sim.registry

    def emit(self, kind: EventKind, text: str, *, room_id: str | None = None) -> None:
        self.events.append(Event(kind, text, room_id or self.caller.location, self.caller.id))

    def notes(self) -> NoteStore:
        return self.sim.vault.notes(self.caller.folder)

    def save(self) -> None:
        self.sim.save()

    def prompt_for(self, character: Character, *, scores: bool = False) -> str | None:
        return build_prompt(self.sim, character, scores=scores)

    def llm_status(self) -> str | None:
        link = self.sim.llm
        return (
            None
            if link is None
            else render_llm_status(
                link.dispatcher, list(link.models.values()), list(link.thinkers.values())
            )
        )

    def memory_status(self, character: Character) -> str:
        return self.sim.memory_status(character).render()

    def compact_memories(self, character: Character) -> str:
        return self.sim.compactor.force(self.sim.minds[character.id])

    def knowledge(self, character: Character) -> KnowledgeStore:
        return self.sim.knowledge.store(self.sim.minds[character.id])

    def undo_knowledge(self, character: Character) -> UndoOutcome | None:
        return self.sim.knowledge.undo(self.sim.minds[character.id])

    def consolidate(self, character: Character) -> str:
        return self.sim.knowledge.force(self.sim.minds[character.id])

    def handbook(self, character: Character) -> HandbookStore:
        return self.sim.vault.handbook(character.folder)

    def recall(self, character: Character, words: str, limit: int) -> list[tuple[str, str]]:
        found = self.sim.recollection.recall(character, words, limit)
        return [(line(c.item), c.item.origin) for c in found]

    def dream(self, character: Character) -> tuple[bool, str]:
        return self.sim.dreams.start(self.sim.minds[character.id])

    def chronicle(self, room_id: str | None, count: int) -> list[str]:
        return self.sim.chronicle.tail(room_id, count)

    def clear_chronicle(self) -> list[tuple[str, int]]:
        return [(cleared.path, cleared.lines) for cleared in self.sim.chronicle.clear()]

    def training(self) -> TrainingCapture | None:
        recorder = self.sim.recorder
        if recorder is None:
            return None
        captured = recorder.captured
        return TrainingCapture(
            recorder.training, captured["ok"], captured["failed"], recorder.run.id
        )

    def toggle_training(self) -> TrainingCapture | None:
        if self.sim.recorder is not None:
            self.sim.recorder.training = not self.sim.recorder.training
        return self.training()

    def accounts(self) -> AccountStore:
        return AccountStore(self.sim.vault.root)

    def bans(self) -> BanStore:
        return BanStore(self.sim.vault.root)

    def doorkeeper(self) -> Doorkeeper | None:
        return self.sim.doorkeeper
