"""The live World: shortest paths, linking rooms, fresh ids and finding things by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from engine.world.loader import load_world_file
from engine.world.model import (
    Character,
    Role,
    Room,
    Thing,
    character_fields,
    character_from_fields,
)
from engine.world.world import LinkConflict, World


@pytest.fixture
def world(world_file: Path) -> World:
    return load_world_file(world_file)


def rooms(*specs: tuple[str, str]) -> World:
    """A world of bare rooms given as (id, name)."""
    built = World("Test")
    for room_id, name in specs:
        built.add_room(Room(room_id, name))
    return built


# -- path --------------------------------------------------------------------------


def test_path_to_the_same_room_is_empty(world: World) -> None:
    assert world.path("hall", "hall") == []


def test_path_one_step(world: World) -> None:
    assert world.path("hall", "yard") == ["north"]
    assert world.path("yard", "hall") == ["south"]


def test_path_several_steps(world: World) -> None:
    assert world.path("yard", "tower") == ["south", "stair"]
    assert world.path("yard", "cellar") == ["south", "down"]


def test_path_uses_a_one_way_exit_forwards(world: World) -> None:
    assert world.path("tower", "cellar") == ["east"]


def test_path_does_not_walk_a_one_way_exit_backwards(world: World) -> None:
    # tower --east--> cellar is one-way: from the cellar the way is up, then the stair.
    assert world.path("cellar", "tower") == ["up", "stair"]


def test_path_is_shortest() -> None:
    w = rooms(("a", "A"), ("b", "B"), ("c", "C"), ("d", "D"), ("e", "E"))
    w.link("a", "north", "b", one_way=True)
    w.link("b", "north", "c", one_way=True)
    w.link("c", "north", "d", one_way=True)
    w.link("d", "north", "e", one_way=True)
    w.link("a", "shortcut", "d", one_way=True)
    assert w.path("a", "e") == ["shortcut", "north"]
    assert w.path("b", "e") == ["north", "north", "north"]


def test_path_none_when_unreachable() -> None:
    w = rooms(("a", "A"), ("b", "B"), ("island", "Island"))
    w.link("a", "east", "b")
    assert w.path("a", "island") is None
    assert w.path("island", "a") is None


def test_path_none_against_a_one_way_exit() -> None:
    w = rooms(("top", "Top"), ("pit", "Pit"))
    w.link("top", "down", "pit", one_way=True)
    assert w.path("top", "pit") == ["down"]
    assert w.path("pit", "top") is None


def test_path_through_a_cycle_terminates() -> None:
    w = rooms(("a", "A"), ("b", "B"), ("c", "C"), ("x", "X"))
    w.link("a", "east", "b")
    w.link("b", "north", "c")
    w.link("c", "west", "a", one_way=True)
    assert w.path("a", "c") == ["east", "north"]
    assert w.path("a", "x") is None


# -- link --------------------------------------------------------------------------


def test_link_two_way_compass() -> None:
    w = rooms(("a", "A"), ("b", "B"))
    assert w.link("a", "north", "b") == "south"
    assert w.rooms["a"].exits == {"north": "b"}
    assert w.rooms["b"].exits == {"south": "a"}


def test_link_two_way_named_exit_returns_by_source_id() -> None:
    w = rooms(("garden", "Garden"), ("lobby", "Lobby"))
    assert w.link("garden", "door", "lobby") == "garden"
    assert w.rooms["lobby"].exits == {"garden": "garden"}


def test_link_one_way() -> None:
    w = rooms(("a", "A"), ("b", "B"))
    assert w.link("a", "north", "b", one_way=True) is None
    assert w.rooms["a"].exits == {"north": "b"}
    assert w.rooms["b"].exits == {}


def test_link_when_target_already_leads_back() -> None:
    w = rooms(("a", "A"), ("b", "B"))
    w.rooms["b"].exits["gate"] = "a"
    assert w.link("a", "north", "b") is None
    assert w.rooms["a"].exits == {"north": "b"}
    assert w.rooms["b"].exits == {"gate": "a"}


def test_link_conflict_raises_and_changes_nothing() -> None:
    w = rooms(("a", "A"), ("b", "B"), ("c", "C"))
    w.link("b", "south", "c", one_way=True)
    before = copy.deepcopy({rid: dict(r.exits) for rid, r in w.rooms.items()})
    with pytest.raises(LinkConflict, match="south"):
        w.link("a", "north", "b")
    assert {rid: dict(r.exits) for rid, r in w.rooms.items()} == before
    assert "north" not in w.rooms["a"].exits


def test_link_conflict_for_a_named_exit() -> None:
    w = rooms(("a", "A"), ("b", "B"), ("c", "C"))
    w.rooms["b"].exits["a"] = "c"
    with pytest.raises(LinkConflict):
        w.link("a", "door", "b")
    assert w.rooms["a"].exits == {}
    assert w.rooms["b"].exits == {"a": "c"}


def test_link_conflict_is_a_value_error() -> None:
    assert issubclass(LinkConflict, ValueError)


def test_one_way_link_ignores_a_taken_way_back() -> None:
    w = rooms(("a", "A"), ("b", "B"), ("c", "C"))
    w.rooms["b"].exits["south"] = "c"
    assert w.link("a", "north", "b", one_way=True) is None
    assert w.rooms["a"].exits == {"north": "b"}
    assert w.rooms["b"].exits == {"south": "c"}


# -- ids --------------------------------------------------------------------------


def test_new_room_id_skips_ids_in_use() -> None:
    w = rooms(("room-1", "One"), ("room-2", "Two"))
    w.add_thing(Thing("room-3", "a box", "room-1"))
    assert w.new_room_id() == "room-4"


def test_new_room_id_never_repeats_even_unused_or_removed() -> None:
    w = rooms(("hall", "Hall"))
    first = w.new_room_id()
    second = w.new_room_id()
    assert first != second
    w.add_room(Room(second, "Second"))
    del w.rooms[second]
    issued = {first, second}
    for _ in range(20):
        fresh = w.new_room_id()
        assert fresh not in issued
        assert not w.has_id(fresh)
        issued.add(fresh)


def test_new_room_id_starts_from_next_room_number() -> None:
    w = World("Saved", next_room_number=7)
    assert w.new_room_id() == "room-7"
    assert w.new_room_id() == "room-8"
    assert w.next_room_number == 9


def test_adding_a_used_id_is_refused(world: World) -> None:
    with pytest.raises(ValueError, match="hall"):
        world.add_thing(Thing("hall", "a hall-shaped thing", "yard"))
    assert "hall" not in world.things


# -- finding ---------------------------------------------------------------------


def test_find_rooms_exact_name(world: World) -> None:
    assert [r.id for r in world.find_rooms("The Hall")] == ["hall"]
    assert [r.id for r in world.find_rooms("the hall")] == ["hall"]


def test_find_rooms_without_article(world: World) -> None:
    assert [r.id for r in world.find_rooms("Tower")] == ["tower"]
    assert [r.id for r in world.find_rooms("a tower")] == ["tower"]


def test_find_rooms_by_id_as_a_name(world: World) -> None:
    assert [r.id for r in world.find_rooms("cellar")] == ["cellar"]


def test_find_rooms_prefix(world: World) -> None:
    assert [r.id for r in world.find_rooms("cel")] == ["cellar"]
    assert [r.id for r in world.find_rooms("The Y")] == ["yard"]


def test_find_rooms_word_prefix() -> None:
    w = rooms(("copper", "The Copper Hall"), ("garden", "A Walled Garden"))
    assert [r.id for r in w.find_rooms("hal")] == ["copper"]
    assert [r.id for r in w.find_rooms("wall")] == ["garden"]


def test_find_rooms_prefix_beats_word_prefix() -> None:
    w = rooms(("copper", "The Copper Hall"), ("hall", "The Hall"))
    assert [r.id for r in w.find_rooms("hal")] == ["hall"]


def test_find_rooms_exact_beats_prefix() -> None:
    w = rooms(("hall", "Hall"), ("hallway", "Hallway"))
    assert [r.id for r in w.find_rooms("hall")] == ["hall"]
    assert [r.id for r in w.find_rooms("hallw")] == ["hallway"]


def test_find_rooms_ambiguous_returns_all(world: World) -> None:
    assert {r.id for r in world.find_rooms("the")} == {"hall", "yard", "tower", "cellar"}
    w = rooms(("east-wing", "East Wing"), ("east-tower", "East Tower"))
    assert {r.id for r in w.find_rooms("east")} == {"east-wing", "east-tower"}


def test_find_rooms_nothing(world: World) -> None:
    assert world.find_rooms("kitchen") == []
    assert world.find_rooms("") == []
    assert world.find_rooms("   ") == []


def test_find_by_hash_id_is_exact_only(world: World) -> None:
    assert [r.id for r in world.find_rooms("#hall")] == ["hall"]
    assert [r.id for r in world.find_rooms("  #hall  ")] == ["hall"]
    assert world.find_rooms("#hal") == []
    assert world.find_rooms("#HALL") == []
    assert world.find_rooms("#The Hall") == []
    assert world.find_rooms("#") == []
    assert [c.name for c in world.find_characters("#pat")] == ["Pat"]
    assert world.find_characters("#pa") == []


def test_hash_id_only_finds_its_own_kind(world: World) -> None:
    assert world.find_rooms("#lamp") == []
    assert world.find_characters("#hall") == []


def test_find_characters_exact_and_prefix(world: World) -> None:
    assert [c.name for c in world.find_characters("ada")] == ["Ada"]
    assert [c.name for c in world.find_characters("BEA")] == ["Bea"]
    assert [c.name for c in world.find_characters("Ad")] == ["Ada"]


def test_find_characters_ambiguous(world: World) -> None:
    assert [c.name for c in world.find_characters("p")] == ["Pat", "Pip"]
    assert [c.name for c in world.find_characters("b")] == ["Bo", "Bea"]


def test_find_characters_exact_beats_prefix() -> None:
    w = rooms(("a", "A"))
    w.add_character(Character("bo", "Bo", "player", "a"))
    w.add_character(Character("bob", "Bob", "player", "a"))
    assert [c.id for c in w.find_characters("bo")] == ["bo"]
    assert [c.id for c in w.find_characters("bob")] == ["bob"]


def test_find_characters_by_alias() -> None:
    w = rooms(("a", "A"))
    w.add_character(Character("ada", "Ada", "agent", "a", aliases=["the gardener"]))
    assert [c.id for c in w.find_characters("gardener")] == ["ada"]


def test_find_here_only_looks_in_the_room(world: World) -> None:
    assert [t.id for t in world.find_here("hall", "lamp")] == ["lamp"]
    assert world.find_here("hall", "well") == []
    assert world.find_here("yard", "lamp") == []
    assert world.find_here("hall", "bo") == []
    assert [c.id for c in world.find_here("yard", "bo")] == ["bo"]


def test_find_here_objects_by_article_less_name_word_and_alias(world: World) -> None:
    assert [t.id for t in world.find_here("hall", "brass lamp")] == ["lamp"]
    assert [t.id for t in world.find_here("hall", "the brass lamp")] == ["lamp"]
    assert [t.id for t in world.find_here("hall", "bra")] == ["lamp"]
    assert [t.id for t in world.find_here("yard", "hole")] == ["well"]
    assert [t.id for t in world.find_here("yard", "old")] == ["well"]


def test_find_here_mixes_objects_and_characters(world: World) -> None:
    world.add_thing(Thing("pan", "a pan", "hall"))
    found = world.find_here("hall", "p")
    assert {x.id for x in found} == {"pan", "pat", "pip"}
    assert any(isinstance(x, Thing) for x in found)
    assert any(isinstance(x, Character) for x in found)


def test_find_here_by_hash_id(world: World) -> None:
    assert [x.id for x in world.find_here("hall", "#pip")] == ["pip"]
    assert world.find_here("hall", "#bo") == []
    assert world.find_here("hall", "#pi") == []


def test_find_follows_a_move(world: World) -> None:
    bo = world.characters["bo"]
    world.move(bo, "hall")
    assert [c.id for c in world.find_here("hall", "bo")] == ["bo"]
    assert world.find_here("yard", "bo") == []
    with pytest.raises(KeyError):
        world.move(bo, "nowhere")
    assert bo.location == "hall"


def test_a_character_goes_through_the_records_fields_and_back_unchanged() -> None:
    wren = Character(id="wren", name="Wren", type="player", location="hall", role=Role.BUILDER,
                     aliases=["w"], tags=["bread"], think_interval=2.5)  # fmt: skip
    fields = character_fields(wren)
    assert fields["role"] == "builder"
    assert json.loads(json.dumps(fields)) == fields  # plain JSON, as the record keeps it
    assert character_from_fields(fields) == wren
