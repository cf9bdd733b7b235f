"""The world clock's arithmetic (pure, no I/O): rounds of agent turns, readings, setting
it by hand, the human line, and its saved shape."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.world.clock import (
    DEFAULT_START,
    EXAMPLE,
    ClockError,
    WorldClock,
    format_reading,
    parse_reading,
)

READING = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")

minutes_ = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 12, 31)).map(
    lambda moment: moment.replace(second=0, microsecond=0)
)
"""Whole-minute moments, far enough from the calendar's ends for any run below."""


@given(
    start=minutes_,
    minutes=st.integers(0, 24 * 60),
    agents=st.integers(1, 20),
    turns=st.integers(0, 400),
)
def test_the_clock_moves_once_a_round(
    start: datetime, minutes: int, agents: int, turns: int
) -> None:
    clock = WorldClock.starting(format_reading(start), minutes)
    rounds = sum(clock.turn_taken(agents) for _ in range(turns))
    assert rounds == turns // agents
    assert clock.reading() == format_reading(start + timedelta(minutes=minutes * rounds))
    assert clock.turns == turns % agents
    assert READING.fullmatch(clock.reading())
    assert clock.start == start, "the start never moves"


@given(start=minutes_, turns=st.integers(0, 50), agents=st.integers(-3, 0))
def test_with_no_agents_nothing_moves(start: datetime, turns: int, agents: int) -> None:
    clock = WorldClock.starting(format_reading(start))
    for _ in range(turns):
        assert not clock.turn_taken(agents)
    assert clock.now == start
    assert clock.turns == 0


@given(
    moment=st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59)).map(
        lambda m: m.replace(second=0, microsecond=0)
    ),
    turns=st.integers(0, 5),
)
def test_set_then_reading_round_trips(moment: datetime, turns: int) -> None:
    clock = WorldClock.starting()
    for _ in range(turns):
        clock.turn_taken(3)
    reading = format_reading(moment)
    clock.set(reading)
    assert clock.reading() == reading
    assert clock.now == moment
    assert clock.turns == 0, "a set clock starts a new round"
    assert parse_reading(reading) == moment


@given(start=minutes_, minutes=st.integers(0, 600), turns=st.integers(0, 60))
def test_the_saved_shape_round_trips(start: datetime, minutes: int, turns: int) -> None:
    clock = WorldClock.starting(format_reading(start), minutes)
    for _ in range(turns):
        clock.turn_taken(4)
    again = WorldClock.from_dict(clock.to_dict())
    assert again == clock
    assert again.to_dict() == clock.to_dict()


@given(st.text(max_size=60) | st.text(alphabet="0123456789-T: .+Z", max_size=30))
def test_any_text_is_a_reading_or_a_clock_error(text: str) -> None:
    problem: str | None = None
    try:
        moment = parse_reading(text)
    except ClockError as exc:
        problem = str(exc)
    if problem is not None:
        assert EXAMPLE in problem
        assert "\n" not in problem
    else:
        assert moment.tzinfo is None
        assert (moment.second, moment.microsecond) == (0, 0)


def test_the_default_clock() -> None:
    clock = WorldClock.starting()
    assert clock.reading() == DEFAULT_START == "2026-01-01T08:00"
    assert clock.minutes_per_round == 10
    assert clock.describe() == "It is 08:00 on Thursday, 1 January 2026 (day 1)."


def test_the_human_line_counts_days_from_the_start_date() -> None:
    clock = WorldClock.starting("2026-01-01T08:00", 10)
    for _ in range(4 * 3):
        clock.turn_taken(3)
    assert clock.describe() == "It is 08:40 on Thursday, 1 January 2026 (day 1)."
    clock.set("2026-01-02T00:00")
    assert clock.describe() == "It is 00:00 on Friday, 2 January 2026 (day 2)."
    clock.set("2026-03-01T09:05")
    assert clock.describe() == "It is 09:05 on Sunday, 1 March 2026 (day 60)."
    clock.set("2025-12-31T23:59")
    assert clock.describe() == "It is 23:59 on Wednesday, 31 December 2025 (1 day before day 1)."
    clock.set("2025-12-25T12:00")
    assert clock.describe().endswith("(7 days before day 1).")


