"""The chronicle's prose (``engine.world.narrative``) and its file names
(``engine.vault.chronicle.room_file_stem``): pure, property-tested."""

from __future__ import annotations

import re
from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from engine.vault.chronicle import room_file_stem
from engine.world.narrative import MAX_NAME, MAX_TEXT, line, one_line, title

START = date(2026, 1, 1)
any_text = st.text(st.characters(), max_size=300)
readings = st.one_of(
    st.datetimes().map(lambda moment: moment.replace(second=0, microsecond=0).isoformat()),
    any_text,
)


def test_a_line_is_the_day_the_time_and_the_text() -> None:
    said = 'Ada says, "hello."'
    assert line(said, "2026-01-02T08:15", start=START) == '- [Day 2, 08:15] Ada says, "hello."'
    assert line(said, "2026-01-01T23:59", start=START, room="The Hall") == (
        '- [Day 1, 23:59] The Hall: Ada says, "hello."'
    )


def test_a_reading_that_is_no_time_is_a_question_mark() -> None:
    assert line("Ada waves", "", start=START) == "- [?] Ada waves"


def test_a_title_names_the_day() -> None:
    assert title("The Hall", "2026-01-02T08:15", start=START) == (
        "The Hall, day 2 (Friday 2 January 2026)"
    )


def test_hostile_text_stays_on_one_line() -> None:
    assert line("a\nb\r\u2028c\u202ed\x1b[31m", "2026-01-01T08:00", start=START) == (
        "- [Day 1, 08:00] a b c d [31m"
    )
    assert one_line("x" * (MAX_TEXT + 5)) == "x" * (MAX_TEXT - 1) + "…"


@given(any_text, readings, st.one_of(st.none(), any_text))
def test_any_event_renders_as_one_readable_line(text: str, sim: str, room: str | None) -> None:
    rendered = line(text, sim, start=START, room=room)
    assert rendered.startswith("- [")
    assert rendered.splitlines() == [rendered], "never more than one line"
    assert rendered == rendered.strip()
    rendered.encode("utf-8")  # no lone surrogate
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", rendered)
    assert len(rendered) <= len("- [Day -999999, 00:00] ") + MAX_NAME + 2 + MAX_TEXT


@given(any_text, readings)
def test_any_title_is_one_line(name: str, sim: str) -> None:
    shown = title(name, sim, start=START)
    assert shown
    assert shown.splitlines() == [shown]
    shown.encode("utf-8")


@given(any_text)
def test_a_room_file_name_never_leaves_its_folder(room_id: str) -> None:
    stem = room_file_stem(room_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", stem), stem
    assert stem.lower() not in ("con", "nul", "aux", "prn")


@given(any_text, any_text)
def test_two_room_ids_never_share_a_file(first: str, second: str) -> None:
    if first != second:
        assert room_file_stem(first) != room_file_stem(second)


def test_plain_ids_are_kept_and_others_hashed() -> None:
    assert room_file_stem("hall") == "hall"
    assert room_file_stem("room-7") == "room-7"
    assert re.fullmatch(r"etc-[0-9a-f]{8}", room_file_stem("../etc"))
    assert re.fullmatch(r"Hall-[0-9a-f]{8}", room_file_stem("Hall"))
    assert re.fullmatch(r"room-[0-9a-f]{8}", room_file_stem("../"))
    assert re.fullmatch(r"con-[0-9a-f]{8}", room_file_stem("con"))
