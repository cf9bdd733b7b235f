"""The seam between commands and the rest of the engine.

Commands see the world, their caller and the registry, and reach everything else
(other characters' eyes, notes, the vault, memory, the LLM) only through this
protocol, which ``engine.sim`` implements. Tests can implement it too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from engine.commands.registry import Registry
from engine.vault.accounts import AccountStore
from engine.vault.bans import BanStore
from engine.vault.handbook_store import HandbookStore
from engine.vault.knowledge_store import KnowledgeStore, UndoOutcome
from engine.vault.notes import NoteStore
from engine.world.events import EventKind
from engine.world.model import Character
from engine.world.world import World


@dataclass(frozen=True, slots=True)
class TrainingCapture:
    """Whether this run captures agent turns as training pairs, and how many it has."""

    on: bool
    ok: int
    failed: int
    run: str
    """The run record's id (``vault/runs/<run>/training.jsonl``)."""


class Doorkeeper(Protocol):
    """The served world's connections, as moderation commands reach them."""

    def connected_names(self) -> list[str]:
        """The names of the characters played over a connection now."""

    def disconnect(self, name: str, message: str) -> bool:
        """Close the connection playing the character called ``name``, telling it
        ``message`` (False: nobody plays it now)."""

    def disconnect_address(self, address: str, message: str) -> int:
        """Close every connection from ``address`` (an address or a network); how many."""

    def addresses_of(self, name: str) -> list[str]:
        """The addresses the character called ``name`` is connected from now."""


class CommandContext(Protocol):
    @property
    def world(self) -> World: ...

    @property
    def caller(self) -> Character: ...

    @property
    def registry(self) -> Registry: ...

    def emit(self, kind: EventKind, text: str, *, room_id: str | None = None) -> None:
        """Show ``text`` to everyone in ``room_id`` (default: the caller's room) but the caller."""

    def notes(self) -> NoteStore:
        """The caller's notes."""

    def save(self) -> None:
        """Save the world and every character's state to the vault now."""

    def prompt_for(self, character: Character, *, scores: bool = False) -> str | None:
        """The exact prompt ``character`` would get now, or None if it has no thinker;
        ``scores``: retrieval's scores beside what it brings to mind."""

    def llm_status(self) -> str | None:
        """``@llm-status`` text, or None when this run has no LLM."""

    def memory_status(self, character: Character) -> str:
        """``@memory-status`` text for ``character``."""

    def compact_memories(self, character: Character) -> str:
        """Start compacting ``character``'s memories now; say what will happen."""

    def knowledge(self, character: Character) -> KnowledgeStore:
        """``character``'s knowledge bank, its pass records and its log."""

    def undo_knowledge(self, character: Character) -> UndoOutcome | None:
        """Undo ``character``'s newest knowledge pass and write its handbook again from
        the bank it leaves (None: no pass left to undo). ``VaultError`` on a bad bank."""

    def consolidate(self, character: Character) -> str:
        """Start a knowledge pass for ``character`` now; say what will happen."""

    def handbook(self, character: Character) -> HandbookStore:
        """``character``'s handbook (memory_summary.md, MEMORY.md, skills)."""

    def recall(self, character: Character, words: str, limit: int) -> list[tuple[str, str]]:
        """The ``limit`` things ``character`` best remembers about ``words``, as (line,
        where it came from), best first: knowledge entries, notes, skills, past summaries."""

    def dream(self, character: Character) -> tuple[bool, str]:
        """Start ``character``'s dream (in the background): whether it started, and what
        to tell the dreamer."""

    def chronicle(self, room_id: str | None, count: int) -> list[str]:
        """The last ``count`` lines of today's world chronicle, or of room ``room_id``'s."""

    def clear_chronicle(self) -> list[tuple[str, int]]:
        """Remove today's chronicle files (earlier days stay): each one's path in the
        chronicle folder and how many lines it held."""

    def training(self) -> TrainingCapture | None:
        """This run's training capture, or None when the run is not recorded."""

    def toggle_training(self) -> TrainingCapture | None:
        """Switch this run's training capture on or off; None when the run is not recorded."""

    def accounts(self) -> AccountStore:
        """Who may log in over telnet (the vault's ``config/accounts.md``)."""

    def bans(self) -> BanStore:
        """Who may not (the vault's ``config/bans.md``)."""

    def doorkeeper(self) -> Doorkeeper | None:
        """The served world's connections; None when the world is not served."""