@pytest.mark.parametrize(
    ("value", "reading"),
    [
        ("2026-03-01T09:00", "2026-03-01T09:00"),
        (" 2026-03-01 09:00 ", "2026-03-01T09:00"),
        ("2026-03-01T09:00:00", "2026-03-01T09:00"),
        ("2026-03-01", "2026-03-01T00:00"),
        (date(2026, 3, 1), "2026-03-01T00:00"),  # what YAML makes of an unquoted date
        (datetime(2026, 3, 1, 9, 0), "2026-03-01T09:00"),
        ("0005-01-01T00:00", "0005-01-01T00:00"),
    ],
)
def test_readings_it_accepts(value: object, reading: str) -> None:
    assert format_reading(parse_reading(value)) == reading


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("tomorrow", "'tomorrow' is not a date and time; write YYYY-MM-DDTHH:MM"),
        ("2026-13-01T09:00", "is not a date and time"),
        ("2026-02-30T09:00", "is not a date and time"),
        ("2026-03-01T25:00", "is not a date and time"),
        ("", "is not a date and time"),
        ("x" * 10_000, "'" + "x" * 40 + "...' is not a date and time"),
        ("2026-03-01T09:00:30", "the clock counts whole minutes"),
        ("2026-03-01T09:00+01:00", "simulation time has no time zone"),
        ("2026-03-01T09:00Z", "simulation time has no time zone"),
        (17, "not int"),
        (None, "not NoneType"),
    ],
)
def test_bad_readings_are_clear_errors(value: object, says: str) -> None:
    with pytest.raises(ClockError) as caught:
        parse_reading(value)
    assert says in str(caught.value)
    assert EXAMPLE in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_bad_set_changes_nothing() -> None:
    clock = WorldClock.starting()
    clock.turn_taken(2)
    with pytest.raises(ClockError):
        clock.set("2026-03-01T9")
    assert (clock.reading(), clock.turns) == ("2026-01-01T08:00", 1)


@pytest.mark.parametrize(
    ("minutes", "says"),
    [
        (-1, "from 0 to 527040 (a year), not -1"),
        (10**30, "from 0 to 527040 (a year)"),
        (2.5, "a whole number, not float"),
        (True, "a whole number, not bool"),
        ("10", "a whole number, not str"),
    ],
)
def test_bad_round_lengths_are_clear_errors(minutes: object, says: str) -> None:
    with pytest.raises(ClockError, match=re.escape(says)):
        WorldClock.starting(DEFAULT_START, minutes)


def test_a_clock_of_zero_minutes_a_round_stands_still() -> None:
    clock = WorldClock.starting(DEFAULT_START, 0)
    for _ in range(10):
        clock.turn_taken(2)
    assert clock.reading() == DEFAULT_START


def test_at_the_end_of_the_calendar_the_clock_stands_still() -> None:
    clock = WorldClock.starting("9999-12-31T23:55", 10)
    assert clock.turn_taken(1)
    assert clock.reading() == "9999-12-31T23:55"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ([], "a clock is a mapping"),
        (
            {"start": DEFAULT_START, "minutes_per_round": 10, "now": DEFAULT_START},
            "missing 'turns'",
        ),
        (
            {
                "start": DEFAULT_START,
                "minutes_per_round": 10,
                "now": DEFAULT_START,
                "turns": 0,
                "x": 1,
            },
            "unknown key 'x'",
        ),
        (
            {"start": DEFAULT_START, "minutes_per_round": 10, "now": "soon", "turns": 0},
            "now: 'soon' is not a date and time",
        ),
        (
            {"start": 5, "minutes_per_round": 10, "now": DEFAULT_START, "turns": 0},
            "start must be text",
        ),
        (
            {"start": DEFAULT_START, "minutes_per_round": 10, "now": DEFAULT_START, "turns": -1},
            "turns must be a whole number of 0 or more",
        ),
        (
            {"start": DEFAULT_START, "minutes_per_round": -5, "now": DEFAULT_START, "turns": 0},
            "minutes_per_round must be from 0",
        ),
    ],
)
def test_a_saved_clock_that_is_not_a_clock(data: object, says: str) -> None:
    with pytest.raises(ClockError, match=re.escape(says)):
        WorldClock.from_dict(data)
