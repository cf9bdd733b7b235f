"""``Vault``: where everything about one world lives on disk, and the only way in.

    <root>/config/*.md                  settings (front matter) with explanations
    <root>/world/world.yaml             the world snapshot
    <root>/world/clock.json             the world clock
    <root>/agents/<Name>/agent.md       a character
    <root>/agents/<Name>/memories.jsonl its append-only memory journal
    <root>/agents/<Name>/memory-state.json  what the running process last knew
    <root>/agents/<Name>/notes/*.md     its notes
    <root>/agents/<Name>/summaries/     its short- and long-term summaries, and their history
    <root>/agents/<Name>/knowledge/     its knowledge bank, the bank's log, its pass records
    <root>/agents/<Name>/handbook/      its handbook (memory_summary.md, MEMORY.md, skills/)
    <root>/.lock                        held by the one process that owns the vault

Reading (``status``) needs no lock; anything that writes must hold it. Taking it
clears what a killed owner left: temporary files, and ``in_flight`` marks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from engine.config import Settings
from engine.errors import UsageError, VaultError
from engine.memory.record import utc_now
from engine.vault import config_files, world_store
from engine.vault.files import atomic_write_json, read_json, remove_stale_temp_files
from engine.vault.handbook_store import HandbookStore
from engine.vault.legacy_folders import move_legacy_folders
from engine.vault.lock import VaultLock
from engine.vault.notes import NoteStore
from engine.vault.summaries import SummaryStore
from engine.world.clock import WorldClock
from engine.world.world import World


class HeldForMemory(BaseModel):
    """What a character's turns waited for memory to catch up (back-pressure), both ways
    a turn waits: held at the memory gate (``engine.sim.memory_gate``) while someone's
    memory is behind, and its calls queued in the dispatcher while urgent compactions went
    before them (``engine.llm.dispatcher``). The queued figures are written only once
    they are not 0 (a file from before they existed reads the same)."""

    model_config = ConfigDict(extra="forbid")

    turns: int = Field(default=0, ge=0)
    """Turns held at the gate (each counted once, however often it waited)."""
    seconds: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """How long those holds lasted in all."""
    queued_turns: int = Field(default=0, ge=0)
    """Turns whose model calls waited in the queue while urgent compactions went first."""
    queued_seconds: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    """How long those calls waited in the queue in all."""

    @property
    def total_seconds(self) -> float:
        """Everything the turns waited for memory: at the gate and in the queue."""
        return self.seconds + self.queued_seconds

    @model_serializer(mode="wrap")
    def _without_zero_queues(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.queued_turns and not self.queued_seconds:
            data.pop("queued_turns", None)
            data.pop("queued_seconds", None)
        return data


class LastPrompt(BaseModel):
    """What a character's last turn prompt left out to fit its model's ``num_ctx``
    (``engine.agents.prompt_fit``), for ``mudsim status``."""

    model_config = ConfigDict(extra="forbid")

    hidden: int = Field(default=0, ge=0)
    """Memories left out (the oldest)."""
    cut: list[str] = []
    """The parts cut short, in words ("room description", "2 memories")."""
    dropped: list[str] = []
    """The parts left out whole, in words ("3 notes", "recent summary")."""


class MemoryState(BaseModel):
    """``memory-state.json``: the compaction bookkeeping the running process last saved."""

    model_config = ConfigDict(extra="forbid")

    memories: int = Field(default=0, ge=0)
    boundary: int = Field(default=0, ge=0)
    in_flight: bool = False
    """A compaction of this character is running in the process that owns the vault. Only
    a live owner keeps it true: a process killed mid-compaction leaves it, and the next
    to take the vault clears it (``Vault.lock``); ``mudsim status`` calls it stale
    meanwhile."""
    failures: int = Field(default=0, ge=0)
    last_error: str | None = None
    rejections: dict[str, int] = {}
    """Rejected tries of each step of the next compaction (``chunk@128``, ``merge@64``):
    kept so that any sequence of processes reaches the extractive summary."""
    held_for_memory: HeldForMemory = HeldForMemory()
    last_prompt: LastPrompt | None = None
    """What the last turn prompt left out (None: no turn yet; then not written)."""
    summaries: str | None = None
    """Why this character's summaries are made extractively now, when they are not the
    model's as usual ("summaries failing: HTTP 500 ... ; writing extractive summaries");
    None (then not written): the model writes them."""
    updated: str = ""

    @model_serializer(mode="wrap")
    def _without_no_prompt(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.last_prompt is None:
            data.pop("last_prompt", None)
        if self.summaries is None:
            data.pop("summaries", None)
        return data


VAULT_ENTRIES: Final = frozenset({"world", "agents", "config", "logs", "runs", ".lock"})
"""What a vault's folder holds at its top (an unseeded one: some of it, e.g. ``config``)."""


