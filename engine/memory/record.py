"""One memory: a line of an agent's append-only journal (``memories.jsonl``).

The record is flat so a person can read and grep the journal; ``seq`` counts from 0
and equals the line's index.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class MemoryKind(StrEnum):
    OBSERVATION = "observation"
    """Something another character did in the same room."""
    RESULT = "result"
    """The narrative result of one of the character's own commands."""
    THOUGHT = "thought"
    """A private thought (``think``)."""
    IMPORTED = "imported"
    """Brought in from outside (a copied folder, Miniworld memory files)."""


class MemoryRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int
    at: str
    """UTC, ISO 8601 with a ``Z``."""
    kind: MemoryKind
    text: str
    location: str | None = None
    """Id of the room the character was in."""
    occupants: list[str] = []
    """Names of the others present."""
    command: str | None = None
    reason: str | None = None
    failed: bool = False


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")[:-6] + "Z"
