"""The served world's pure rules, property-tested: cutting lines, cleaning them, the
rate limit, text for a client (safe, wrapped, coloured), and what GMCP and MSSP say."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.sim.simulation import Simulation
from engine.telnet.limits import (
    LineAssembler,
    RateLimiter,
    TooLong,
    clean_line,
)
from engine.telnet.payloads import char_status, mssp, room_info, room_number
from engine.telnet.render import lines_for, safe_text, supports_colour, wrap, wrap_width

ENDS = st.sampled_from(["\r\n", "\n", "\r", "\r\x00"])
LINE = st.text(st.characters(blacklist_characters="\r\n\x00"), max_size=40)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@given(st.lists(st.tuples(LINE, ENDS), max_size=12), st.lists(st.integers(0, 10_000)),
       st.integers(1, 30))  # fmt: skip
def test_lines_come_back_whole_however_the_text_is_cut(
    lines: list[tuple[str, str]], cuts: list[int], limit: int
) -> None:
    text = "".join(line + end for line, end in lines)
    for (_, end), (after, after_end) in itertools.pairwise(lines):  # a lone CR, then LF:
        assume(not (end == "\r" and after == "" and after_end == "\n"))  # CR LF, one end
    assembler = LineAssembler(limit)
    got: list[str | TooLong] = []
    for chunk in _chunks(text, cuts):
        got += assembler.feed(chunk)
        assert sum(len(piece) for piece in assembler._partial) <= limit  # never more kept
    assert got == [line if len(line) <= limit else TooLong(len(line)) for line, _ in lines]


def test_an_unfinished_line_waits_for_its_end() -> None:
    assembler = LineAssembler(10)
    assert assembler.feed("loo") == []
    assert assembler.pending == 3
    assert assembler.feed("k\r") == ["look"]
    assert assembler.feed("\nsay hi\n") == ["say hi"]  # the LF was the CR's pair


@given(st.text(max_size=80))
def test_a_clean_line_has_no_control_characters_and_cleaning_twice_changes_nothing(
    line: str,
) -> None:
    cleaned = clean_line(line)
    if "\ufffd" in line:
        assert cleaned is None
        return
    assert cleaned is not None
    assert all(ch.isprintable() for ch in cleaned)
    assert clean_line(cleaned) == cleaned


@given(st.text(st.characters(categories=["L", "N", "P", "Zs"]), max_size=60))
def test_printable_text_is_left_as_it_is(line: str) -> None:
    if all(ch.isprintable() for ch in line):
        assert clean_line(line) == line


def test_cleaning_erases_and_drops_escapes() -> None:
    assert clean_line("lookk\x7f") == "look"
    assert clean_line("\x1b[A\x1b[1;5Cgo north\x1bOP") == "go north"
    assert clean_line("say\thi\x00\x07") == "say hi"
    assert clean_line("caf\ufffd") is None


def test_the_rate_limit_runs_a_burst_then_makes_each_line_wait_its_turn() -> None:
    now = [0.0]
    limiter = RateLimiter(5, clock=lambda: now[0])
    waits = [limiter.reserve() for _ in range(8)]
    assert waits == pytest.approx([0.0] * 5 + [0.2, 0.4, 0.6])
    now[0] = 0.6  # the three waited their turns: the bucket is empty, not in debt
    assert limiter.reserve() == pytest.approx(0.2)


@given(st.floats(0.5, 20), st.lists(st.floats(0, 2), max_size=60))
def test_lines_that_wait_their_turn_never_run_faster_than_the_rate(
    rate: float, gaps: list[float]
) -> None:
    """Each line runs when its wait is over; by any time, at most the burst and the
    rate's worth of lines have run."""
    now = [0.0]
    limiter = RateLimiter(rate, clock=lambda: now[0])
    ran_at = []
    for gap in gaps:
        now[0] += gap
        wait = limiter.reserve()
        now[0] += wait  # the session sleeps, then runs the line
        ran_at.append(now[0])
    for index, when in enumerate(ran_at):
        assert index + 1 <= limiter.burst + rate * when + 1e-6


@given(st.text(max_size=300), st.integers(10, 120))
def test_wrapped_lines_fit_the_width_and_keep_every_word(text: str, width: int) -> None:
    lines = wrap(text, width)
    assert all(len(line) <= width for line in lines)
    kept = "".join("".join(lines).split())
    assert kept == "".join("".join(safe_text(text).split("\n")).split())


@given(st.text(max_size=200))
def test_safe_text_keeps_no_control_character_but_the_line_break(text: str) -> None:
    assert all(ch == "\n" or ch.isprintable() for ch in safe_text(text))


@given(st.text(max_size=200), st.integers(10, 80))
def test_colour_wraps_each_line_on_its_own(text: str, width: int) -> None:
    coloured = lines_for(text, width, "bold cyan")
    assert [ANSI.sub("", line) for line in coloured] == wrap(text, width)
    for line in coloured:
        assert not line or (line.startswith("\x1b[1;36m") and line.endswith("\x1b[0m"))
    assert lines_for(text, width, "bold cyan", colour=False) == wrap(text, width)


def test_which_clients_get_colour() -> None:
    assert supports_colour(["xterm-256color"])
    assert supports_colour(["MUDLET", "ANSI-TRUECOLOR", "MTTS 2825"])
    assert not supports_colour(["TINTIN++", "xterm", "MTTS 0"])  # MTTS says exactly
    assert not supports_colour(["dumb"])
    assert not supports_colour([])  # a raw socket said nothing
    assert not supports_colour(["unknown"])


def test_the_wrap_width_is_what_naws_said_within_bounds() -> None:
    assert [wrap_width(c) for c in (None, 0, 5, 100, 5000, True)] == [80, 80, 10, 100, 1000, 80]


def test_gmcp_and_mssp_payloads(sim: Simulation) -> None:
    world = sim.world
    hall = world.rooms["hall"]
    assert room_info(world, hall) == {
        "num": 1, "id": "hall", "name": "The Hall", "area": "Fixture",
        "exits": {"north": 2, "stair": 3, "down": 4},
    }  # fmt: skip
    sim.execute(sim.character("Pat"), "@dig The Pantry")  # a new room comes last
    assert room_number(world, "cellar") == 4
    assert room_info(world, hall)["exits"]["pantry"] == 5
    assert char_status(world, sim.character("Bea")) == {
        "name": "Bea", "room": "The Yard", "role": "builder",
    }  # fmt: skip
    variables = mssp("Fixture", 2, 1_700_000_000.7)
    assert (variables["NAME"], variables["PLAYERS"], variables["UPTIME"]) == (
        "Fixture", "2", "1700000000",
    )  # fmt: skip


@given(st.text(max_size=120), st.integers(10, 120))
def test_a_line_that_fits_is_wrapped_as_textwrap_would(text: str, width: int) -> None:
    import textwrap

    for line in safe_text(text).split("\n"):
        expected = textwrap.wrap(line, width, break_on_hyphens=False) or [""]
        assert wrap(line, width) == expected
