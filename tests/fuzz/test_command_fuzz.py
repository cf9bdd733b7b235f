"""Fuzzing the command line: the parser alone, then every command through the real
``Simulation.execute`` as a player, a builder and an admin, with hostile text
(control characters, bidi overrides, NUL, line separators, 100 KB lines).

After any sequence of commands: each one answered with a Result and raised nothing,
the world is consistent, every journal reads back whole, nothing was written outside
the vault's layout, and the world saves and loads back exactly as it was.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from fuzz_support import (
    FUZZ,
    ROLES,
    Copy,
    any_char,
    check_journals,
    check_layout,
    check_result,
    check_world,
    command_lines,
    costly,
    describe,
    long_text,
    nasty_text,
    seed_template,
    steps,
    vault_copy,
)
from hypothesis import example, given
from hypothesis import strategies as st

from engine.commands.parser import ParsedLine, clean, parse_line
from engine.sim.simulation import Simulation

# -- the parser ----------------------------------------------------------------------

UNSAFE_IN_A_NAME = {"\u2028", "\u2029", "\ufffe", "\uffff"}
"""Line breaks for YAML, and what YAML cannot hold: none may survive ``clean``."""


def visible_trouble(text: str) -> list[str]:
    """Characters ``clean`` must have removed: controls, bidi controls, surrogates."""
    return [
        ch
        for ch in text
        if unicodedata.category(ch) in ("Cc", "Cs")
        or unicodedata.bidirectional(ch)
        in ("LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI")
        or ch in UNSAFE_IN_A_NAME
    ]


any_line = st.one_of(
    st.text(any_char),
    nasty_text,
    command_lines(),
    st.text(st.characters(), max_size=40),  # surrogates too: undecodable argv bytes
)


@FUZZ
@given(any_line)
@example("say \u202eevil\u202c text")
@example("@dig Foo\u2028bar: baz")
@example("say \udcff\udcfe")
@example("note a\ufffe -> b\uffff")
def test_parsing_any_line_gives_clean_fields_or_none(line: str) -> None:
    result = parse_line(line)
    if result is None:
        assert not clean(line).partition("|")[0].strip()
        return
    assert isinstance(result, ParsedLine)
    assert result.verb
    assert result.verb == result.verb.lower()
    assert not any(ch.isspace() for ch in result.verb)
    for value in (result.verb, result.args, result.text, result.reason or ""):
        assert not visible_trouble(value), repr(value)
        value.encode("utf-8")  # no lone surrogate left to break a journal line


@FUZZ
@given(long_text)
def test_a_100_kb_line_parses_in_one_piece(text: str) -> None:
    result = parse_line("say " + text)
    assert result is not None
    assert result.verb == "say"
    assert len(result.args) <= len(unicodedata.normalize("NFKC", text))  # (ﬁ is fi)


# -- every command, through the simulation -------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seed_template(tmp_path_factory.mktemp("template"))


@pytest.fixture
def fast_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    """fsync is irrelevant to these properties and slow on a shared disk."""
    monkeypatch.setattr("os.fsync", lambda fd: None)


def run_and_check(copy: Copy, lines: list[tuple[str, str]]) -> None:
    warnings: list[str] = []
    sim = Simulation.open(copy.vault, copy.world_file, warn=warnings.append)
    try:
        for who, line in lines:
            character = sim.character(who)
            check_result(sim.execute(character, line))
            check_world(sim.world)
        check_journals(sim)
        counts = {cid: mind.count for cid, mind in sim.minds.items()}
        before = describe(sim.world)
        sim.save()
    finally:
        sim.close()
    check_layout(copy, sim.world)
    again = Simulation.open(copy.vault, copy.world_file, warn=warnings.append)
    try:
        assert describe(again.world) == before
        assert {cid: mind.count for cid, mind in again.minds.items()} == counts
        check_result(again.execute(again.character("Pat"), "look"))
    finally:
        again.close()
    assert warnings == []


@costly(30)
@given(lines=steps)
@example(lines=[("Bea", "@dig Foo\u2028bar: baz"), ("Bea", "go foo")])
@example(lines=[("Bea", "@dig Room\ufffe"), ("Bea", "go room")])
@example(lines=[("Bea", "@dig Room\u2029x"), ("Pat", "@teleport room")])
@example(lines=[("Pip", "note \u202eevil -> \udcff text"), ("Pip", "recall evil")])
@example(lines=[("Bea", "@dig " + "x" * 100_000), ("Bea", "go " + "x" * 100_000)])
@example(lines=[("Pip", "note " + "t" * 100_000 + " -> " + "x" * 100_000), ("Pip", "recall")])
@example(lines=[("Pat", "@set-profile a\u2028---\u2028b: c"), ("Pat", "@impersonate Ada")])
@example(lines=[("Pip", "note ../../../etc/passwd -> x"), ("Pip", "note .. -> x")])
@example(lines=[("Pat", "@ban Mallory 2h spamming --force"), ("Pat", "@ban")])  # config/bans.md
def test_any_commands_by_anyone_keep_the_vault_sound(
    template: Path, tmp_path: Path, fast_fsync: None, lines: list[tuple[str, str]]
) -> None:
    with vault_copy(template, tmp_path) as copy:
        run_and_check(copy, lines)


@costly(20)
@given(role=st.sampled_from(sorted(ROLES)), line=command_lines())
def test_any_single_command_in_each_role(
    template: Path, tmp_path: Path, fast_fsync: None, role: str, line: str
) -> None:
    with vault_copy(template, tmp_path) as copy:
        run_and_check(copy, [(ROLES[role], line)])
