"""An event as the world makes it, and as it is delivered with the clock's reading."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from engine.world.events import Event, EventKind

TEXT = st.text(max_size=20)


@given(st.sampled_from(EventKind), TEXT, TEXT, st.none() | TEXT, TEXT, TEXT)
def test_an_event_at_a_reading_keeps_every_other_field(
    kind: EventKind, text: str, room: str, actor: str | None, sim: str, reading: str
) -> None:
    event = Event(kind, text, room, actor, sim)
    assert event.at(reading) == dataclasses.replace(event, sim=reading)
    assert {f.name for f in dataclasses.fields(Event)} == {
        "kind",
        "text",
        "room_id",
        "actor_id",
        "sim",
    }  # a new field must be carried by Event.at too