class Vault:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config_dir = root / "config"
        self._notes: dict[str, NoteStore] = {}
        self._handbooks: dict[str, HandbookStore] = {}
        self.max_note_bytes: int | None = None
        """The notes' size limit (``config/limits.md``), set by whoever loads the settings."""
        self.fiction_secrets = False
        """Whether the knowledge bank and the handbook keep secrets told in prose
        (``config/memory_compaction.md``), set by whoever loads the settings."""
        self.stale_in_flight: list[str] = []
        """The character folders whose ``in_flight`` mark ``lock`` cleared: a process
        that is gone left it (killed mid-compaction)."""

    # -- ownership ----------------------------------------------------------------
    def lock(self) -> VaultLock:
        """Take the vault for this process (raises ``VaultLockedError`` if taken), and
        remove what a crash left behind: temporary files of interrupted writes, and
        ``in_flight`` marks in ``memory-state.json`` (the work they said was running
        died with its process; the characters are in ``stale_in_flight``). Character
        folders an older mudsim named are moved to their names
        (``engine.vault.legacy_folders``)."""
        if self.root.exists() and not self.root.is_dir():
            raise VaultError(f"the vault {self.root} is a file, not a folder")
        lock = VaultLock(self.root)
        lock.acquire()
        try:
            remove_stale_temp_files(self.root)
            move_legacy_folders(self.root)
            self.stale_in_flight = self._clear_in_flight()
        except BaseException:
            lock.release()
            raise
        return lock

    def _clear_in_flight(self) -> list[str]:
        """Set ``in_flight`` false in every ``memory-state.json`` that says true (the rest
        of the file as its process left it, ``updated`` too); the folders it was in. A
        file that is not a memory state is left for the load to report."""
        cleared = []
        for path in sorted((self.root / "agents").glob("*/memory-state.json")):
            try:
                data = read_json(path)
                if not MemoryState.model_validate(data).in_flight:
                    continue
            except (VaultError, ValidationError):
                continue
            atomic_write_json(path, {**data, "in_flight": False})
            cleared.append(path.parent.name)
        return cleared

    # -- settings and world --------------------------------------------------------
    def write_default_config(self) -> None:
        config_files.write_missing_defaults(self.config_dir)

    def settings(self) -> Settings:
        return config_files.load_settings(self.config_dir)

    @property
    def is_seeded(self) -> bool:
        return (self.root / "world" / "world.yaml").exists()

    def foreign_entries(self) -> list[str]:
        """What an unseeded folder holds that no vault holds (a folder given as ``--vault``
        by mistake: ``/etc``, a project): mudsim writes nothing into such a folder."""
        if self.is_seeded or not self.root.is_dir():
            return []
        try:
            names = sorted(entry.name for entry in self.root.iterdir())
        except OSError as exc:
            raise VaultError(f"cannot list {self.root}: {exc.strerror or exc}") from exc
        return [name for name in names if name not in VAULT_ENTRIES]

    def refuse_foreign(self) -> None:
        """``UsageError`` (exit 2) when the folder holds what no vault holds."""
        foreign = self.foreign_entries()
        if foreign:
            shown = ", ".join(foreign[:3]) + (
                f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
            )
            raise UsageError(
                f"{self.root} is not a mudsim vault and is not empty (it holds {shown}); "
                "give --vault a new folder, or one a mudsim command made"
            )

    def load_world(
        self, *, warn: Callable[[str], None] | None = None, clock: WorldClock | None = None
    ) -> World:
        """The saved world (a character whose room it lacks goes to the start room;
        ``warn`` hears of it, stderr when None); a vault saved before the world clock
        existed gets ``clock`` (the world file's), else the default one."""
        if warn is None:
            return world_store.load_world(self.root, clock=clock)
        return world_store.load_world(self.root, warn=warn, clock=clock)

    def save_world(self, world: World) -> None:
        world_store.save_world(self.root, world)

    # -- one character's files -------------------------------------------------------
    def agent_dir(self, folder: str) -> Path:
        return self.root / "agents" / folder

    def journal_path(self, folder: str) -> Path:
        return self.agent_dir(folder) / "memories.jsonl"

    def handbook(self, folder: str) -> HandbookStore:
        store = self._handbooks.get(folder)
        if store is None:
            store = self._handbooks[folder] = HandbookStore(self.agent_dir(folder) / "handbook")
        store.allow_fiction = self.fiction_secrets
        return store

    def notes(self, folder: str) -> NoteStore:
        store = self._notes.get(folder)
        if store is None:
            store = self._notes[folder] = NoteStore(
                self.agent_dir(folder) / "notes", self.max_note_bytes
            )
        return store

    def summaries(self, folder: str) -> SummaryStore:
        return SummaryStore(self.agent_dir(folder) / "summaries")

    def read_state(self, folder: str) -> MemoryState:
        path = self.agent_dir(folder) / "memory-state.json"
        if not path.exists():
            return MemoryState()
        try:
            return MemoryState.model_validate(read_json(path))
        except ValidationError as exc:
            raise VaultError(
                f"{path} is not a valid memory state: {exc.errors()[0]['msg']}"
            ) from exc

    def write_state(self, folder: str, state: MemoryState) -> None:
        state = state.model_copy(update={"updated": utc_now()})
        atomic_write_json(
            self.agent_dir(folder) / "memory-state.json", state.model_dump(mode="json")
        )
