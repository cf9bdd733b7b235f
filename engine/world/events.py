"""What happens in a room and is seen by the others there.

An event goes to every character in its room except the one who caused it. Ambient
events ("pauses, deep in thought...") are shown to observers but never remembered.
``sim`` is the world clock's reading when it happened (stamped as it is delivered).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EventKind(StrEnum):
    SPEECH = "speech"
    EMOTE = "emote"
    MOVEMENT = "movement"
    ACTION = "action"
    BUILDING = "building"
    AMBIENT = "ambient"


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    text: str
    room_id: str
    actor_id: str | None = None
    sim: str = ""
    """The world clock's reading (``YYYY-MM-DDTHH:MM``); empty until it is delivered."""

    def at(self, sim: str) -> Event:
        """This event with the clock's reading ``sim`` (as ``dataclasses.replace``, which
        costs several times more: every event delivered gets one)."""
        return Event(self.kind, self.text, self.room_id, self.actor_id, sim)

    @property
    def remembered(self) -> bool:
        return self.kind is not EventKind.AMBIENT
