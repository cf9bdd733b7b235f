"""A divergence says where two texts first differ: the line, the column, and each side
from a little before it, so the two excerpts shown are never the same text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.lab.replay_tape import first_difference, where_lines_differ

LINE = st.text(alphabet="abc xyz", max_size=300)


@given(LINE, LINE, LINE)
def test_the_column_and_excerpts_are_where_two_lines_part(
    common: str, recorded_tail: str, replayed_tail: str
) -> None:
    recorded, replayed = common + "R" + recorded_tail, common + "P" + replayed_tail
    said = where_lines_differ(recorded, replayed)
    assert said.startswith(f"column {len(common) + 1}: recorded ")
    was, now = said.split(": recorded ", 1)[1].split(", replayed ")
    assert "R" in was  # each excerpt holds its side's differing character
    assert "P" in now


def test_two_long_lines_that_differ_late_show_the_difference_not_their_beginnings() -> None:
    head = "Ash says, " + "the well is deep and " * 10
    said = first_difference(f"one\n{head}cold.\n", f"one\n{head}warm.\n")
    assert said.startswith(f"line 2, column {len(head) + 1}: ")
    assert "cold." in said
    assert "warm." in said


@given(st.lists(LINE, max_size=5), st.lists(LINE, max_size=5))
def test_any_two_different_texts_get_a_place(old: list[str], new: list[str]) -> None:
    recorded, replayed = "\n".join(old), "\n".join(new)
    if recorded == replayed:
        return
    said = first_difference(recorded, replayed)
    a, b = recorded.splitlines(), replayed.splitlines()
    at = next((n for n, (x, y) in enumerate(zip(a, b, strict=False), 1) if x != y), None)
    if at is None:
        assert said == f"the recorded text has {len(a)} lines, the replayed {len(b)}"
    else:
        x, y = a[at - 1], b[at - 1]
        column = 1 + max(n for n in range(min(len(x), len(y)) + 1) if x[:n] == y[:n])
        assert said.startswith(f"line {at}, column {column}: ")


def test_texts_that_differ_only_in_line_endings_are_said_so() -> None:
    assert first_difference("a\nb\n", "a\r\nb") == "the texts differ only in their line endings"
