"""One memory: a line of an agent's append-only journal (``memories.jsonl``).

The record is flat so a person can read and grep the journal; ``seq`` counts from 0
and equals the line's index. ``at`` is wall time; ``sim`` the world clock's reading
(``engine.world.clock``) when it was recorded. Lines written before the clock existed
have no ``sim`` (and no ``speaker``): they load as None, and count as the clock's start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import ConfigDict, TypeAdapter

from engine import wallclock


class MemoryKind(StrEnum):
    OBSERVATION = "observation"
    """Something another character did in the same room."""
    RESULT = "result"
    """The narrative result of one of the character's own commands."""
    THOUGHT = "thought"
    """A private thought (``think``)."""
    IMPORTED = "imported"
    """Brought in from outside (a copied folder, Miniworld memory files)."""


@dataclass(slots=True)
class MemoryRecord:
    """A plain dataclass (cheap to make: one for every observer of every event);
    pydantic checks it only when it is read back from a journal (``from_json``). Nothing
    changes a record once it is made (it is not frozen only because a frozen
    dataclass takes twice as long to make)."""

    __pydantic_config__ = ConfigDict(extra="forbid")

    seq: int
    at: str
    """UTC, ISO 8601 with a ``Z``."""
    kind: MemoryKind
    text: str
    location: str | None = None
    """Id of the room the character was in."""
    occupants: list[str] = field(default_factory=list)
    """Names of the others present."""
    command: str | None = None
    reason: str | None = None
    failed: bool = False
    sim: str | None = None
    """The world clock's reading (``YYYY-MM-DDTHH:MM``) when it was recorded."""
    speaker: str | None = None
    """For speech only: the name of who spoke (another character's for an observation
    of what it said, the character's own for the result of its ``say``)."""

    def to_json(self) -> bytes:
        """One journal line's JSON (no newline)."""
        return _ADAPTER.serializer.to_json(self)  # dump_json without its Python-side wrapper

    @staticmethod
    def from_json(data: bytes | str) -> MemoryRecord:
        """Parse and check one journal line; raises ``pydantic.ValidationError``."""
        return _ADAPTER.validate_json(data)


_ADAPTER: TypeAdapter[MemoryRecord] = TypeAdapter(MemoryRecord)


def utc_now() -> str:
    """The time of day as the vault writes it (``engine.wallclock``: a replay serves the
    recorded one)."""
    return wallclock.utc_iso()
