"""The shape of a world file (``worlds/*.yaml``), validated by pydantic.

Unknown keys are errors, so a typo never passes silently. An exit is written
``name: room_id`` or ``name: {to: room_id, one_way: true}``. The optional ``clock``
(``{start: 2026-01-01T08:00, minutes_per_round: 10}``) sets the world clock
(``engine.sim.clock``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.sim.clock import (
    DEFAULT_MINUTES_PER_ROUND,
    DEFAULT_START,
    check_minutes,
    format_reading,
    parse_reading,
)
from engine.world.model import Role

EntityId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]+$", max_length=64)]
Text = Annotated[
    str,
    Field(
        min_length=1,
        pattern="^[^\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufffe\uffff]+$",
    ),
]
"""A name: non-empty, and no control characters (no terminal escapes in a name), no
U+2028/U+2029 (YAML reads them as line breaks: a room name in the vault's world file
comment would start a line of its own), no bidi overrides or isolates (the rest of a
line would read in another order) and no U+FFFE/U+FFFF (YAML cannot hold them)."""
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExitSpec(_Strict):
    to: EntityId
    one_way: bool = False


class RoomSpec(_Strict):
    id: EntityId
    name: Text
    description: str = ""
    exits: dict[Text, ExitSpec] = {}
    aliases: list[Text] = []

    @field_validator("exits", mode="before")
    @classmethod
    def _short_exits(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        expanded: dict[Any, Any] = {}
        for name, target in value.items():
            if isinstance(target, str):
                target = {"to": target}
            elif not isinstance(target, dict):
                raise ValueError(
                    f"exit {name!r} must be `{name}: room_id` or `{name}: {{to: room_id, one_way: true}}`"
                )
            expanded[name] = target
        return expanded


class ObjectSpec(_Strict):
    id: EntityId
    name: Text
    location: EntityId
    description: str = ""
    aliases: list[Text] = []


class CharacterSpec(_Strict):
    name: Text
    type: Literal["agent", "player"]
    location: EntityId
    id: EntityId | None = None
    profile: str = ""
    description: str = ""
    role: Role = Role.PLAYER
    aliases: list[Text] = []
    think_interval: Seconds | None = None
    immediate_window: Annotated[int, Field(ge=1)] | None = None
    recent_window: Annotated[int, Field(ge=1)] | None = None
    model: Text | None = None
    occupation: str = ""
    goal: str = ""
    tags: list[Text] = []
    prioritize_recent: bool = False


class ClockSpec(_Strict):
    start: str = DEFAULT_START
    """When the world's day 1 begins (a YAML date or date-time is taken as written)."""
    minutes_per_round: int = DEFAULT_MINUTES_PER_ROUND

    @field_validator("start", mode="before")
    @classmethod
    def _start(cls, value: Any) -> str:
        return format_reading(parse_reading(value))

    @field_validator("minutes_per_round", mode="before")
    @classmethod
    def _minutes(cls, value: Any) -> int:
        return check_minutes(value)


class WorldSpec(_Strict):
    name: Text
    description: str = ""
    clock: ClockSpec = ClockSpec()
    rooms: Annotated[list[RoomSpec], Field(min_length=1)]
    objects: list[ObjectSpec] = []
    characters: list[CharacterSpec] = []
