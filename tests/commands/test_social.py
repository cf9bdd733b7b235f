"""look / l, say / ", emote / :, examine / ex."""

from __future__ import annotations

import pytest
from helpers import memories, run

from engine.sim.simulation import Simulation


def test_look_describes_the_room_and_is_seen(sim: Simulation) -> None:
    result = run(sim, "Pat", "look")
    assert result.ok
    assert result.text == (
        "The Hall\n"
        "A long hall with a stone floor.\n"
        "Exits: north (The Yard), stair (The Tower), down (The Cellar).\n"
        "You see a brass lamp.\n"
        "Also here: Ada and Pip."
    )
    assert memories(sim, "Ada") == ["Pat looks around."]


def test_l_is_look(sim: Simulation) -> None:
    result = run(sim, "Bo", "l")
    assert result.ok
    assert result.text.startswith("The Yard\nA muddy yard.\nExits: south (The Hall).")
    assert "You see an old well." in result.text
    assert "Also here: Bea." in result.text


def test_look_at_a_thing_examines_it(sim: Simulation) -> None:
    result = run(sim, "Pat", "look lamp")
    assert result.ok
    assert result.text == "a brass lamp: It gives a warm light."


@pytest.mark.parametrize("verb", ["look", "l"])
def test_look_at_something_not_here_fails(sim: Simulation, verb: str) -> None:
    result = run(sim, "Pat", f"{verb} well")
    assert not result.ok
    assert result.text == "You don't see any thing or character here called 'well'."
    assert result.hint == "Try 'look' to see what is here."


def test_say_is_heard_by_the_room(sim: Simulation) -> None:
    result = run(sim, "Pat", "say hi")
    assert result.ok
    assert result.text == 'You say, "hi"'
    assert memories(sim, "Ada") == ['Pat says, "hi"']
    assert memories(sim, "Pip") == ['Pat says, "hi"']


def test_say_strips_surrounding_quotes(sim: Simulation) -> None:
    assert run(sim, "Pat", 'say "hello there"').text == 'You say, "hello there"'
    assert memories(sim, "Ada") == ['Pat says, "hello there"']


def test_say_alone_says_nobody_hears(sim: Simulation) -> None:
    run(sim, "Pat", "go stair")
    result = run(sim, "Pat", "say hello?")
    assert result.ok
    assert result.text == 'You say, "hello?" (Nobody else is here to hear you.)'


def test_say_nothing_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "say")
    assert not result.ok
    assert result.text == "Say what?"
    assert result.hint == "Try: say Hello there."
    assert memories(sim, "Ada") == []


@pytest.mark.parametrize("line", ['"hi there', '"hi there"'])
def test_quote_shortcut_is_say(sim: Simulation, line: str) -> None:
    result = run(sim, "Pat", line)
    assert result.ok
    assert result.text == 'You say, "hi there"'
    assert memories(sim, "Ada") == ['Pat says, "hi there"']


def test_quote_shortcut_with_nothing_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", '"')
    assert not result.ok
    assert result.text == "Say what?"


def test_emote_shows_the_action(sim: Simulation) -> None:
    result = run(sim, "Pat", "emote waves.")
    assert result.ok
    assert result.text == "Pat waves."
    assert memories(sim, "Ada") == ["Pat waves."]


def test_colon_shortcut_is_emote(sim: Simulation) -> None:
    result = run(sim, "Pat", ":grins widely")
    assert result.ok
    assert result.text == "Pat grins widely."  # a sentence, ended
    assert memories(sim, "Pip") == ["Pat grins widely."]
    assert run(sim, "Pat", "emote asks, 'ready?'").text == "Pat asks, 'ready?'"


@pytest.mark.parametrize("line", ["emote", ":"])
def test_emote_nothing_fails(sim: Simulation, line: str) -> None:
    result = run(sim, "Pat", line)
    assert not result.ok
    assert result.text == "Emote what?"
    assert result.hint == "Try: emote waves."
    assert memories(sim, "Ada") == []


def test_examine_a_thing(sim: Simulation) -> None:
    result = run(sim, "Pat", "examine lamp")
    assert result.ok
    assert result.text == "a brass lamp: It gives a warm light."
    assert memories(sim, "Ada") == ["Pat examines a brass lamp."]


def test_ex_a_character(sim: Simulation) -> None:
    result = run(sim, "Pat", "ex Ada")
    assert result.ok
    assert result.text == "Ada (agent): A woman with soil on her boots."
    assert memories(sim, "Ada") == ["Pat examines Ada."]


def test_examine_a_thing_by_alias(sim: Simulation) -> None:
    assert run(sim, "Bo", "examine hole").text == "an old well: Deep and cold."


def test_examine_me_and_here(sim: Simulation) -> None:
    assert run(sim, "Pat", "examine me").text == "You (player): A traveller in a grey cloak."
    assert run(sim, "Bea", "examine me").text == "You (player): You see nothing special."
    assert run(sim, "Pat", "examine here").text.startswith("The Hall\nA long hall")
    assert memories(sim, "Ada") == []


def test_examine_nothing_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "examine")
    assert not result.ok
    assert result.text == "Examine what?"


def test_examine_something_in_another_room_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "ex well")
    assert not result.ok
    assert result.text == "You don't see any thing or character here called 'well'."
    assert memories(sim, "Ada") == []


def test_examine_ambiguous_lists_the_candidates(sim: Simulation) -> None:
    result = run(sim, "Ada", "examine p")
    assert not result.ok
    assert result.text == "Which do you mean: Pat and Pip?"
    assert result.hint == "Say it more fully, or use its #id."
