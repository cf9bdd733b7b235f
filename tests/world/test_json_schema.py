"""`mudsim schema world` prints the world file's JSON Schema, made from the models that
validate it: the committed copy is current, every shipped world passes it, and it
accepts every world the loader accepts (short and long exits, no clock, ...) while
refusing the shapes the loader refuses (unknown keys, a bad exit)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from engine.cli import main
from engine.errors import WorldFileError
from engine.world.json_schema import regenerate_hint, render, world_schema
from engine.world.loader import parse_world

SCHEMAS = REPO / "docs" / "schemas"
WORLDS = sorted((REPO / "worlds").glob("*.yaml"))
VALIDATOR = Draft202012Validator(world_schema())


class EditorLoader(yaml.SafeLoader):
    """YAML as an editor reads it (1.2: a date-time stays text)."""


EditorLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def editor_data(text: str) -> Any:
    return yaml.load(text, Loader=EditorLoader)  # a SafeLoader


def schema_accepts(data: Any) -> bool:
    return VALIDATOR.is_valid(data)


def loader_accepts(data: Any) -> bool:
    try:
        parse_world(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), source="w.yaml")
    except WorldFileError:
        return False
    return True


@pytest.mark.parametrize("kind", ["world", "sweep"])
def test_the_committed_schema_is_what_mudsim_schema_prints(
    kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schema", kind]) == 0
    printed = capsys.readouterr().out
    committed = (SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")
    assert printed == committed, (
        f"docs/schemas/{kind}.schema.json is out of date; regenerate it: {regenerate_hint(kind)}"
    )


@pytest.mark.parametrize("kind", ["world", "sweep"])
def test_the_schema_is_a_valid_draft_2020_12_schema(kind: str) -> None:
    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:mudsim:schema:")
    assert schema["title"]
    assert schema["description"]
    assert schema["additionalProperties"] is False


def test_schema_is_among_the_verbs_of_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "schema" in capsys.readouterr().out


def test_an_unknown_kind_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "foo"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("mudsim: ")
    assert captured.err.count("\n") == 1
    assert "invalid choice: 'foo' (choose from 'world', 'sweep')" in captured.err


@pytest.mark.parametrize("path", WORLDS, ids=[p.name for p in WORLDS])
def test_a_shipped_world_names_and_passes_the_committed_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert (
        text.splitlines()[0] == "# yaml-language-server: $schema=../docs/schemas/world.schema.json"
    )
    schema = json.loads((SCHEMAS / "world.schema.json").read_text(encoding="utf-8"))
    errors = [e.message for e in Draft202012Validator(schema).iter_errors(editor_data(text))]
    assert errors == []
    parse_world(text, source=str(path))  # the loader reads past the comment line


def test_field_descriptions_come_from_the_models_docstrings() -> None:
    schema = world_schema()
    room = schema["$defs"]["RoomSpec"]
    assert room["description"].startswith("A room;")
    assert "`room_id`" in room["properties"]["exits"]["description"]  # ``x`` made `x`
    assert "\n" not in room["properties"]["exits"]["description"]
    assert schema["properties"]["clock"]["description"]
    assert render(schema).isascii()


MINIMAL = {"name": "W", "rooms": [{"id": "hall", "name": "Hall"}]}
BO = {"name": "Bo", "type": "agent", "location": "hall", "profile": "A cook."}


def room(**keys: Any) -> dict[str, Any]:
    return {"name": "W", "rooms": [{"id": "hall", "name": "Hall", **keys},
                                   {"id": "garden", "name": "Garden"}]}  # fmt: skip


@pytest.mark.parametrize(
    "data",
    [
        MINIMAL,
        room(exits={"north": "garden"}),
        room(exits={"Up  Stairs": {"to": "garden"}}),
        room(exits={"north": {"to": "garden", "one_way": True}}),
        room(exits={"north": "garden", "lobby": {"to": "garden", "one_way": False}}),
        room(aliases=["entrance", "foyer"], description=""),
        {**MINIMAL, "clock": {"start": "2026-03-01T09:00", "minutes_per_round": 0}},
        {**MINIMAL, "clock": {"start": "2026-03-01"}},
        {**MINIMAL, "clock": {}},
        {**MINIMAL, "characters": [{"name": "Bo", "type": "player", "location": "hall",
                                    "id": None, "role": "admin", "think_interval": 2}]},
    ],
    ids=["minimal", "short exit", "long exit", "one way", "both forms", "aliases",
         "clock", "bare date", "empty clock", "character"],
)  # fmt: skip
def test_the_schema_accepts_what_the_loader_accepts(data: dict[str, Any]) -> None:
    assert loader_accepts(data)
    assert schema_accepts(data), list(VALIDATOR.iter_errors(data))


@pytest.mark.parametrize(
    "data",
    [
        {**MINIMAL, "colour": "red"},
        room(colour="red"),
        room(exits={"north": ["garden"]}),
        room(exits={"north": 3}),
        room(exits={"north": None}),
        room(exits={"north": {"to": "garden", "oneway": True}}),
        room(exits={"north": {"one_way": True}}),
        room(exits={"north": "no such id"}),
        room(exits=["north"]),
        room(exits={"": "garden"}),
        room(exits={"bell\x07": "garden"}),
        {"name": "W", "rooms": []},
        {"name": "W"},
        {**MINIMAL, "clock": {"minutes_per_round": 527041}},
        {**MINIMAL, "clock": {"speed": 2}},
        {**MINIMAL, "characters": [{"name": "Bo", "type": "npc", "location": "hall"}]},
        room(exits={"north": {"to": "garden", "one_way": "yes"}}),
        room(exits={"north": {"to": "garden", "one_way": 1}}),
        {**MINIMAL, "characters": [BO | {"immediate_window": True}]},
        {**MINIMAL, "characters": [BO | {"recent_window": "16"}]},
        {**MINIMAL, "characters": [BO | {"prioritize_recent": "true"}]},
        {**MINIMAL, "characters": [BO | {"think_interval": "2"}]},
        {**MINIMAL, "characters": [BO | {"think_interval": True}]},
    ],
    ids=["unknown key", "unknown room key", "exit list", "exit number", "exit null",
         "exit typo", "exit without to", "exit to a bad id", "exits a list", "empty exit name",
         "control character", "no rooms", "rooms missing", "a round past a year",
         "unknown clock key", "bad type", "yes for true", "1 for true", "true for a number",
         "a number in quotes", "true in quotes", "seconds in quotes", "true for seconds"],
)  # fmt: skip
def test_the_schema_refuses_what_the_loader_refuses(data: dict[str, Any]) -> None:
    assert not loader_accepts(data)
    assert not schema_accepts(data)


IDS = st.sampled_from(["hall", "garden", "bad id", "x" * 65])
NAMES = st.sampled_from(["Hall", "Up  Stairs", "Café", "", "bell\x07", "a\u2028b"])
EXITS = st.one_of(
    IDS,
    st.fixed_dictionaries(
        {"to": IDS},
        optional={"one_way": st.sampled_from([True, False, "yes", 1]), "oneway": st.just(True)},
    ),
    st.sampled_from([3, None, ["hall"]]),
)
ROOMS = st.fixed_dictionaries(
    {"id": IDS, "name": NAMES},
    optional={"description": st.just("A room."), "aliases": st.lists(NAMES, max_size=2),
              "exits": st.dictionaries(st.sampled_from(["north", "south", "Up Stairs", "lobby"]),
                                       EXITS, max_size=2),
              "colour": st.just("red")},
)  # fmt: skip
CLOCKS = st.fixed_dictionaries(
    {},
    optional={"start": st.sampled_from(["2026-01-01T08:00", "2026-03-01", "2026-03-01 09:00"]),
              "minutes_per_round": st.sampled_from([0, 10, 527040, 527041, -1]),
              "speed": st.just(2)},
)  # fmt: skip
OBJECTS = st.fixed_dictionaries(
    {"id": st.sampled_from(["kettle", "bad id"]), "name": NAMES, "location": IDS},
    optional={"aliases": st.lists(NAMES, max_size=1), "weight": st.just(3)},
)
CHARACTERS = st.fixed_dictionaries(
    {"name": st.sampled_from(["Ada", "Bo B", ""]), "type": st.sampled_from(["agent", "player", "npc"]),
     "location": IDS},
    optional={"profile": st.sampled_from(["", "A cook."]),
              "role": st.sampled_from(["player", "admin", "god"]),
              "id": st.one_of(st.none(), st.sampled_from(["ada", "bad id"])),
              "think_interval": st.sampled_from([0.5, 2, 0, -1, "2", True]),
              "immediate_window": st.sampled_from([1, 16, 0, True, "16", 2.0]),
              "model": st.sampled_from(["qwen3:4b", ""]),
              "tags": st.lists(NAMES, max_size=1), "prioritize_recent": st.sampled_from([True, False, 0, "true"]),
              "occupation": st.just("cook"), "mood": st.just("glad")},
)  # fmt: skip
WORLD_FILES = st.fixed_dictionaries(
    {"name": NAMES, "rooms": st.lists(ROOMS, max_size=3)},
    optional={"description": st.just("A place."), "clock": CLOCKS,
              "objects": st.lists(OBJECTS, max_size=1),
              "characters": st.lists(CHARACTERS, max_size=2), "exits": st.just({})},
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WORLD_FILES)
@example(room(exits={"north": "garden", "south": {"to": "garden", "one_way": True}}))
def test_every_world_the_loader_accepts_passes_the_schema(data: dict[str, Any]) -> None:
    """Mistyped values among them (``true`` for a number, ``"16"`` in quotes, ``yes``
    for ``true``): what the schema flags must not load either."""
    if loader_accepts(data):
        assert schema_accepts(data), [e.message for e in VALIDATOR.iter_errors(data)]


def test_the_generated_worlds_include_accepted_ones() -> None:
    """The property above is not vacuous: the strategy makes worlds the loader accepts."""
    accepted: list[dict[str, Any]] = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(WORLD_FILES)
    def collect(data: dict[str, Any]) -> None:
        if loader_accepts(data):
            accepted.append(data)

    collect()
    assert len(accepted) >= 5
