"""A character's memory component: its journal and the bookkeeping around it.

Every memory is appended to the journal (flushed at once) before anything else
happens. Only the tail [boundary, M) is kept in memory.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.memory.record import MemoryKind, MemoryRecord, utc_now
from engine.memory.status import MemoryStatus
from engine.memory.waterfall import Windows
from engine.vault.journal import Journal
from engine.vault.vault import MemoryState, Vault
from engine.world.model import Character


class MemoryStream:
    def __init__(
        self,
        character: Character,
        journal: Journal,
        tail: list[MemoryRecord],
        state: MemoryState,
        windows: Windows,
    ) -> None:
        self.character = character
        self.journal = journal
        self.tail = tail
        self.boundary = min(state.boundary, journal.count)
        self.failures = state.failures
        self.last_error = state.last_error
        self.windows = windows

    @classmethod
    def open(
        cls, vault: Vault, character: Character, windows: Windows, *, warn: Callable[[str], None]
    ) -> MemoryStream:
        journal, records = Journal.open(vault.journal_path(character.folder), warn=warn)
        state = vault.read_state(character.folder)
        return cls(character, journal, records[state.boundary :], state, windows)

    @property
    def count(self) -> int:
        """M: memories recorded, ever."""
        return self.journal.count

    def record(
        self,
        kind: MemoryKind,
        text: str,
        *,
        location: str | None,
        occupants: list[str],
        command: str | None = None,
        reason: str | None = None,
        failed: bool = False,
        at: str | None = None,
    ) -> MemoryRecord:
        memory = MemoryRecord(
            seq=self.journal.count,
            at=at or utc_now(),
            kind=kind,
            text=text,
            location=location,
            occupants=occupants,
            command=command,
            reason=reason,
            failed=failed,
        )
        self.journal.append(memory)
        self.tail.append(memory)
        return memory

    def state(self) -> MemoryState:
        return MemoryState(
            memories=self.count,
            boundary=self.boundary,
            failures=self.failures,
            last_error=self.last_error,
        )

    def status(self) -> MemoryStatus:
        return MemoryStatus(
            name=self.character.name,
            type=self.character.type,
            memories=self.count,
            boundary=self.boundary,
            windows=self.windows,
            failures=self.failures,
            last_error=self.last_error,
        )
