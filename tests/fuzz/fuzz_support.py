"""What the fuzz tests share: hostile text, command lines, a fresh copy of a seeded
vault for every example, and the checks that must hold after anything at all.

Each example works on its own copy of one seeded vault (copying is much cheaper than
seeding), so examples never see each other's journals and a 100 KB line costs one
example, not every later one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers import FIXTURE_WORLD
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engine.commands import Result, default_registry
from engine.sim.simulation import Simulation
from engine.vault.journal import read_records
from engine.world.world import World

FUZZ = settings(
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    deadline=None,
)
"""Per-test settings: the example count comes from the profile (tests/conftest.py)."""

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")


def costly(ci_examples: int) -> settings:
    """Settings for a property that opens a vault per example: ``ci_examples`` under the
    fast ci profile (keeps tests/fuzz well under 30 s on 2 cores), the profile's own
    count otherwise (thorough: 10,000)."""
    return settings(FUZZ, max_examples=ci_examples) if PROFILE == "ci" else FUZZ


ROLES = {"player": "Pip", "builder": "Bea", "admin": "Pat"}

NASTY = [
    "\x00", "\x07", "\x08", "\x1b", "\x1b[2J", "\x1b[31m", "\x1b]0;pwned\x07", "\x7f", "\x85",
    "\x9b", "\t", "\n", "\r", "\r\n", "\u2028", "\u2029", "\u202a", "\u202b", "\u202c",
    "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u200b",
    "\u061c", "\ufeff", "\ufffe", "\uffff", "\ufffd", "\U0010ffff", "\U0001fffe", "\u0301",
    "é", "ß", "İ", "ﬁ", "ǅ", "😀", "👩‍👩‍👧", "中文", "עברית", "\u00a0", "\u3000",
    "|", "||", "->", "-", "--", '"', "'", ":", "#", "\\", "/", "../", "..", "./", "~",
    "---", "...", "*", "&", "!", "%", "{", "}", "[", "]", "?", ",", " ", "  ", "yes",
    "null", "0", "-1", "1e999", "nan", "NUL", "CON", ".md", "@", "=", "`", "$(id)",
]  # fmt: skip
"""Characters and fragments that have broken text handling somewhere before."""

any_char = st.characters(exclude_categories=("Cs",))
"""Any code point but a surrogate."""

nasty_text = st.lists(
    st.one_of(st.sampled_from(NASTY), st.text(any_char, max_size=8)), max_size=10
).map("".join)

long_text = st.tuples(
    st.lists(st.sampled_from(NASTY), min_size=1, max_size=4).map("".join),
    st.sampled_from([1_000, 10_000, 100_000]),
    st.booleans(),
).map(lambda p: (p[0] * (p[1] // len(p[0]) + 1))[: p[1]] if p[2] else "x" * p[1])
"""Up to a 100 KB line, built by repeating a fragment (Hypothesis cannot draw that much)."""

VERBS = sorted({name for c in default_registry().commands.values() for name in c.names})
WORDS = [
    "north", "n", "up", "east", "stair", "yard", "hall", "#hall", "#room-1", "The Yard",
    "tower", "cellar", "Ada", "#ada", "Bo", "Pip", "Pat", "Bea", "me", "here", "lamp",
    "hole", "well", "to", "->", "|", '"', ":", "actor", "social", "building", "go", "",
]  # fmt: skip
"""Words that mean something in the fixture world, so commands get past their checks."""


@st.composite
def command_lines(draw: st.DrawFn) -> str:
    """A command line: a verb (real, shortened, mistyped or random), words, hostile text
    and sometimes a 100 KB argument or a private reason after ``|``."""
    verb = draw(
        st.one_of(
            st.sampled_from(VERBS),
            st.sampled_from(VERBS).map(lambda v: v[: max(1, len(v) - 2)]),
            st.sampled_from(['"', ":"]),
            nasty_text,
        )
    )
    words = draw(st.lists(st.one_of(st.sampled_from(WORDS), nasty_text), max_size=6))
    parts = [verb, *words]
    if draw(st.integers(0, 9)) == 0:
        parts.append(draw(long_text))
    if draw(st.booleans()):
        parts.insert(draw(st.integers(1, len(parts))), "->")
    line = draw(st.sampled_from([" ", "", "  ", "\t"])).join(parts)
    if draw(st.integers(0, 4)) == 0:
        line += " | " + draw(st.one_of(nasty_text, st.sampled_from(WORDS)))
    return line


steps = st.lists(
    st.tuples(st.sampled_from(sorted(ROLES.values())), command_lines()), min_size=1, max_size=4
)
"""A few command lines, each typed by the player, the builder or the admin."""


# -- a fresh vault per example ------------------------------------------------------


def seed_template(folder: Path) -> Path:
    """A seeded vault with memories and a note in ``folder``; returns ``folder``."""
    world_file = folder / "world.yaml"
    world_file.write_text(FIXTURE_WORLD, encoding="utf-8")
    sim = Simulation.open(folder / "vault", world_file)
    try:
        for who, line in [
            ("Pip", "look"),
            ("Pip", "note Plans -> Find the lamp."),
            ("Bea", "say Hello, Bo."),
            ("Ada", "go north"),
            ("Ada", "note Bo -> A quiet smith."),
        ]:
            sim.execute(sim.character(who), line)
        sim.save()
    finally:
        sim.close()
    return folder


@dataclass(frozen=True)
class Copy:
    """One example's copy of the template: ``root`` holds ``vault/`` and ``world.yaml``."""

    root: Path

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def world_file(self) -> Path:
        return self.root / "world.yaml"


