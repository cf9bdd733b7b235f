"""time (anyone) and @time / @time set (admins): what they show, how a bad value is
refused, and that a moved clock is saved at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run

from engine.sim.simulation import Simulation

SHOWN = (
    "It is 08:00 on Thursday, 1 January 2026 (day 1).\n"
    "World clock: 2026-01-01T08:00 (10 minutes a round)."
)


def saved_now(vault_dir: Path) -> str:
    data = json.loads((vault_dir / "world" / "clock.json").read_text(encoding="utf-8"))
    now: str = data["now"]
    return now


@pytest.mark.parametrize("who", ["Pip", "Bea", "Pat", "Ada"])
def test_time_shows_the_clock_to_anyone(sim: Simulation, who: str) -> None:
    result = run(sim, who, "time")
    assert result.ok
    assert result.text == SHOWN


def test_time_follows_the_clock(sim: Simulation) -> None:
    for _ in range(2 * 4):
        sim.turn_taken(2)
    assert run(sim, "Pip", "time").text.splitlines()[0] == (
        "It is 08:40 on Thursday, 1 January 2026 (day 1)."
    )


def test_time_is_remembered_and_moves_nothing(sim: Simulation) -> None:
    run(sim, "Pip", "time")
    (memory,) = sim.minds["pip"].tail
    assert (memory.text, memory.command, memory.sim) == (SHOWN, "time", "2026-01-01T08:00")
    assert sim.minds["pat"].tail == [], "nobody sees you check the time"
    assert sim.clock.reading() == "2026-01-01T08:00"


def test_a_bare_at_time_shows_the_clock(sim: Simulation) -> None:
    result = run(sim, "Pat", "@time")
    assert result.ok
    assert result.text == SHOWN


def test_at_time_set_moves_the_clock_and_saves_it_at_once(
    sim: Simulation, vault_dir: Path, world_file: Path
) -> None:
    sim.turn_taken(2)  # half a round
    result = run(sim, "Pat", "@time set 2026-03-01T09:00")
    assert result.ok, result.shown
    assert result.text == (
        "The clock is moved from 2026-01-01T08:00 to 2026-03-01T09:00.\n"
        "It is 09:00 on Sunday, 1 March 2026 (day 60)."
    )
    assert sim.clock.reading() == "2026-03-01T09:00"
    assert sim.clock.turns == 0, "a new round begins"
    assert sim.minds["pat"].tail[-1].sim == "2026-03-01T09:00"
    assert saved_now(vault_dir) == "2026-03-01T09:00", "saved before anything else"

    sim.close()  # no save: as if killed now
    again = Simulation.open(vault_dir, world_file)
    try:
        assert again.clock.reading() == "2026-03-01T09:00"
        assert run(again, "Pip", "time").text.startswith("It is 09:00 on Sunday, 1 March 2026")
    finally:
        again.close()


@pytest.mark.parametrize(
    ("line", "reading"),
    [
        ("@time set 2026-03-01", "2026-03-01T00:00"),
        ("@time SET 2026-03-01 17:30", "2026-03-01T17:30"),
        ("@time set   2025-12-31T23:59  ", "2025-12-31T23:59"),
    ],
)
def test_at_time_set_takes_the_usual_ways_of_writing_it(
    sim: Simulation, line: str, reading: str
) -> None:
    assert run(sim, "Pat", line).ok
    assert sim.clock.reading() == reading


@pytest.mark.parametrize("who", ["Pip", "Bea"])
@pytest.mark.parametrize("line", ["@time", "@time set 2026-03-01T09:00"])
def test_at_time_needs_the_admin_role(
    sim: Simulation, vault_dir: Path, who: str, line: str
) -> None:
    role = "player" if who == "Pip" else "builder"
    result = run(sim, who, line)
    assert not result.ok
    assert result.text == f"'@time' needs the admin role; you are a {role}."
    assert sim.clock.reading() == "2026-01-01T08:00"
    assert saved_now(vault_dir) == "2026-01-01T08:00"


@pytest.mark.parametrize(
    ("line", "text", "hint"),
    [
        (
            "@time set tomorrow",
            "The clock was not moved: 'tomorrow' is not a date and time; write "
            "YYYY-MM-DDTHH:MM, e.g. 2026-03-01T09:00.",
            "Try: @time set 2026-03-01T09:00",
        ),
        (
            "@time set 2026-02-30T09:00",
            "The clock was not moved: '2026-02-30T09:00' is not a date and time; write "
            "YYYY-MM-DDTHH:MM, e.g. 2026-03-01T09:00.",
            "Try: @time set 2026-03-01T09:00",
        ),
        (
            "@time set 2026-03-01T09:00:30",
            "The clock was not moved: the clock counts whole minutes; write it as "
            "2026-03-01T09:00.",
            "Try: @time set 2026-03-01T09:00",
        ),
        (
            "@time set 2026-03-01T09:00+02:00",
            "The clock was not moved: simulation time has no time zone; write it as "
            "2026-03-01T09:00.",
            "Try: @time set 2026-03-01T09:00",
        ),
        ("@time set", "Set the clock to when?", "Try: @time set 2026-03-01T09:00"),
        (
            "@time 2026-03-01T09:00",
            "@time shows the clock, or moves it with 'set'.",
            "Type '@time' to see it, or '@time set 2026-03-01T09:00' to move it.",
        ),
    ],
)
def test_a_bad_value_is_a_failed_result_with_a_hint(
    sim: Simulation, vault_dir: Path, line: str, text: str, hint: str
) -> None:
    result = run(sim, "Pat", line)
    assert not result.ok
    assert (result.text, result.hint) == (text, hint)
    assert sim.clock.reading() == "2026-01-01T08:00"
    assert saved_now(vault_dir) == "2026-01-01T08:00"
    memory = sim.minds["pat"].tail[-1]
    assert memory.failed
    assert memory.text == f"You tried: {line}\nThis failed because: {text}\n{hint}"


@pytest.mark.parametrize(
    "value", ["\x1b[31m2026", "9" * 5_000, "٢٠٢٦-03-01T09:00", "2026-03-01T09:00\u2028x"]
)
def test_a_hostile_value_is_refused_in_one_short_line(sim: Simulation, value: str) -> None:
    result = run(sim, "Pat", f"@time set {value}")
    assert not result.ok
    assert "\n" not in result.text
    assert len(result.text) < 200
    assert sim.clock.reading() == "2026-01-01T08:00"


def test_full_width_digits_are_digits(sim: Simulation) -> None:
    """A command line is taken in NFKC: an input method's full-width digits are digits."""
    result = run(sim, "Pat", "@time set ２０２６-03-01T09:00")
    assert result.ok, result.shown
    assert sim.clock.reading() == "2026-03-01T09:00"


def test_help_describes_both(sim: Simulation) -> None:
    assert run(sim, "Pip", "help time").text.startswith(
        "time\nSay what time and day it is in the world"
    )
    shown = run(sim, "Pat", "help @time").text
    assert shown.startswith("@time [set <YYYY-MM-DDTHH:MM>]\nShow the world clock, or move it")
    assert "Example: @time set 2026-03-01T09:00" in shown
    assert "needs the admin role" in shown
    assert "time" in run(sim, "Pip", "help query").text
    assert "@time" not in run(sim, "Pip", "commands").text
    assert "admin: @save, @impersonate, @time" in run(sim, "Pat", "commands").text
