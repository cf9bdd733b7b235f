"""Autocorrect against what models really write: a reply in prose is never rewritten
into a command, while a player's typo still is, and a bare direction with no exit
that way says so instead of running another verb.

REPLIES are lines the embedded model (SmolLM2-135M, no grammar, worlds/pocket.yaml,
60 turns) actually wrote, as ``parse_reply`` cut them, plus a few quoted in issue 14.
"""

from __future__ import annotations

import pytest
from helpers import run

from engine.commands import default_registry, parse_line
from engine.commands.registry import correction_limit
from engine.sim.simulation import Simulation
from engine.world.model import Role

REPLIES = [
    "What's the name of your wife?",
    "I'm a book-magento.",
    "what's your wife? This fails because: There's no command 'what's' to type \"wren\"",
    "How are you? I am looking at a book, I don't know where it is, what's its title?",
    "What do you think of the new restaurant in town?",
    "I'm here for you",
    "I want a cake. I want it to be in a room. I am not sure where it is. I will",
    "1. What do you do in your free time?",
    "You have a big, happy family, there's a cat, a dog, and a bunch of people.",
    "You can't use that.  There's no one in this house.",
    "*Welcome to the kitchen",
    "There is no command 'on the left' to see what you can do.",
    "what is your wife's name? This failed because: You have a wife. You have a wife and you love her",
    "no one in the room",
    "Can you tell me a little bit about yourself?",
    "This failed because: There is no command 'no'. Type 'help' or 'commands' to see what you can",
    "You've been asked to tell me what my wife wants me to do.",
    "(Take 'no' as 'note'.) I'm here for you. This failed because: (Taking 'no",
    "What do you do to the cat? This failed because: You have a cat. You have a cat. You have",
    "I was here, and I'm here now.  There is no command 'that'. Type 'help' or '",
    "+2",
    "(Cassidy) Have you ever gone to the kitchen?",
    "You are Ash. This failed because: (Taking 'no' as 'note'.) A note needs a title and",
    "You asked if I can help you with a cooking? You asked if I can help you with your wife. You asked",
    "I've just started cooking. What's your pleasure? What can I cook?",
    "You're here.  Now you're here.",
    "A cook in The Kitchen? This failed because: There is no command 'you'. Type 'help'",
    "I am here.  I'm here now.  I'm here now.",
    "+2. This failed because: There is no command +2. Type 'help' or 'commands' to see",
    '(Take "Ash" as note)',
    "What's in the fire? What's in the room?",
    "Welcome to the kitchen, welcome to The kitchen. You will see, I will tell you a little about yourself. You",
    "+1.  This failed because: There is no command 'wren'. Type 'help' or 'commands'",
    "welcome, this is a welcome to the kitchen, welcome to The kitchen. You will see, I will tell you a",
    "What is going on in here.",
    "What is the weather like today?",
    "I want to eat. I eat. I am here. I am here. I am here. I am here.",
    "+1",
    "(taking 'no' as 'note') You are here.  You are here now. You are here now.",
    "(left)",
    "What do you do? This failed because: You have a cat. You have a cat. You have. This failed",
    "This failed because: You can't remember anything",
    "This failed because: There is no command 'i'. Type 'help' or 'commands' to see what you can",
    "Guest  +1  This failed because: You have a cat. You have a cat. You have. This failed",
    'This failed because: (taking "Ash" as note) You are here.  You are here now.',
    "You walk north",
    'say "I\'ve got a" ~Ash>say "I\'ve got a"',
    "+add awir",
    "Speak, I will.",
    "I'm trying to add a command to an action.",
    "2111242232423232",
    "You look to your left. You see something.",
    "You try to remember.",
    "Hello there!",
    "No, I don't think so.",
    "Thanks, Wren.",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_a_model_reply_in_prose_is_never_rewritten_into_a_command(reply: str) -> None:
    parsed = parse_line(reply)
    assert parsed is not None
    found = default_registry().resolve(parsed.verb, Role.PLAYER)
    assert found.how in ("none", "exact"), (reply, found.how, found.command)


def test_the_table_holds_at_least_50_real_replies() -> None:
    assert len(set(REPLIES)) >= 50


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("lok", "look"), ("sya", "say"), ("exmaine", "examine"), ("emtoe", "emote"),
        ("thnik", "think"), ("recal", "recall"), ("hepl", "help"), ("whre", "where"),
        ("commnads", "commands"), ("exa", "examine"), ("emo", "emote"), ("rec", "recall"),
    ],
)  # fmt: skip
def test_a_players_typo_is_still_corrected(typed: str, meant: str) -> None:
    found = default_registry().resolve(typed, Role.PLAYER)
    assert found.command is not None, typed
    assert found.command.key == meant


@pytest.mark.parametrize(("word", "limit"), [("ab", 1), ("you", 1), ("look", 1), ("think", 2)])
def test_short_words_may_be_one_edit_away_longer_ones_two(word: str, limit: int) -> None:
    assert correction_limit(word) == limit


@pytest.mark.parametrize("word", ["n", "north", "ne", "up", "d", "out"])
def test_a_direction_with_no_exit_says_so_and_runs_nothing_else(sim: Simulation, word: str) -> None:
    here = sim.character("Bo").location
    assert not {"north", "northeast", "up", "down", "out"} & set(sim.world.rooms[here].exits)
    before = {name: mind.count for name, mind in sim.minds.items()}
    result = run(sim, "Bo", word)
    assert not result.ok
    assert result.text.startswith("There is no exit ")
    assert "note" not in result.text.lower()
    assert not (sim.vault.agent_dir("Bo") / "notes").exists() or not any(
        (sim.vault.agent_dir("Bo") / "notes").iterdir()
    )
    assert sim.minds["bo"].count == before["bo"] + 1  # only the failure, remembered
