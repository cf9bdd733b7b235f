"""@dig, @exit, @teleport / @tp (builders and admins only)."""

from __future__ import annotations

import pytest
from helpers import memories, run

from engine.sim.simulation import Simulation


def test_a_player_may_not_dig(sim: Simulation) -> None:
    result = run(sim, "Pip", "@dig The Shed")
    assert not result.ok
    assert result.text == "'@dig' needs the builder role; you are a player."
    assert result.hint == "Type 'commands' to see what you can do."
    assert len(sim.world.rooms) == 4


def test_dig_makes_a_room_joined_both_ways(sim: Simulation) -> None:
    result = run(sim, "Bea", "@dig The Old Shed -> Dusty and dim.")
    assert result.ok
    assert result.text == (
        "You dig The Old Shed (#room-1). The exit 'old shed' leads there; 'out' leads back."
    )
    shed = sim.world.rooms["room-1"]
    assert (shed.name, shed.description, shed.exits) == (
        "The Old Shed",
        "Dusty and dim.",
        {"out": "yard"},
    )
    assert sim.world.rooms["yard"].exits["old shed"] == "room-1"
    assert memories(sim, "Bo") == ["Bea digs a new room: The Old Shed."]
    assert run(sim, "Bea", "go old shed").ok
    assert sim.character("Bea").location == "room-1"


def test_dig_without_a_description_gets_a_default(sim: Simulation) -> None:
    run(sim, "Bea", "@dig Attic")
    assert sim.world.rooms["room-1"].description == "A newly made room."


@pytest.mark.parametrize("args", ["", "!!!", "The ?!", "-> just a description", "---"])
def test_dig_needs_a_name_with_letters(sim: Simulation, args: str) -> None:
    result = run(sim, "Bea", f"@dig {args}")
    assert not result.ok
    assert result.text == "The new room needs a name with letters in it."
    assert len(sim.world.rooms) == 4


def test_dig_over_an_existing_exit_fails(sim: Simulation) -> None:
    result = run(sim, "Bea", "@dig South")
    assert not result.ok
    assert result.text == "The Yard already has an exit called 'south'."
    assert len(sim.world.rooms) == 4


@pytest.mark.parametrize("args", ["The Tower", "to The Tower", "#tower"])
def test_exit_unnamed_is_named_after_the_room(sim: Simulation, args: str) -> None:
    result = run(sim, "Bea", f"@exit {args}")
    assert result.ok
    assert result.text == "The exit 'tower' now leads to The Tower. From there, 'yard' leads back."
    assert sim.world.rooms["yard"].exits["tower"] == "tower"
    assert sim.world.rooms["tower"].exits["yard"] == "yard"
    assert memories(sim, "Bo") == ["Bea makes an exit 'tower' leading to The Tower."]


def test_exit_named(sim: Simulation) -> None:
    result = run(sim, "Bea", "@exit Trap Door -> The Cellar")
    assert result.ok
    assert result.text == (
        "The exit 'trap door' now leads to The Cellar. From there, 'yard' leads back."
    )
    assert sim.world.rooms["yard"].exits["trap door"] == "cellar"
    assert sim.world.rooms["cellar"].exits["yard"] == "yard"


def test_exit_to_a_room_that_already_leads_back_adds_no_return(sim: Simulation) -> None:
    result = run(sim, "Pat", "@exit gate -> The Yard")
    assert result.ok
    assert result.text == "The exit 'gate' now leads to The Yard."
    assert sim.world.rooms["yard"].exits == {"south": "hall"}


def test_exit_whose_way_back_is_taken_fails_and_changes_nothing(sim: Simulation) -> None:
    result = run(sim, "Bea", "@exit down -> The Cellar")
    assert not result.ok
    assert result.text == (
        "Cannot link both ways: the way back from The Cellar would be its exit 'up', "
        "which already leads to The Hall."
    )
    assert sim.world.rooms["yard"].exits == {"south": "hall"}
    assert sim.world.rooms["cellar"].exits == {"up": "hall"}


def test_exit_with_a_name_already_used_here_fails(sim: Simulation) -> None:
    result = run(sim, "Bea", "@exit south -> The Tower")
    assert not result.ok
    assert result.text == "The Yard already has an exit called 'south'."
    assert sim.world.rooms["yard"].exits == {"south": "hall"}


def test_exit_to_its_own_room_fails(sim: Simulation) -> None:
    result = run(sim, "Bea", "@exit The Yard")
    assert not result.ok
    assert result.text == "An exit cannot lead to the room it is in."
    assert sim.world.rooms["yard"].exits == {"south": "hall"}


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ("", "Make an exit to which room?"),
        ("door ->", "Make an exit to which room?"),
        ("Narnia", "You don't see any room called 'Narnia'."),
    ],
)
def test_exit_to_no_room_fails(sim: Simulation, args: str, text: str) -> None:
    result = run(sim, "Bea", f"@exit {args}")
    assert not result.ok
    assert result.text == text


def test_a_player_may_not_make_exits(sim: Simulation) -> None:
    result = run(sim, "Pip", "@exit The Cellar")
    assert not result.ok
    assert result.text == "'@exit' needs the builder role; you are a player."
    assert "cellar" not in sim.world.rooms["hall"].exits


@pytest.mark.parametrize(
    ("line", "room"),
    [("@teleport The Tower", "tower"), ("@tp #cellar", "cellar"), ("@tp Ada", "hall")],
)
def test_teleport(sim: Simulation, line: str, room: str) -> None:
    result = run(sim, "Bea", line)
    assert result.ok
    assert result.text == run(sim, "Bea", "look").text
    assert sim.character("Bea").location == room
    assert memories(sim, "Bo") == ["Bea vanishes in a swirl of light."]


def test_teleport_is_seen_where_you_arrive(sim: Simulation) -> None:
    run(sim, "Bea", "@tp Ada")
    assert memories(sim, "Ada") == ["Bea appears in a swirl of light."]


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ("Zed", "You don't see any room or character called 'Zed'."),
        ("#nowhere", "You don't see any room or character called '#nowhere'."),
        ("The Yard", "You are already in The Yard."),
        ("Bo", "You are already in The Yard."),
        ("", "Teleport where?"),
    ],
)
def test_teleport_fails(sim: Simulation, args: str, text: str) -> None:
    result = run(sim, "Bea", f"@teleport {args}")
    assert not result.ok
    assert result.text == text
    assert sim.character("Bea").location == "yard"
    assert memories(sim, "Bo") == []


def test_a_player_may_not_teleport(sim: Simulation) -> None:
    result = run(sim, "Pip", "@tp The Tower")
    assert not result.ok
    assert result.text == "'@teleport' needs the builder role; you are a player."
    assert sim.character("Pip").location == "hall"


def test_dig_from_a_dug_room_leads_back_out_or_the_opposite_way(sim: Simulation) -> None:
    """The way back is never a generated id such as room-1."""
    assert run(sim, "Bea", "@dig The Shed").ok
    assert run(sim, "Bea", "go shed").ok
    result = run(sim, "Bea", "@dig North")
    assert result.ok
    assert "The exit 'north' leads there; 'south' leads back." in result.text
    assert run(sim, "Bea", "@dig The Loft").ok
    loft = next(r for r in sim.world.rooms.values() if r.name == "The Loft")
    assert loft.exits == {"out": "room-1"}
    assert all(not name.startswith("room-") for r in sim.world.rooms.values() for name in r.exits)
