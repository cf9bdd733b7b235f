"""The engine's example turns for the prompt (engine.agents.examples)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.agents.examples import EXAMPLES, Situation, example_turns
from engine.agents.reply import repeat_key
from engine.agents.speech_check import check_speech, speech_text

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


def test_with_someone_here_two_examples_speak_to_them_first_and_last() -> None:
    for turn in range(12):
        lines = example_turns(KITCHEN, turn)
        first, middle, last = lines
        assert first.startswith("say ")
        assert "Ash" in first
        assert last.startswith("say ")
        assert "Ash" in last
        assert not middle.startswith("say ")


_NAMES = st.sampled_from(["Ash", "Wren", "Moss", "Eliza"])
_THINGS = st.lists(st.sampled_from(["a copper kettle", "a loaf of bread", "an old well"]))


@given(st.integers(min_value=0, max_value=500), _NAMES, _THINGS, st.booleans())
def test_example_speech_is_language_and_never_prompt_markup(
    turn: int, name: str, things: list[str], exits: bool
) -> None:
    situation = Situation("The Garden", ["north"] if exits else [], things, [name])
    for line in example_turns(situation, turn):
        spoken = speech_text(line)
        if spoken is not None:
            assert check_speech(spoken[1]).passes, line
