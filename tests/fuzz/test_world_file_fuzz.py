"""Fuzzing world files (``load_world_file``): random bytes, YAML of the wrong shape,
and valid worlds mutated. A file either loads or is refused with one ``WorldFileError``
line that names the file (and its line, where the problem has one); no other exception
ever escapes, nothing is written, and nothing hangs (deep nesting, alias bombs).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_support import FUZZ, NASTY, any_char
from helpers import FIXTURE_WORLD
from hypothesis import example, given
from hypothesis import strategies as st

from engine.errors import WorldFileError
from engine.world.loader import load_world_file
from engine.world.world import World

DEMO = Path(__file__).resolve().parents[2] / "worlds" / "demo.yaml"
VALID = [yaml.safe_load(FIXTURE_WORLD), yaml.safe_load(DEMO.read_text(encoding="utf-8"))]
KEYS = sorted(
    {"name", "rooms", "objects", "characters", "id", "exits", "to", "one_way", "aliases"}
    | {"description", "location", "type", "profile", "role", "think_interval", "model"}
    | {"immediate_window", "recent_window", "agent", "player", "admin", "builder", "hall"}
)


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.sampled_from(KEYS),
        st.sampled_from(NASTY),
        st.text(any_char, max_size=10),
    )


values = st.recursive(
    scalars(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), scalars()), inner, max_size=4),
    ),
    max_leaves=20,
)


@st.composite
def mutated_world(draw: st.DrawFn) -> Any:
    """A valid world with one to three values replaced, removed or duplicated."""
    data = yaml.safe_load(yaml.safe_dump(draw(st.sampled_from(VALID))))
    for _ in range(draw(st.integers(1, 3))):
        node, key = _pick(draw, data)
        if node is None:
            break
        action = draw(st.sampled_from(["replace", "remove", "duplicate"]))
        if action == "replace":
            node[key] = draw(values)
        elif action == "remove":
            del node[key]
        elif isinstance(node, list):
            node.append(node[key])
        else:
            node[draw(st.sampled_from(KEYS))] = node[key]
    return data


def _pick(draw: st.DrawFn, data: Any) -> tuple[Any, Any]:
    """A container inside ``data`` and one of its keys or indexes."""
    node: Any = data
    parent: tuple[Any, Any] = (None, None)
    for _ in range(draw(st.integers(1, 6))):
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        parent = (node, key)
        if not isinstance(node[key], dict | list):
            break
        node = node[key]
    return parent


def dumped(data: Any) -> str:
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


@st.composite
def text_edits(draw: st.DrawFn) -> str:
    """A valid world file's text with characters cut, inserted or replaced."""
    text = draw(st.sampled_from([FIXTURE_WORLD, DEMO.read_text(encoding="utf-8")]))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 20))
        text = (
            text[:at]
            + draw(st.one_of(st.sampled_from(NASTY), st.text(max_size=5)))
            + text[at + cut :]
        )
    return text


world_texts = st.one_of(
    values.map(dumped), mutated_world().map(dumped), text_edits(), st.text(any_char, max_size=200)
)


def check_load(path: Path) -> World | None:
    """Load ``path``; the only way to fail is one WorldFileError line naming it."""
    before = sorted(os.listdir(path.parent))
    try:
        return load_world_file(path)
    except WorldFileError as exc:
        message = str(exc)
        assert str(path) in message, message
        assert "\n" not in message, message
        assert message.strip() == message, message
        if "YAML" in message or "line" in message:
            assert re.search(rf"{re.escape(str(path))}, line \d+", message), message
        return None
    finally:
        assert sorted(os.listdir(path.parent)) == before


@pytest.fixture
def world_path(tmp_path: Path) -> Path:
    return tmp_path / "world.yaml"


DEEP = [
    "name: x\nrooms: " + "[" * 5000 + "]" * 5000,
    "name: x\nrooms: " + "{a: " * 5000 + "1" + "}" * 5000,
    "name: x\nrooms: " + "- " * 3000 + "x\n",
    "name: x\nrooms: &a [*a]\n",
    "name: x\nrooms: &a {x: *a}\n",
    "name: x\nrooms:\n - &r {id: r, name: R, exits: *r}\n",
    "name: x\nrooms:\n - id: r\n   name: r\n   exits: &a0 {a: [1]}\n"
    + "".join(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)),
    "name: x\nrooms: [{id: a, name: A}]\naliases: &l [x, x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"l{i}: &l{i} [" + ",".join(["*l" if i == 1 else f"*l{i - 1}"] * 10) + "]\n"
        for i in range(1, 9)
    ),
    "name: x\x00\nrooms: []\n",
    'name: "x\\u2028y: z"\nrooms: [{id: a, name: "A\\uFFFE"}]\n',
    "name: x\nrooms: [{id: a, name: A}]\ncharacters: [{name: Z, type: agent, location: a, profile: p, think_interval: 1e400}]\n",
]


@FUZZ
@given(text=world_texts)
@example(text=DEEP[0])
@example(text=DEEP[1])
@example(text=DEEP[2])
@example(text=DEEP[3])
@example(text=DEEP[4])
@example(text=DEEP[5])
@example(text=DEEP[6])
@example(text=DEEP[7])
@example(text=DEEP[8])
@example(text=DEEP[9])
@example(text=DEEP[10])
def test_any_world_text_loads_or_is_refused_in_one_line(world_path: Path, text: str) -> None:
    world_path.write_text(text, encoding="utf-8")
    check_load(world_path)


@FUZZ
@given(data=st.binary(max_size=400))
@example(data=b"name: \xff\n")
@example(data=b"\xef\xbb\xbfname: x\nrooms: [{id: a, name: A}]\n")
@example(data=b"\x00\x00\xfe\xff")
def test_any_bytes_load_or_are_refused_in_one_line(world_path: Path, data: bytes) -> None:
    world_path.write_bytes(data)
    check_load(world_path)


@pytest.mark.parametrize("text", DEEP[:8], ids=lambda t: t[16:40])
def test_deep_or_self_referencing_yaml_is_refused_with_its_line(
    world_path: Path, text: str
) -> None:
    world_path.write_text(text, encoding="utf-8")
    with pytest.raises(WorldFileError, match=rf"^{re.escape(str(world_path))}, line \d+"):
        load_world_file(world_path)


def test_a_nul_is_refused_on_its_line(world_path: Path) -> None:
    world_path.write_text("name: x\nrooms:\n  - {id: a, name: A\x00}\n", encoding="utf-8")
    with pytest.raises(WorldFileError, match=rf"^{re.escape(str(world_path))}, line 3: "):
        load_world_file(world_path)


@pytest.mark.parametrize("name", ["A\\u2028B", "A\\u2029B", "A\\uFFFE", "A\\u202EB"])
def test_a_name_that_would_break_the_vault_is_refused(world_path: Path, name: str) -> None:
    world_path.write_text(f'name: x\nrooms:\n  - {{id: a, name: "{name}"}}\n', encoding="utf-8")
    with pytest.raises(WorldFileError, match=r"line 3, rooms\[0\]\.name"):
        load_world_file(world_path)


def test_an_infinite_think_interval_is_refused(world_path: Path) -> None:
    world_path.write_text(DEEP[10], encoding="utf-8")
    with pytest.raises(WorldFileError, match=r"line 3, characters\[0\]\.think_interval"):
        load_world_file(world_path)
