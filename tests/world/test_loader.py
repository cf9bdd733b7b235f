"""Loading world files: the fixture world, two-way exits, and every way a file is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.errors import WorldFileError
from engine.world.loader import load_world_file
from engine.world.model import Role
from engine.world.world import World

DEMO = Path(__file__).resolve().parents[2] / "worlds" / "demo.yaml"


def write(tmp_path: Path, text: str, name: str = "bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(tmp_path: Path, text: str) -> tuple[Path, str]:
    """Load ``text`` from a file, expecting exactly one WorldFileError; return its message."""
    path = write(tmp_path, text)
    with pytest.raises(WorldFileError) as caught:
        load_world_file(path)
    return path, str(caught.value)


def assert_refused(tmp_path: Path, text: str, *, line: int, field: str) -> str:
    """The file is refused with one single-line error that starts ``<path>, line <line>``
    and names ``field``; return the message."""
    path, message = refused(tmp_path, text)
    located = re.match(rf"{re.escape(str(path))}, line (\d+)[,:]", message)
    assert located is not None, message
    assert int(located.group(1)) == line, message
    assert field in message, message
    assert "\n" not in message
    return message


# -- the fixture world ----------------------------------------------------------------


def test_fixture_world_rooms_in_file_order(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert world.name == "Fixture"
    assert list(world.rooms) == ["hall", "yard", "tower", "cellar"]
    assert world.rooms["hall"].name == "The Hall"
    assert world.rooms["yard"].description == "A muddy yard."
    assert world.rooms["tower"].description == "A windy room at the top of a stair."


def test_fixture_world_objects(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert set(world.things) == {"lamp", "well"}
    lamp, well = world.things["lamp"], world.things["well"]
    assert (lamp.name, lamp.location, lamp.description) == (
        "a brass lamp",
        "hall",
        "It gives a warm light.",
    )
    assert lamp.aliases == []
    assert (well.name, well.location, well.aliases) == ("an old well", "yard", ["hole"])
    assert [t.id for t in world.things_in("hall")] == ["lamp"]


def test_fixture_world_characters(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert [c.name for c in world.characters.values()] == ["Ada", "Bo", "Pat", "Pip", "Bea"]
    ada = world.characters["ada"]
    assert (ada.type, ada.location, ada.profile) == ("agent", "hall", "A careful gardener.")
    assert ada.description == "A woman with soil on her boots."
    assert ada.role is Role.PLAYER
    bo = world.characters["bo"]
    assert (bo.immediate_window, bo.recent_window) == (4, 4)
    assert ada.immediate_window is None
    assert world.characters["pat"].role is Role.ADMIN
    assert world.characters["bea"].role is Role.BUILDER
    assert world.characters["pip"].role is Role.PLAYER
    assert world.characters["bea"].description == ""


def test_character_ids_default_to_lowercased_folder_names(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
name: Ids
rooms:
  - id: a
    name: A
characters:
  - {name: Ada, type: player, location: a}
  - {name: Bo Lee, type: player, location: a}
  - {name: Cy, id: Custom-7, type: player, location: a}
""",
    )
    world = load_world_file(path)
    assert list(world.characters) == ["ada", "bo_lee", "Custom-7"]
    assert world.characters["bo_lee"].name == "Bo Lee"
    assert world.characters["bo_lee"].folder == "Bo_Lee"


def test_fixture_world_ids_are_unique_across_kinds(world_file: Path) -> None:
    world = load_world_file(world_file)
    ids = [*world.rooms, *world.things, *world.characters]
    assert len(ids) == len(set(ids))
    assert ids == [
        "hall",
        "yard",
        "tower",
        "cellar",
        "lamp",
        "well",
        "ada",
        "bo",
        "pat",
        "pip",
        "bea",
    ]


