"""The world clock: simulation time, distinct from the wall clock (pure, no I/O).

It starts at the world file's ``clock.start`` and moves ``minutes_per_round`` forward
each round, a round being as many agent turns as there are agents. So it depends only
on how many turns were taken, never on how fast a model answers: a replay reads the
same times. ``@time set`` moves it by hand.

    clock = WorldClock.starting("2026-01-01T08:00", minutes_per_round=10)
    clock.turn_taken(agents=2)      # half a round: still 08:00
    clock.turn_taken(agents=2)      # a round: 08:10
    clock.reading()                 # "2026-01-01T08:10"
    clock.describe()                # "It is 08:10 on Thursday, 1 January 2026 (day 1)."

A reading is ``YYYY-MM-DDTHH:MM``: whole minutes, no time zone (simulation time has none).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

DEFAULT_START = "2026-01-01T08:00"
DEFAULT_MINUTES_PER_ROUND = 10
MAX_MINUTES_PER_ROUND = 366 * 24 * 60
"""A round may last at most a (leap) year."""
EXAMPLE = "2026-03-01T09:00"
SET_HINT = f"Try: @time set {EXAMPLE}"
"""What to type instead of a bad ``@time set`` value."""

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


class ClockError(ValueError):
    """A clock value that is not a date and time in whole minutes (or a saved clock
    that is not a clock); ``str()`` says what is wrong and how to write it."""


def parse_reading(value: object) -> datetime:
    """``"2026-03-01T09:00"`` (also ``2026-03-01 09:00``, ``...T09:00:00`` or a bare
    date, which is midnight; YAML's own dates and date-times too) as a naive datetime;
    anything else is a ``ClockError``."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise ClockError(
                f"{shown!r} is not a date and time; write YYYY-MM-DDTHH:MM, e.g. {EXAMPLE}"
            ) from None
    else:
        raise ClockError(f"a date and time is text such as {EXAMPLE}, not {type(value).__name__}")
    if moment.tzinfo is not None:
        raise ClockError(f"simulation time has no time zone; write it as {EXAMPLE}")
    if moment.second or moment.microsecond:
        raise ClockError(f"the clock counts whole minutes; write it as {EXAMPLE}")
    return moment


@lru_cache(maxsize=256)
def format_reading(moment: datetime) -> str:
    """``YYYY-MM-DDTHH:MM`` (the year always four digits); cached, since every event and
    memory of a round reads the same minute."""
    return moment.isoformat(timespec="minutes")


def check_minutes(value: object) -> int:
    """A round's length in minutes: a whole number from 0 (time stands still) to a year."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ClockError(f"minutes_per_round must be a whole number, not {type(value).__name__}")
    if not 0 <= value <= MAX_MINUTES_PER_ROUND:
        shown = f", not {value}" if abs(value) < 10**12 else ""
        raise ClockError(
            f"minutes_per_round must be from 0 to {MAX_MINUTES_PER_ROUND} (a year){shown}"
        )
    return value


@dataclass
class WorldClock:
    start: datetime
    """Day 1 is this date; a vault's memories without a reading count as this moment."""
    minutes_per_round: int
    now: datetime
    turns: int = 0
    """Agent turns taken in the round now running (0 just after a round completes)."""

    @classmethod
    def starting(
        cls, start: object = DEFAULT_START, minutes_per_round: object = DEFAULT_MINUTES_PER_ROUND
    ) -> WorldClock:
        """A clock standing at ``start``; a bad value is a ``ClockError``."""
        moment = parse_reading(start)
        return cls(moment, check_minutes(minutes_per_round), moment)

    def reading(self) -> str:
        """What the clock says now: ``YYYY-MM-DDTHH:MM``."""
        return format_reading(self.now)

    def turn_taken(self, agents: int) -> bool:
        """Count one agent turn of ``agents`` per round; True when it completed a round
        (the clock moved). With no agents nothing moves. At the end of the calendar
        (year 9999) the clock stands still."""
        if agents <= 0:
            return False
        self.turns += 1
        if self.turns < agents:
            return False
        self.turns = 0
        with contextlib.suppress(OverflowError):
            self.now += timedelta(minutes=self.minutes_per_round)
        return True

    def set(self, value: object) -> None:
        """Move the clock to ``value`` (a new round begins there); a bad value is a
        ``ClockError`` and changes nothing."""
        self.now = parse_reading(value)
        self.turns = 0

    @property
    def day(self) -> int:
        """Which day it is, the start date being day 1 (0 or less: before it)."""
        return (self.now.date() - self.start.date()).days + 1

    def describe(self) -> str:
        """``It is 08:40 on Thursday, 1 January 2026 (day 1).``"""
        now = self.now
        when = (
            f"{now:%H:%M} on {_WEEKDAYS[now.weekday()]}, "
            f"{now.day} {_MONTHS[now.month - 1]} {now.year}"
        )
        before = 1 - self.day
        day = f"day {self.day}" if before <= 0 else f"{before} day{'s' * (before > 1)} before day 1"
        return f"It is {when} ({day})."

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": format_reading(self.start),
            "minutes_per_round": self.minutes_per_round,
            "now": self.reading(),
            "turns": self.turns,
        }

    @classmethod
    def from_dict(cls, data: object) -> WorldClock:
        """The clock ``to_dict`` wrote; anything else is a ``ClockError`` saying why."""
        if not isinstance(data, dict):
            raise ClockError("a clock is a mapping of start, minutes_per_round, now and turns")
        expected = {"start", "minutes_per_round", "now", "turns"}
        unknown = sorted(str(key) for key in data if key not in expected)
        if unknown:
            raise ClockError(f"unknown key {unknown[0]!r}")
        missing = sorted(expected - set(data))
        if missing:
            raise ClockError(f"missing {missing[0]!r}")
        turns = data["turns"]
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 0:
            raise ClockError("turns must be a whole number of 0 or more")
        moments = []
        for key in ("start", "now"):
            if not isinstance(data[key], str):
                raise ClockError(
                    f"{key} must be text such as {EXAMPLE}, not {type(data[key]).__name__}"
                )
            try:
                moments.append(parse_reading(data[key]))
            except ClockError as exc:
                raise ClockError(f"{key}: {exc}") from None
        start, now = moments
        return cls(start, check_minutes(data["minutes_per_round"]), now, turns)
