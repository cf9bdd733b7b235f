"""go: by exit, abbreviation, bare exit name, neighbouring room, far room."""

from __future__ import annotations

import pytest
from helpers import memories, run

from engine.sim.simulation import Simulation
from engine.world.model import Room

HALL_EXITS = "Exits here: north, stair and down."


def where(sim: Simulation, who: str) -> str:
    return sim.character(who).location


def test_go_by_exit_moves_and_is_seen_on_both_sides(sim: Simulation) -> None:
    result = run(sim, "Pat", "go north")
    assert result.ok
    assert result.text.startswith("You go north to The Yard.\nThe Yard\nA muddy yard.")
    assert where(sim, "Pat") == "yard"
    assert memories(sim, "Ada") == ["Pat leaves north to The Yard."]
    assert memories(sim, "Bo") == ["Pat arrives from The Hall."]


@pytest.mark.parametrize("line", ["go n", "north", "n", "go to north", "GO North"])
def test_other_ways_to_go_north(sim: Simulation, line: str) -> None:
    result = run(sim, "Pat", line)
    assert result.ok, result.shown
    assert result.text.startswith("You go north to The Yard.")
    assert where(sim, "Pat") == "yard"


def test_bare_abbreviation_uses_this_rooms_exit(sim: Simulation) -> None:
    run(sim, "Pat", "stair")
    assert where(sim, "Pat") == "tower"
    result = run(sim, "Pat", "e")
    assert result.ok
    assert result.text.startswith("You go east to The Cellar.")
    assert where(sim, "Pat") == "cellar"


@pytest.mark.parametrize("line", ["go tower", "go to The Tower", "go #tower"])
def test_go_to_a_neighbouring_room_by_name(sim: Simulation, line: str) -> None:
    result = run(sim, "Pat", line)
    assert result.ok
    assert result.text.startswith("You go to The Tower.")  # an exit that is no direction
    assert where(sim, "Pat") == "tower"


def test_go_to_a_far_room_takes_one_step_and_says_the_rest(sim: Simulation) -> None:
    result = run(sim, "Bea", "go tower")
    assert result.ok
    assert result.text.startswith("You go south to The Hall.")
    assert result.text.endswith("(Heading for The Tower: then stair.)")
    assert where(sim, "Bea") == "hall"
    assert memories(sim, "Bo") == ["Bea leaves south to The Hall."]


def test_a_one_way_exit_is_never_walked_backwards(sim: Simulation) -> None:
    run(sim, "Pat", "go down")
    assert where(sim, "Pat") == "cellar"
    result = run(sim, "Pat", "go tower")
    assert result.ok
    assert result.text.startswith("You go up to The Hall.")
    assert result.text.endswith("(Heading for The Tower: then stair.)")
    assert where(sim, "Pat") == "hall"


def test_go_where_you_already_are_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "go hall")
    assert not result.ok
    assert result.text == "You are already in The Hall."
    assert result.hint == HALL_EXITS
    assert where(sim, "Pat") == "hall"


def test_go_nowhere_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "go")
    assert not result.ok
    assert result.text == "Go where?"
    assert result.hint == HALL_EXITS


@pytest.mark.parametrize("target", ["west", "w", "garden"])
def test_go_through_no_such_exit_or_room_fails(sim: Simulation, target: str) -> None:
    result = run(sim, "Pat", f"go {target}")
    assert not result.ok
    assert result.text == f"You don't see any exit or room called '{target}'."
    assert result.hint == f"{HALL_EXITS} Try 'rooms' to list every room."
    assert where(sim, "Pat") == "hall"
    assert memories(sim, "Ada") == []


def test_go_ambiguous_asks_which_way(sim: Simulation) -> None:
    result = run(sim, "Pat", "go the")
    assert not result.ok
    assert result.text == "Which way do you mean: north, stair and down?"
    assert where(sim, "Pat") == "hall"


def test_go_to_an_unreachable_room_fails(sim: Simulation) -> None:
    sim.world.add_room(Room("island", "The Island", "Sand.", exits={"swim": "hall"}))
    result = run(sim, "Pat", "go island")
    assert not result.ok
    assert result.text == "There is no way from The Hall to The Island."
    assert where(sim, "Pat") == "hall"


def test_leaving_by_an_exit_that_is_no_direction_reads_as_english(sim: Simulation) -> None:
    """Not "Pat leaves stair to The Tower." / "You go stair to The Tower." (issue 32)."""
    run(sim, "Pat", "go tower")
    seen = [m for m in memories(sim, "Pip") if "Pat leaves" in m]
    assert seen == ["Pat leaves for The Tower."]


# -- a mistyped exit is corrected as a mistyped verb is -----------------------------


@pytest.mark.parametrize(
    ("line", "taken_for", "room"),
    [
        ("go stiar", "stair", "tower"),  # a swap of two letters: one edit
        ("go nroth", "north", "yard"),
        ("go to the yrad", "The Yard", "yard"),  # the room the exit leads to
        ("go ｔｏｗｅｒ", None, "tower"),  # full-width letters are letters: no correction
    ],
)
def test_a_mistyped_exit_is_taken_for_the_nearest_one_and_said(
    sim: Simulation, line: str, taken_for: str | None, room: str
) -> None:
    result = run(sim, "Pat", line)
    assert result.ok, result.shown
    assert where(sim, "Pat") == room
    if taken_for is None:
        assert not result.text.startswith("(Taking")
    else:
        typed = line.split(" ", 1)[1].removeprefix("to ")
        assert result.text.startswith(f"(Taking '{typed}' as '{taken_for}'.)\nYou go ")
        assert memories(sim, "Pat")[-1].startswith(f"(Taking '{typed}' as '{taken_for}'.)")


def test_an_exit_is_never_guessed(sim: Simulation) -> None:
    """Two exits as near as each other are asked about; prose and words far from every
    exit are not corrected at all."""
    sim.world.rooms["hall"].exits["stairs"] = "cellar"
    result = run(sim, "Pat", "go stairz")
    assert not result.ok
    assert result.text == "Which way do you mean: stair and stairs?"
    for line in ("go there", "go xyz", "go nowhere-at-all"):
        result = run(sim, "Pat", line)
        assert not result.ok
        assert "Taking" not in result.text
    assert where(sim, "Pat") == "hall"