def test_the_first_player_is_the_first_in_file_order(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert [c.name for c in world.players()] == ["Pat", "Pip", "Bea"]
    first = next(world.players())
    assert first.name == "Pat"


# -- exits ----------------------------------------------------------------------------


def test_compass_exit_gets_its_opposite_back(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert world.rooms["hall"].exits["north"] == "yard"
    assert world.rooms["yard"].exits == {"south": "hall"}


def test_named_exit_gets_the_source_room_id_back(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert world.rooms["hall"].exits["stair"] == "tower"
    assert world.rooms["tower"].exits["hall"] == "hall"


def test_one_way_exit_gets_no_way_back(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert world.rooms["tower"].exits == {"east": "cellar", "hall": "hall"}
    assert world.rooms["cellar"].exits == {"up": "hall"}


def test_way_back_from_a_later_room(world_file: Path) -> None:
    world = load_world_file(world_file)
    assert world.rooms["hall"].exits == {"north": "yard", "stair": "tower", "down": "cellar"}


def test_declared_way_back_is_not_doubled(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
name: Back
rooms:
  - id: hall
    name: Hall
    exits: {north: yard, door: shed}
  - id: yard
    name: Yard
    exits: {gate: hall}
  - id: shed
    name: Shed
    exits: {out: hall}
""",
    )
    world = load_world_file(path)
    assert world.rooms["yard"].exits == {"gate": "hall"}
    assert world.rooms["shed"].exits == {"out": "hall"}
    assert world.rooms["hall"].exits == {"north": "yard", "door": "shed"}


def test_exit_written_in_long_form_two_way_by_default(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
name: Long
rooms:
  - id: a
    name: A
    exits: {up: {to: b}, west: {to: b, one_way: false}}
  - id: b
    name: B
""",
    )
    world = load_world_file(path)
    # b's way back for `up` is `down`; `west` needs none since b already leads back to a.
    assert world.rooms["b"].exits == {"down": "a"}


def test_exit_names_are_lower_cased(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
name: Case
rooms:
  - id: a
    name: A
    exits: {North: b}
  - id: b
    name: B
""",
    )
    world = load_world_file(path)
    assert world.rooms["a"].exits == {"north": "b"}
    assert world.rooms["b"].exits == {"south": "a"}


def test_way_back_name_taken_by_an_exit_elsewhere_is_an_error(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: Clash
rooms:
  - id: a
    name: A
    exits:
      north: b
  - id: b
    name: B
    exits:
      south: c
  - id: c
    name: C
""",
        line=6,
        field="rooms[0].exits.north",
    )
    assert "'south'" in message


def test_named_way_back_taken_is_an_error(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: Clash
rooms:
  - id: a
    name: A
    exits: {door: b}
  - id: b
    name: B
    exits: {a: c}
  - id: c
    name: C
""",
        line=5,
        field="rooms[0].exits.door",
    )


# -- refused files ----------------------------------------------------------------------


def test_yaml_syntax_error(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: Broken
rooms:
  - id: a
    name: A: B
""",
        line=4,
        field="YAML syntax error",
    )


def test_yaml_bad_indentation(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: Broken
rooms:
  - id: a
    name: A
   description: out of line
""",
        line=5,
        field="YAML syntax error",
    )


def test_unknown_exit_target(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
    exits:
      north: nowhere
""",
        line=6,
        field="rooms[0].exits.north",
    )
    assert "'nowhere'" in message


def test_duplicate_room_id(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
  - id: a
    name: B
""",
        line=5,
        field="rooms[1].id",
    )
    assert "duplicate id 'a'" in message
    assert "line 3" in message


def test_object_id_same_as_a_room_id(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
objects:
  - id: b
    name: thing
    location: a
  - id: a
    name: other thing
    location: a
""",
        line=9,
        field="objects[1].id",
    )
    assert "duplicate id 'a'" in message


def test_character_id_same_as_a_room_id(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: hall
    name: A
characters:
  - name: Ada
    type: player
    location: hall
  - name: Hall
    type: player
    location: hall
""",
        line=9,
        field="characters[1].name",
    )
    assert "duplicate id 'hall'" in message


def test_room_without_name(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
  - id: b
    description: no name here
""",
        line=5,
        field="rooms[1].name",
    )
    assert "missing" in message


def test_world_without_name(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
# a comment first
rooms:
  - id: a
    name: A
""",
        line=2,
        field="name",
    )
    assert "missing required field 'name'" in message


def test_think_interval_not_a_number(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - name: Ada
    type: agent
    profile: A gardener.
    location: a
    think_interval: fast
""",
        line=10,
        field="characters[0].think_interval",
    )


def test_room_name_not_a_string(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    description: first
    name: 12
""",
        line=5,
        field="rooms[0].name",
    )


def test_unknown_key_is_a_typo(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
# leading comment

name: X
rooms:
  - id: a
    name: A
    descripton: a typo
""",
        line=7,
        field="rooms[0].descripton",
    )
    assert "unknown key 'descripton'" in message


def test_unknown_key_in_a_long_form_exit(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
    exits:
      north: {to: a, oneway: true}
""",
        line=6,
        field="rooms[0].exits.north.oneway",
    )


def test_character_names_sharing_a_folder(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - name: Bo Lee
    type: player
    location: a
  - name: Bo_Lee
    type: player
    location: a
""",
        line=9,
        field="characters[1].name",
    )
    assert "Bo Lee" in message
    assert "Bo_Lee" in message


def test_character_names_differing_only_in_case(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - {name: eliza, type: player, location: a}
  - {name: Moss, type: player, location: a}
  - {name: Eliza, type: player, location: a}
""",
        line=8,
        field="characters[2].name",
    )
    assert "'eliza'" in message


def test_character_name_without_usable_characters(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - name: Ada
    type: player
    location: a
  - name: ../
    type: player
    location: a
""",
        line=9,
        field="characters[1].name",
    )
    assert "'../'" in message


def test_character_location_not_a_room(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - name: Ada
    type: player
    location: b
""",
        line=8,
        field="characters[0].location",
    )
    assert "'b'" in message


def test_character_location_an_object(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
objects:
  - {id: lamp, name: a lamp, location: a}
characters:
  - name: Ada
    type: player
    location: lamp
""",
        line=10,
        field="characters[0].location",
    )


def test_object_location_not_a_room(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
objects:
  - {id: lamp, name: a lamp, location: a}
  - {id: cup, name: a cup, location: nowhere}
""",
        line=7,
        field="objects[1].location",
    )


def test_agent_without_profile(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - name: Pat
    type: player
    location: a
  - name: Ada
    type: agent
    location: a
""",
        line=9,
        field="characters[1]",
    )
    assert "profile" in message
    assert "'Ada'" in message


def test_agent_with_blank_profile(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
characters:
  - name: Ada
    type: agent
    profile: "   "
    location: a
""",
        line=6,
        field="profile",
    )


def test_exit_declared_twice_in_different_case(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
    exits:
      North: b
      north: b
  - id: b
    name: B
""",
        line=7,
        field="rooms[0].exits.north",
    )
    assert "declared twice" in message


def test_exit_declared_twice_with_the_same_name(tmp_path: Path) -> None:
    """A repeated key is invalid YAML; the loader must not silently keep only the last."""
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
    exits:
      north: b
      north: c
  - id: b
    name: B
  - id: c
    name: C
""",
        line=7,
        field="north",
    )


def test_top_level_not_a_mapping(tmp_path: Path) -> None:
    assert_refused(tmp_path, "- a\n- b\n", line=1, field="mapping")


def test_empty_file(tmp_path: Path) -> None:
    assert_refused(tmp_path, "", line=1, field="mapping")


def test_no_rooms(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: Empty
rooms: []
""",
        line=2,
        field="rooms",
    )


def test_bad_entity_id(tmp_path: Path) -> None:
    assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    name: A
  - id: b/../c
    name: B
""",
        line=5,
        field="rooms[1].id",
    )


def test_unreadable_file_is_a_world_file_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(WorldFileError, match=r"nope\.yaml"):
        load_world_file(missing)


def test_several_problems_still_raise_one_error_for_the_first(tmp_path: Path) -> None:
    message = assert_refused(
        tmp_path,
        """\
name: X
rooms:
  - id: a
    nmae: A
  - id: b
    descripton: B
""",
        line=3,
        field="rooms[0].name",
    )
    assert "missing required field 'name'" in message
    assert "more problems" in message


# -- the shipped demo -----------------------------------------------------------------


def test_demo_world_loads() -> None:
    world: World = load_world_file(DEMO)
    assert len(world.rooms) >= 3
    agents = [c for c in world.characters.values() if c.type == "agent"]
    assert len(agents) == 2
    assert agents[0].profile.strip()
    assert agents[1].profile.strip()
    assert agents[0].profile != agents[1].profile
    players = list(world.players())
    assert len(players) == 1
    assert players[0].role is Role.ADMIN
    for room in world.rooms.values():
        for target in room.exits.values():
            assert target in world.rooms
    for character in world.characters.values():
        assert character.location in world.rooms