@contextmanager
def vault_copy(template: Path, scratch: Path) -> Iterator[Copy]:
    root = Path(tempfile.mkdtemp(dir=scratch))
    try:
        shutil.copytree(template, root, dirs_exist_ok=True)
        yield Copy(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def file_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (but the lock) by relative path, with its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != ".lock"
    }


# -- what must hold after anything ---------------------------------------------------


def check_result(result: object) -> None:
    assert isinstance(result, Result), result
    assert isinstance(result.text, str)
    assert result.text.strip()
    assert result.hint is None or isinstance(result.hint, str)


def check_world(world: World) -> None:
    for character in world.characters.values():
        assert character.location in world.rooms, character
    for room in world.rooms.values():
        for name, target in room.exits.items():
            assert target in world.rooms, (room.id, name, target)
    for thing in world.things.values():
        assert thing.location in world.rooms, thing


def check_journals(sim: Simulation) -> None:
    """Every journal reads back whole: as many records as the mind counts, seqs 0..M-1."""
    for mind in sim.minds.values():
        mind.journal.sync()
        records = read_records(
            sim.vault.journal_path(mind.character.folder), warn=_no_warning, repair=False
        )
        assert [r.seq for r in records] == list(range(mind.count))


def _no_warning(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


_FOLDER_FILES = re.compile(
    r"(agent\.md|memories\.jsonl|memory-state\.json|notes/[\w-]{1,200}\.md"
    r"|summaries/[A-Za-z0-9_.-]+\.md)"
)
_CHRONICLE_FILES = re.compile(
    r"chronicle/(days/\d{4}-\d{2}-\d{2}/)?(world\.md|rooms/[A-Za-z0-9_-]{1,73}\.md)"
)
"""The chronicle (``engine.vault.chronicle``): today's files, and earlier days'."""


def check_layout(copy: Copy, world: World) -> None:
    """Nothing was written outside the vault, and every file in it is one the vault
    contract names: a note title or a room name never made a path of its own."""
    assert sorted(os.listdir(copy.root)) == ["vault", "world.yaml"]
    folders = {c.folder for c in world.characters.values()}
    for path in copy.vault.rglob("*"):
        if not path.is_file():
            continue
        rel = path.relative_to(copy.vault).as_posix()
        if rel in (".lock", "world/world.yaml", "world/clock.json") or re.fullmatch(
            r"config/(llm|memory_compaction|ai_defaults|limits|record|accounts|bans)\.md"
            r"|logs/(mudsim\.log|accounts\.lock|bans\.lock)",
            rel,
        ):
            continue
        if rel.startswith("chronicle/"):
            assert _CHRONICLE_FILES.fullmatch(rel), rel
            continue
        head, _, rest = rel.partition("/")
        folder, _, inner = rest.partition("/")
        assert head == "agents", rel
        assert folder in folders, rel
        assert _FOLDER_FILES.fullmatch(inner), rel


def describe(world: World) -> dict[str, Any]:
    """What a save must keep: every room, thing and character, field by field."""
    return {
        "name": world.name,
        "next_room_number": world.next_room_number,
        "rooms": {rid: vars(room) for rid, room in world.rooms.items()},
        "things": {tid: vars(thing) for tid, thing in world.things.items()},
        "characters": {cid: vars(c) for cid, c in world.characters.items()},
    }
