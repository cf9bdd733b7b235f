"""The engine's example turns for the prompt (engine.agents.examples)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.agents.examples import EXAMPLES, Situation, example_turns
from engine.agents.reply import repeat_key

KITCHEN = Situation("The Kitchen", ["east", "south"], ["a copper kettle"], ["Ash"])


def test_examples_fit_the_room() -> None:
    lines = example_turns(KITCHEN, 0)
    assert len(lines) == EXAMPLES
    verbs = {line.split()[0] for line in lines}
    assert verbs <= {"say", "examine", "go", "emote"}
    for line in lines:
        if line.startswith("go "):
            assert line[3:] in KITCHEN.exits
        if line.startswith("examine "):
            assert line[8:] in KITCHEN.things
        if line.startswith("say "):
            assert "Ash" in line


def test_examples_rotate_with_the_turn() -> None:
    assert len({tuple(example_turns(KITCHEN, turn)) for turn in range(6)}) > 1


def test_recent_commands_are_not_suggested_again() -> None:
    avoid = frozenset({"go east", "go south", "examine a copper kettle"})
    lines = example_turns(
        Situation("The Kitchen", ["east", "south"], ["a copper kettle"], [], avoid), 3
    )
    assert lines
    assert not {repeat_key(line) for line in lines} & avoid


def test_an_empty_room_still_gets_an_example() -> None:
    lines = example_turns(Situation("The Void", [], [], []), 0)
    assert len(lines) == 1
    assert lines[0].startswith("emote ")


@given(st.integers(min_value=0, max_value=10_000))
def test_never_more_than_examples_and_never_a_duplicate(turn: int) -> None:
    lines = example_turns(KITCHEN, turn)
    assert 1 <= len(lines) <= EXAMPLES
    assert len(set(lines)) == len(lines)
