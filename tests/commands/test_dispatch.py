"""Simulation.execute: verb resolution and autocorrect, events, and what is remembered."""

from __future__ import annotations

import pytest
from helpers import memories, run

from engine.memory.record import MemoryKind, MemoryRecord
from engine.sim.simulation import Simulation


def last(sim: Simulation, who: str) -> MemoryRecord:
    return sim.minds[sim.character(who).id].tail[-1]


# -- resolving the verb ---------------------------------------------------------------
def test_empty_line_asks_for_a_command_and_is_not_remembered(sim: Simulation) -> None:
    result = run(sim, "Pat", "   | only a reason")
    assert not result.ok
    assert result.text == "Type a command, or 'help'."
    assert memories(sim, "Pat") == []


def test_a_prefix_is_corrected_and_says_so(sim: Simulation) -> None:
    result = run(sim, "Pat", "exa lamp")
    assert result.ok
    assert result.text == "(Taking 'exa' as 'examine'.)\na brass lamp: It gives a warm light."
    assert memories(sim, "Ada") == ["Pat examines a brass lamp."]


def test_a_typo_is_corrected_by_edit_distance(sim: Simulation) -> None:
    result = run(sim, "Pat", "lok")
    assert result.ok
    assert result.text.startswith("(Taking 'lok' as 'look'.)\nThe Hall\n")
    assert memories(sim, "Ada") == ["Pat looks around."]


def test_an_ambiguous_verb_asks_and_runs_nothing(sim: Simulation) -> None:
    result = run(sim, "Pip", "r")
    assert not result.ok
    assert result.text == "'r' could mean recall and rooms."
    assert result.hint == "Type more of the command."
    assert sim.character("Pip").location == "hall"
    assert memories(sim, "Ada") == []


def test_an_unknown_verb_fails_with_a_hint(sim: Simulation) -> None:
    result = run(sim, "Pip", "xyzzy")
    assert not result.ok
    assert result.text == "There is no command 'xyzzy'."
    assert result.hint == "Type 'help' or 'commands' to see what you can do."


@pytest.mark.parametrize("verb", ["@d", "@di", "@tele", "@impers"])
def test_a_player_is_never_corrected_to_a_command_above_its_role(
    sim: Simulation, verb: str
) -> None:
    result = run(sim, "Pip", f"{verb} The Shed")
    assert not result.ok
    assert "Taking" not in result.text
    for command in ("@dig", "@teleport", "@impersonate"):
        assert command not in result.text
    assert len(sim.world.rooms) == 4
    assert sim.character("Pip").location == "hall"


def test_an_admin_is_corrected_to_a_builder_command(sim: Simulation) -> None:
    result = run(sim, "Pat", "@di The Shed")
    assert result.ok
    assert result.text.startswith("(Taking '@di' as '@dig'.)\nYou dig The Shed")


def test_verbs_are_case_insensitive(sim: Simulation) -> None:
    assert run(sim, "Pat", "WHERE").text == "You are in The Hall (#hall)."


# -- events and memory ------------------------------------------------------------------
def test_observers_remember_events_and_the_actor_its_result(sim: Simulation) -> None:
    run(sim, "Pat", "say hi")
    assert memories(sim, "Ada") == ['Pat says, "hi"']
    assert last(sim, "Ada").kind is MemoryKind.OBSERVATION
    assert memories(sim, "Pat") == ['You say, "hi"']
    assert last(sim, "Pat").kind is MemoryKind.RESULT
    assert last(sim, "Pat").command == "say hi"


def test_characters_in_other_rooms_get_nothing(sim: Simulation) -> None:
    run(sim, "Pat", "say hi")
    run(sim, "Pat", "emote waves.")
    run(sim, "Pat", "look")
    assert memories(sim, "Bo") == []
    assert memories(sim, "Bea") == []


@pytest.mark.parametrize(
    "line",
    [
        "look",
        "say hi",
        ":waves",
        "examine Ada",
        "go north",
        "north",
        "think hmm",
        "note A -> b",
        "recall",
        "@set-profile A wanderer.",
        "@dig Attic",
        "@tp The Tower",
        "go nowhere",
        "xyzzy",
    ],
)
def test_the_actor_gets_exactly_one_memory_and_no_echo(sim: Simulation, line: str) -> None:
    result = run(sim, "Pat", line)
    (record,) = sim.minds[sim.character("Pat").id].tail
    assert record.kind is not MemoryKind.OBSERVATION
    assert result.text in record.text


def test_a_failed_command_is_remembered_with_what_and_why(sim: Simulation) -> None:
    run(sim, "Pat", "go west")
    record = last(sim, "Pat")
    assert record.failed
    assert record.command == "go west"
    assert record.text == (
        "You tried: go west\n"
        "This failed because: You don't see any exit or room called 'west'.\n"
        "Exits here: north, stair and down. Try 'rooms' to list every room."
    )


def test_a_refused_command_is_remembered_as_failed(sim: Simulation) -> None:
    run(sim, "Pip", "@dig The Shed")
    record = last(sim, "Pip")
    assert record.failed
    assert record.text.startswith(
        "You tried: @dig The Shed\n"
        "This failed because: '@dig' needs the builder role; you are a player."
    )


def test_a_successful_command_is_not_marked_failed(sim: Simulation) -> None:
    run(sim, "Pat", "look")
    assert not last(sim, "Pat").failed


def test_a_thought_is_remembered_as_a_thought(sim: Simulation) -> None:
    run(sim, "Pat", "think Ada looks tired")
    record = last(sim, "Pat")
    assert record.kind is MemoryKind.THOUGHT
    assert record.text == "You think: Ada looks tired"
    assert not any("tired" in m for m in memories(sim, "Ada"))


@pytest.mark.parametrize(
    ("line", "command", "seen"),
    [
        ("say hi | to seem friendly", "say hi", 'Pat says, "hi"'),
        (":waves | to seem friendly", ":waves", "Pat waves."),
        ("north | to seem friendly", "north", "Pat leaves north to The Yard."),
    ],
)
def test_the_reason_is_remembered_but_never_shown(
    sim: Simulation, line: str, command: str, seen: str
) -> None:
    run(sim, "Pat", line)
    record = last(sim, "Pat")
    assert record.reason == "to seem friendly"
    assert record.command == command
    assert "friendly" not in record.text
    assert memories(sim, "Ada") == [seen]
    assert last(sim, "Ada").reason is None
