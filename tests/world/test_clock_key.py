"""The world file's optional ``clock`` key: its defaults, what it accepts, and every bad
value refused with the file, line and field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.errors import WorldFileError
from engine.world.loader import load_world_file

WORLDS = Path(__file__).parents[2] / "worlds"
HEAD = "name: Clocked\nrooms:\n  - {id: hall, name: The Hall}\n"


def world_with(tmp_path: Path, clock: str) -> Path:
    path = tmp_path / "clocked.yaml"
    path.write_text(HEAD + clock, encoding="utf-8")
    return path


def test_without_the_key_the_clock_starts_at_the_default(tmp_path: Path) -> None:
    world = load_world_file(world_with(tmp_path, ""))
    assert world.clock.reading() == "2026-01-01T08:00"
    assert world.clock.minutes_per_round == 10
    assert world.clock.turns == 0


@pytest.mark.parametrize(
    ("clock", "start", "minutes"),
    [
        ("clock:\n  start: 2031-06-15T06:30\n  minutes_per_round: 5\n", "2031-06-15T06:30", 5),
        ('clock: {start: "2031-06-15 06:30"}\n', "2031-06-15T06:30", 10),
        ("clock: {start: 2031-06-15}\n", "2031-06-15T00:00", 10),  # YAML reads a date
        ("clock: {start: 2031-06-15T06:30:00}\n", "2031-06-15T06:30", 10),  # and a date-time
        ("clock: {minutes_per_round: 60}\n", "2026-01-01T08:00", 60),
        ("clock: {minutes_per_round: 0}\n", "2026-01-01T08:00", 0),
        ("clock: {}\n", "2026-01-01T08:00", 10),
    ],
)
def test_the_clock_key(tmp_path: Path, clock: str, start: str, minutes: int) -> None:
    world = load_world_file(world_with(tmp_path, clock))
    assert world.clock.reading() == start
    assert world.clock.start == world.clock.now
    assert world.clock.minutes_per_round == minutes


@pytest.mark.parametrize(
    ("clock", "line", "field", "says"),
    [
        ("clock: {start: tomorrow}\n", 4, "clock.start", "'tomorrow' is not a date and time"),
        ("clock:\n  start: 2026-03-01T9\n", 5, "clock.start", "is not a date and time"),
        ("clock:\n  start: 2026-03-01T09:00:30\n", 5, "clock.start", "whole minutes"),
        ("clock: {start: 2026-03-01T09:00+01:00}\n", 4, "clock.start", "no time zone"),
        ("clock: {start: [2026]}\n", 4, "clock.start", "not list"),
        ("clock:\n  minutes_per_round: -10\n", 5, "clock.minutes_per_round", "from 0 to"),
        ("clock: {minutes_per_round: ten}\n", 4, "clock.minutes_per_round", "whole number"),
        ("clock: {minutes_per_round: 1.5}\n", 4, "clock.minutes_per_round", "whole number"),
        ("clock:\n  start: 2026-01-01T08:00\n  tick: 5\n", 6, "clock.tick", "unknown key 'tick'"),
        ("clock: 10\n", 4, "clock", "must be a mapping"),
    ],
)
def test_a_bad_clock_names_file_line_and_field(
    tmp_path: Path, clock: str, line: int, field: str, says: str
) -> None:
    path = world_with(tmp_path, clock)
    with pytest.raises(WorldFileError) as caught:
        load_world_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}, {field}: "), message
    assert says in message
    assert "\n" not in message
    assert "Value error" not in message


def test_an_impossible_yaml_date_is_refused_at_its_line(tmp_path: Path) -> None:
    path = world_with(tmp_path, "clock:\n  start: 2026-02-30\n")
    with pytest.raises(WorldFileError, match=re.escape(f"{path}, line 5:")):
        load_world_file(path)


@pytest.mark.parametrize("name", sorted(p.name for p in WORLDS.glob("*.yaml")))
def test_every_shipped_world_has_a_clock(name: str) -> None:
    world = load_world_file(WORLDS / name)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", world.clock.reading())
