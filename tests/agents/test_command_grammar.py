"""The command grammar: built from the registry and the room, one language in three forms."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.agents.command_grammar import CommandGrammar, RoomView, command_shapes, help_topics
from engine.commands import default_registry, parse_line
from engine.sim.prompting import command_constraint, command_grammar
from engine.sim.simulation import Simulation
from engine.world.model import Role

COMMANDS = tuple(default_registry().allowed(Role.PLAYER))
VIEW = RoomView(exits=("north", "stair"), things=("a brass lamp", "Pip"), topics=("go", "social"))
GRAMMAR = CommandGrammar(command_shapes(COMMANDS, VIEW))


def test_real_exits_and_occupants_only() -> None:
    assert GRAMMAR.accepts("go north")
    assert GRAMMAR.accepts("go stair")
    assert not GRAMMAR.accepts("go south")
    assert GRAMMAR.accepts("examine a brass lamp")
    assert GRAMMAR.accepts("examine Pip")
    assert not GRAMMAR.accepts("examine the moon")
    assert GRAMMAR.accepts("look")
    assert GRAMMAR.accepts("say Hello, Pip! | to be kind")
    assert GRAMMAR.accepts("note Bread -> flour, water, salt")
    assert not GRAMMAR.accepts("dance")
    assert not GRAMMAR.accepts("say")
    assert not GRAMMAR.accepts("say two\nlines")


def test_out_of_character_and_unusable_commands_are_left_out() -> None:
    nowhere = CommandGrammar(command_shapes(COMMANDS, RoomView()))
    assert "go" not in nowhere.verbs
    assert "examine" not in nowhere.verbs
    assert "look" in nowhere.verbs  # its target is optional
    assert not any(verb.startswith("@") for verb in GRAMMAR.verbs)
    assert "@memory-status" not in help_topics(COMMANDS)


def test_names_that_cannot_be_typed_on_one_line_are_not_offered() -> None:
    odd = CommandGrammar(command_shapes(COMMANDS, RoomView(exits=("a|b", "up\nstairs", "in"))))
    assert odd.accepts("go in")
    assert not odd.accepts("go a|b")


def test_regex_metacharacters_in_names_are_literal() -> None:
    names = ("the (odd) door", "a.b", "c+d*", "[x]")
    grammar = CommandGrammar(command_shapes(COMMANDS, RoomView(exits=names)))
    for name in names:
        assert grammar.accepts(f"go {name}")
    assert not grammar.accepts("go aXb")


def test_gbnf_has_every_verb_and_the_reason() -> None:
    text = GRAMMAR.gbnf()
    assert text.startswith('root ::= command ( " | " reason )?\n')
    for verb in GRAMMAR.verbs:
        assert f'( "{verb}"' in text
    assert '"go" " " ( "north" | "stair" )' in text
    assert (
        '"\\"quoted\\""'
        in CommandGrammar(command_shapes(COMMANDS, RoomView(exits=('"quoted"',)))).gbnf()
    )


def test_json_schema_pattern_is_the_anchored_regex() -> None:
    schema = GRAMMAR.json_schema()
    pattern = schema["properties"]["command"]["pattern"]
    assert schema["required"] == ["command"]
    assert pattern == f"^{GRAMMAR.regex()}$"
    assert "(?" not in pattern  # plain groups only


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_regex(re.compile(GRAMMAR.regex()), fullmatch=True))
def test_every_accepted_line_names_a_real_command_and_real_things(line: str) -> None:
    parsed = parse_line(line)
    assert parsed is not None
    assert default_registry().resolve(parsed.verb, Role.PLAYER).how == "exact"
    if parsed.verb == "go":
        assert parsed.args in VIEW.exits
    if parsed.verb == "examine":
        assert parsed.args in VIEW.things


def test_built_from_the_agents_room_in_a_simulation(sim: Simulation) -> None:
    ada = sim.character("Ada")
    grammar = command_grammar(sim, ada)
    assert grammar.accepts("go north")
    assert grammar.accepts("go stair")
    assert grammar.accepts("examine a brass lamp")
    assert grammar.accepts("examine Pat")
    assert not grammar.accepts("examine Ada")  # not yourself
    assert not grammar.accepts("examine an old well")  # in the yard
    sim.execute(ada, "go north")
    moved = command_grammar(sim, ada)
    assert moved.accepts("examine an old well")
    assert moved.accepts("examine Bo")
    assert not moved.accepts("go north")
    constraint = command_constraint(sim, ada)
    assert constraint is command_constraint(sim, ada)  # cached while nothing changes
    assert '"an old well"' in constraint.gbnf


def test_free_text_is_words_not_digits_nor_the_transcripts_markup() -> None:
    assert GRAMMAR.accepts("say Café au lait, Pip? Très bien!")
    assert GRAMMAR.accepts("think Привет, 日本")  # a thought may be in any script
    assert not GRAMMAR.accepts("say Привет!")  # speech is Latin letters only
    assert not GRAMMAR.accepts("emote ampersanag an armchair. эта острона.")
    for markup in ("## Handbook", "Exits: north", "help [topic]", "go <exit>", "~Ash> hi"):
        assert not GRAMMAR.accepts(f"say {markup}"), markup
    assert not GRAMMAR.accepts("say 2111242232423232")
    assert not GRAMMAR.accepts('say "quoted"')
    assert not GRAMMAR.accepts("say I've got a ~Ash>say I've")
    assert not GRAMMAR.accepts("say " + " ".join(["word"] * 11))  # ten words at most


def test_recent_commands_leave_the_choices_and_verbs_rest() -> None:
    view = RoomView(
        exits=("north", "stair"),
        things=("a brass lamp",),
        avoid=frozenset({"go north", "look", "examine a brass lamp"}),
        rest=frozenset({"note", "help"}),
    )
    grammar = CommandGrammar(command_shapes(COMMANDS, view))
    assert not grammar.accepts("go north")
    assert grammar.accepts("go stair")
    assert not grammar.accepts("look")
    assert grammar.accepts("look a brass lamp")  # only the bare verb was recent
    assert "examine" not in grammar.verbs  # its only choice was recent
    assert "note" not in grammar.verbs
    assert "help" not in grammar.verbs
    assert grammar.accepts("say Hello.")  # free text is never left out


def test_note_titles_from_the_situations_words_and_no_reason() -> None:
    view = RoomView(title_words=("Kettle", "Kitchen", "Ash"))
    grammar = CommandGrammar(command_shapes(COMMANDS, view), reason=False)
    assert grammar.accepts("note Kettle -> it hums when the water is ready")
    assert grammar.accepts("note Kitchen Ash -> warm")
    assert not grammar.accepts("note Bread -> flour")
    assert not grammar.accepts("note Kettle Kitchen Ash -> three words")
    assert not grammar.accepts("say Hello. | to be kind")
    assert "reason" not in grammar.gbnf().splitlines()[0]


def test_an_agents_grammar_avoids_its_last_commands_and_rests_its_notes(sim: Simulation) -> None:
    ada = sim.character("Ada")
    assert command_grammar(sim, ada).accepts("go stair")
    assert "recall" not in command_grammar(sim, ada).verbs  # no notes yet
    sim.execute(ada, "look")
    sim.execute(ada, "note Lamp -> brass")
    grammar = command_grammar(sim, ada)
    assert not grammar.accepts("look")
    assert "recall" in grammar.verbs
    assert "note" not in grammar.verbs
    assert "help" not in grammar.verbs
    assert not grammar.accepts("say Hello, Pat. | a reason")
    assert grammar.accepts("say Hello, Pat.")
