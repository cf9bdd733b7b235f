"""The chronicle's prose (pure, no I/O): an event as one line people read.

    line("Ada says, \"hello.\"", "2026-01-02T08:15", start=date(2026, 1, 1))
    # '- [Day 2, 08:15] Ada says, "hello."'
    line(..., room="The Hall")      # the world chronicle names the room
    # '- [Day 2, 08:15] The Hall: Ada says, "hello."'
    title("The Hall", "2026-01-02T08:15", start=date(2026, 1, 1))
    # 'The Hall, day 2 (Friday 2 January 2026)'

A line is always one line: every control character, line or paragraph separator,
bidi control, lone surrogate and noncharacter becomes a space or U+FFFD, so no text
(an agent's speech, a hostile room name) can start a line of its own or break the
file's encoding. A long text is cut at ``MAX_TEXT`` characters with an ellipsis.
Day 1 is the world clock's start date (``engine.world.clock``).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from functools import lru_cache
from typing import Final

from engine.world.clock import ClockError, parse_reading

MAX_TEXT: Final = 2_000
"""The most characters of an event's text one chronicle line keeps."""
MAX_NAME: Final = 200
"""The most characters of a room or world name a line or a title keeps."""

_BREAKING = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffe\uffff]"
)
"""Controls (line breaks among them), line/paragraph separators, bidi marks and controls,
U+FFFE/U+FFFF: each becomes a space."""
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_WEEKDAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS: Final = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip


@lru_cache(maxsize=1024)
def one_line(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` made safe for one line of a Markdown file: no line breaks or controls,
    no lone surrogates, spaces collapsed, at most ``limit`` characters (then ``…``)."""
    text = _SURROGATE.sub("\ufffd", _BREAKING.sub(" ", text))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@lru_cache(maxsize=1024)
def moment_of(sim: str) -> datetime | None:
    """The world clock's reading ``sim`` as a datetime; None if it is not one."""
    try:
        return parse_reading(sim)
    except ClockError:
        return None


def day_number(moment: datetime, start: date) -> int:
    """Which day ``moment`` falls on, ``start`` being day 1."""
    return (moment.date() - start).days + 1


@lru_cache(maxsize=1024)
def stamp(sim: str, start: date) -> str:
    """``[Day 2, 08:15]``; ``[?]`` for a reading that is not a time."""
    moment = moment_of(sim)
    if moment is None:
        return "[?]"
    return f"[Day {day_number(moment, start)}, {moment:%H:%M}]"


def line(text: str, sim: str, *, start: date, room: str | None = None) -> str:
    """The chronicle line of an event: ``- [Day 2, 08:15] <text>``, with ``<room>: ``
    before the text in the world chronicle."""
    where = f"{one_line(room, MAX_NAME)}: " if room is not None else ""
    said = one_line(text) or "(nothing)"
    return f"- {stamp(sim, start)} {where}{said}"


@lru_cache(maxsize=1024)
def title(name: str, sim: str, *, start: date) -> str:
    """A chronicle file's title: ``<name>, day 2 (Friday 2 January 2026)``."""
    shown = one_line(name, MAX_NAME) or "Chronicle"
    moment = moment_of(sim)
    if moment is None:
        return shown
    when = f"{_WEEKDAYS[moment.weekday()]} {moment.day} {_MONTHS[moment.month - 1]} {moment.year}"
    return f"{shown}, day {day_number(moment, start)} ({when})"
