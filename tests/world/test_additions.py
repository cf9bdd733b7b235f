"""What a world file declares that a saved world lacks (pure: two ``World`` objects)."""

from __future__ import annotations

from helpers import FIXTURE_WORLD

from engine.world.additions import NewExit, apply_additions, plan_additions
from engine.world.loader import parse_world
from engine.world.model import Room, Thing
from engine.world.world import World

GARDEN = """\
  - id: garden
    name: The Garden
    description: Roses climb a wall.
    exits: {east: hall}
"""
CY = """\
  - name: Cy
    type: agent
    location: garden
    profile: A shy poet.
"""


def world(text: str = FIXTURE_WORLD) -> World:
    return parse_world(text, source="test.yaml")


def grown() -> World:
    """The fixture world with a garden west of the hall, a rose in it and Cy."""
    text = FIXTURE_WORLD.replace("objects:\n", GARDEN + "objects:\n", 1)
    text = text.replace("objects:\n", "objects:\n  - {id: rose, name: a rose, location: garden}\n")
    return world(text + CY)


def test_the_same_world_lacks_nothing() -> None:
    plan = plan_additions(world(), world())
    assert plan.empty
    assert plan.refused == []
    assert plan.counts() == ""


def test_new_rooms_exits_objects_and_characters_are_found() -> None:
    plan = plan_additions(grown(), world())
    assert [r.id for r in plan.rooms] == ["garden"]
    assert set(plan.exits) == {NewExit("garden", "east", "hall"), NewExit("hall", "west", "garden")}
    assert [t.id for t in plan.things] == ["rose"]
    assert [c.name for c in plan.characters] == ["Cy"]
    assert plan.counts() == "1 room, 2 exits, 1 object, 1 character"
    assert plan.refused == []


def test_applying_adds_and_changes_nothing_the_vault_has() -> None:
    present = world()
    present.rooms["hall"].name = "The Great Hall"  # renamed in-world
    present.characters["ada"].location = "tower"  # Ada walked
    present.add_room(Room("room-1", "A Shed", exits={"out": "yard"}))  # an agent built it
    present.rooms["yard"].exits["in"] = "room-1"
    plan = plan_additions(grown(), present)
    apply_additions(present, plan)

    assert present.rooms["hall"].name == "The Great Hall"
    assert present.characters["ada"].location == "tower"
    assert present.rooms["yard"].exits == {"south": "hall", "in": "room-1"}
    assert present.rooms["room-1"].exits == {"out": "yard"}
    assert present.rooms["hall"].exits["west"] == "garden"
    assert present.rooms["garden"].exits == {"east": "hall"}
    assert present.things["rose"].location == "garden"
    assert present.characters["cy"].location == "garden"
    assert plan_additions(grown(), present).empty  # a second time adds nothing


def test_an_exit_name_the_vault_uses_keeps_the_vaults_target() -> None:
    present = world()
    changed = world(FIXTURE_WORLD.replace("exits: {north: yard,", "exits: {north: cellar,"))
    plan = plan_additions(changed, present)
    assert NewExit("hall", "north", "cellar") not in plan.exits
    assert any("exit 'north' from The Hall" in line and "kept" in line for line in plan.refused)
    apply_additions(present, plan)
    assert present.rooms["hall"].exits["north"] == "yard"


def test_an_id_the_vault_uses_for_something_else_is_refused_with_what_depends_on_it() -> None:
    present = world()
    present.add_thing(Thing("garden", "a garden gnome", "hall"))
    plan = plan_additions(grown(), present)
    assert plan.empty
    assert (
        plan.refused[0]
        == "room garden (The Garden): the vault uses that id for the object a garden gnome"
    )
    assert any(line.startswith("exit 'west' from The Hall: its room") for line in plan.refused)
    assert any(line.startswith("object rose (a rose): its room") for line in plan.refused)
    assert any(line.startswith("character Cy: its room 'garden'") for line in plan.refused)


def test_a_folder_holding_someone_elses_memories_is_refused() -> None:
    plan = plan_additions(grown(), world(), occupied_folders=["cy"])
    assert plan.characters == []
    assert any("agents/Cy" in line and "move that folder away" in line for line in plan.refused)


def test_a_character_sharing_a_vault_characters_folder_is_refused() -> None:
    twin = world(FIXTURE_WORLD.replace("  - name: Ada\n", "  - name: ADA\n    id: other-ada\n"))
    plan = plan_additions(twin, world())
    assert plan.characters == []
    assert any(line.startswith("character ADA: Ada in the vault") for line in plan.refused)
