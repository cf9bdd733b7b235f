"""The shape of a world file (``worlds/*.yaml``), validated by pydantic.

Unknown keys are errors, so a typo never passes silently. An exit is written
``name: room_id`` or ``name: {to: room_id, one_way: true}``. The optional ``clock``
(``{start: 2026-01-01T08:00, minutes_per_round: 10}``) sets the world clock
(``engine.world.clock``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.world.clock import (
    DEFAULT_MINUTES_PER_ROUND,
    DEFAULT_START,
    MAX_MINUTES_PER_ROUND,
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
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
"""Numbers are strict: ``true`` or ``"2"`` is not a number of seconds (nor, below, a
count; nor ``yes`` or ``1`` a ``true``), so what loads is what the editor's schema
(``mudsim schema world``) accepts."""
Count = Annotated[int, Field(ge=1, strict=True)]
Flag = Annotated[bool, Field(strict=True)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExitSpec(_Strict):
    """An exit's long form; ``name: room_id`` is short for ``name: {to: room_id}``."""

    to: EntityId
    """The id of the room it leads to."""
    one_way: Flag = False
    """``true``: no way back is made (an exit is two-way by default)."""


class RoomSpec(_Strict):
    """A room; the first room is where a character goes whose room a crash lost."""

    id: EntityId
    """What exits and locations point at (1-64 of letters, digits, ``_``, ``-``)."""
    name: Text
    """What ``look`` shows; ``go`` accepts it too."""
    description: str = ""
    """Shown by ``look``."""
    exits: dict[Text, ExitSpec] = {}
    """Exit name -> ``room_id``, or ``{to: room_id, one_way: true}``. Two-way unless
    ``one_way``: ``north: library`` also gives the library a ``south`` back."""
    aliases: list[Text] = []
    """Other names commands match it by."""

    @field_validator("exits", mode="before", json_schema_input_type=dict[Text, EntityId | ExitSpec])
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
    """A thing lying in a room."""

    id: EntityId
    """Its id (1-64 of letters, digits, ``_``, ``-``); rooms, objects and characters
    share one set of ids."""
    name: Text
    """E.g. ``a copper kettle`` (a leading a/an/the is ignored when matching)."""
    location: EntityId
    """The id of the room it lies in."""
    description: str = ""
    """What ``examine`` shows."""
    aliases: list[Text] = []
    """Other names it answers to, e.g. ``[kettle]``."""


class CharacterSpec(_Strict):
    """An agent (thinks through the LLM) or a player (typed for)."""

    name: Text
    """Also its vault folder ``agents/<folder>/`` (spaces as ``_``)."""
    type: Literal["agent", "player"]
    """``agent``: thinks through the LLM; ``player``: typed for."""
    location: EntityId
    """The id of the room it starts in."""
    id: EntityId | None = None
    """Its id (default: its folder name, lower-cased)."""
    profile: str = ""
    """Who they are: an agent's prompt begins ``You are <name>. <profile>``; an agent's
    must not be blank."""
    description: str = ""
    """What others see when they ``examine`` the character."""
    role: Role = Role.PLAYER
    """Which commands it may run."""
    aliases: list[Text] = []
    """Other names it answers to."""
    think_interval: Seconds | None = None
    """Seconds an agent waits after acting before it thinks again (default: the vault's
    ``ai_defaults.md``)."""
    immediate_window: Count | None = None
    """Memories kept verbatim before compaction (default: the vault's
    ``memory_compaction.md``)."""
    recent_window: Count | None = None
    """Memories the recent summary covers (default: the vault's
    ``memory_compaction.md``)."""
    model: Text | None = None
    """The model of this character's turns and summaries."""
    occupation: str = ""
    """What it does (``gardener``): retrieval weighs items tagged with it."""
    goal: str = ""
    """What it is after now: its words count among the situation's keywords."""
    tags: list[Text] = []
    """Topics it cares about: keywords too."""
    prioritize_recent: Flag = False
    """Retrieval weighs recency 0.6 and relevance 0.4 (instead of 0.3 / 0.7)."""


class ClockSpec(_Strict):
    """The world clock: simulation time, moved on each round of agent turns."""

    start: str = DEFAULT_START
    """When the world's day 1 begins: ``YYYY-MM-DDTHH:MM``, whole minutes, no time zone
    (a bare date is midnight; a YAML date or date-time is taken as written)."""
    minutes_per_round: Annotated[int, Field(ge=0, le=MAX_MINUTES_PER_ROUND)] = (
        DEFAULT_MINUTES_PER_ROUND
    )
    """How far the clock moves each round of agent turns (0: it stands still)."""

    @field_validator("start", mode="before")
    @classmethod
    def _start(cls, value: Any) -> str:
        return format_reading(parse_reading(value))

    @field_validator("minutes_per_round", mode="before")
    @classmethod
    def _minutes(cls, value: Any) -> int:
        return check_minutes(value)


class WorldSpec(_Strict):
    """A world file: rooms, exits, objects and characters."""

    name: Text
    """The world's name (the TUI's title, messages)."""
    description: str = ""
    """Accepted; the engine does not use it."""
    clock: ClockSpec = ClockSpec()
    """The world clock (default: from 2026-01-01T08:00, 10 minutes a round)."""
    rooms: Annotated[list[RoomSpec], Field(min_length=1)]
    """At least one room."""
    objects: list[ObjectSpec] = []
    """Things lying in rooms."""
    characters: list[CharacterSpec] = []
    """In this order; the first ``player`` is the default ``--as``."""
