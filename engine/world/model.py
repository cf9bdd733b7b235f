"""The things a world is made of: rooms, exits, objects and characters (no I/O).

Every entity has a stable string id (from the world file, or generated in-world such
as ``room-7``) that commands accept as ``#<id>``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal

from engine.world.folder_names import safe_name

CharacterType = Literal["agent", "player"]

COMPASS: dict[str, str] = {
    "north": "south",
    "south": "north",
    "east": "west",
    "west": "east",
    "northeast": "southwest",
    "southwest": "northeast",
    "northwest": "southeast",
    "southeast": "northwest",
    "up": "down",
    "down": "up",
    "in": "out",
    "out": "in",
}
"""Each compass direction and the way back from it."""

ABBREVIATIONS: dict[str, str] = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "ne": "northeast",
    "nw": "northwest",
    "se": "southeast",
    "sw": "southwest",
    "u": "up",
    "d": "down",
}


class Role(StrEnum):
    """Who may run what: ``player`` < ``builder`` < ``admin``."""

    PLAYER = "player"
    BUILDER = "builder"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return _ROLE_RANK[self]

    def allows(self, needed: Role) -> bool:
        return self.rank >= needed.rank


_ROLE_RANK = {Role.PLAYER: 0, Role.BUILDER: 1, Role.ADMIN: 2}


def way_back(exit_name: str, source_room_id: str) -> str:
    """The name of the automatic return exit: the opposite compass point, else the
    source room's id (``north`` -> ``south``; ``lobby`` from ``garden`` -> ``garden``)."""
    return COMPASS.get(exit_name, source_room_id.lower())


@dataclass
class Room:
    id: str
    name: str
    description: str = ""
    exits: dict[str, str] = field(default_factory=dict)
    """Exit name -> id of the room it leads to (directed; the way back is its own exit)."""
    aliases: list[str] = field(default_factory=list)


@dataclass
class Thing:
    """An object lying in a room: examinable scenery or an item."""

    id: str
    name: str
    location: str
    description: str = ""
    aliases: list[str] = field(default_factory=list)


@dataclass
class Character:
    """An agent (LLM-driven) or a player; both act through the same commands."""

    id: str
    name: str
    type: CharacterType
    location: str
    profile: str = ""
    description: str = ""
    role: Role = Role.PLAYER
    aliases: list[str] = field(default_factory=list)
    think_interval: float | None = None
    immediate_window: int | None = None
    recent_window: int | None = None
    model: str | None = None
    occupation: str = ""
    """What the character does (a gardener, the innkeeper): retrieval's "role"."""
    goal: str = ""
    """What it is after now; its words count in what it brings to mind."""
    tags: list[str] = field(default_factory=list)
    """Topics it cares about; they count in what it brings to mind."""
    prioritize_recent: bool = False
    """Retrieval weighs recency over relevance (0.6 / 0.4 instead of 0.3 / 0.7)."""

    @property
    def folder(self) -> str:
        """The vault folder name: spaces as ``_``, only ``[A-Za-z0-9_-]`` kept."""
        return safe_name(self.name, what="character name")


def character_fields(character: Character) -> dict[str, Any]:
    """A character as plain JSON values (a run's record of a character made mid-run)."""
    return {name: value.value if isinstance(value, Role) else value
            for name, value in asdict(character).items()}  # fmt: skip


def character_from_fields(fields: dict[str, Any]) -> Character:
    """The character ``character_fields`` wrote."""
    return Character(**{**fields, "role": Role(fields.get("role", Role.PLAYER.value))})
