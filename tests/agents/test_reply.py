"""A model's completion as one command line (pure): thinking dropped, cue echoes and
quotes stripped, comments skipped; and the key that spots a repeated command."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.agents.reply import drop_thinking, parse_reply, repeat_key


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("look", "look"),
        ("  go north  \n", "go north"),
        ("~Bo> go north", "go north"),
        ("~bO>say hi", "say hi"),
        ("Bo> look", "look"),
        ("BO>look", "look"),
        ("> look", "look"),
        ('"examine the lamp"', "examine the lamp"),
        ("'look'", "look"),
        ("`look`", "look"),
        ("```look```", "look"),
        ('> "~Bo> `look`"', "look"),
        ("~Bo> ~Bo> look", "look"),
        ("say hi | she looks lonely", "say hi | she looks lonely"),
        ('"hello', '"hello'),
        ("'it is", "'it is"),
        ('say "hi"', 'say "hi"'),
        ("emote smiles.\nsay hi", "emote smiles."),
        ("# I should greet her\n\n  say hi", "say hi"),
        ("> # a heading\nlook", "look"),
        ("Ada> look", "Ada> look"),
        ("~Bob> look", "~Bob> look"),
    ],
)
def test_examples(text: str, expected: str) -> None:
    assert parse_reply(text, "Bo") == expected


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "# only a comment", "~Bo>", '""', "> ''"])
def test_nothing_to_do_is_none(text: str) -> None:
    assert parse_reply(text, "Bo") is None


def test_a_bare_cue_echo_line_is_skipped() -> None:
    assert parse_reply("~Bo>\n  look", "Bo") == "look"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>she seems sad\nmaybe say hi</think>\nsay hi", "say hi"),
        ("<THINK>a</Think>look", "look"),
        ("<think>a</think><think>b\n</think>\n<think></think>go north", "go north"),
        ("<think>a<think>b</think>look", "look"),
        ("look <think>and then", "look"),
        ("<think>never finished\nlook", None),
        ("the template opened it\n</think>\nlook", "look"),
        ("</think>a</think>look", "look"),
    ],
)
def test_thinking_is_dropped(text: str, expected: str | None) -> None:
    assert parse_reply(text, "Bo") == expected


def test_drop_thinking_keeps_what_surrounds_blocks() -> None:
    assert drop_thinking("a<think>x</think>b<think>y") == "ab"


def test_name_with_spaces_and_regex_characters() -> None:
    assert parse_reply("~old tom> look", "Old Tom") == "look"
    assert parse_reply("~A.B> look", "A.B") == "look"
    assert parse_reply("~AxB> look", "A.B") == "~AxB> look"


def test_repeat_key_examples() -> None:
    assert repeat_key("Say  Hello | why") == repeat_key("say hello") == "say hello"
    assert repeat_key("  go\tNorth ") == "go north"
    assert repeat_key("| only a reason") == ""
    assert repeat_key("say a | b | c") == "say a"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"command": "go east"}', "go east"),
        ('{\n  "command": "say Hi | to greet"\n}', "say Hi | to greet"),
        ('  {"command": "~Bo> look"}  ', "look"),
        ('{"command": ""}', None),
        ('{"command": "{\\"command\\": \\"look\\"}"}', None),
        ('{"verb": "look"}', '{"verb": "look"}'),
        ('{"command": "look"', "look"),
        ('{"command": "say caf\\u00e9 is', "say café is"),
        ('{"command": "say a \\', "say a"),
        ('{"verb": "look"', '{"verb": "look"'),
    ],
)
def test_a_json_command_object_is_its_command(text: str, expected: str | None) -> None:
    assert parse_reply(text, "Bo") == expected


# --- properties ----------------------------------------------------------------------

names = st.sampled_from(["Bo", " bo "]) | st.text(alphabet="abcdefgXYZ0189 ", max_size=10)
tokens = (
    st.sampled_from(["~", ">", "#", '"', "'", "`", "|", " ", "\n", "\r", "\u2028"])
    | st.sampled_from(["<think>", "</think>", "<THINK>", "~Bo>", "bo>", "look", "a"])
    | st.characters()
)
replies = st.lists(tokens, max_size=30).map("".join)
json_replies = st.builds(
    lambda inner, spaces: json.dumps({"command": inner}, indent=spaces),
    replies,
    st.none() | st.integers(0, 2),
)


@given(replies | json_replies, names)
def test_result_is_one_non_empty_stripped_line(text: str, name: str) -> None:
    result = parse_reply(text, name)
    if result is not None:
        assert result
        assert "\n" not in result
        assert result.splitlines() == [result]
        assert result == result.strip()
        assert not result.startswith("#")
        assert "<think>" not in result.lower()
        assert "</think>" not in result.lower()


@given(replies | json_replies, names)
def test_parsing_twice_changes_nothing(text: str, name: str) -> None:
    result = parse_reply(text, name)
    if result is not None:
        assert parse_reply(result, name) == result


commands = st.from_regex(r"[a-z][a-z ,.!?|]{0,20}[a-z.!?]", fullmatch=True)


@given(commands, names, st.sampled_from(["~{}> ", "{}>", "> ", "", "  "]))
def test_cue_echoes_are_stripped(command: str, name: str, echo: str) -> None:
    assume(name.strip())
    prefix = echo.format(name.strip().upper())
    assert parse_reply(prefix + command, name) == command


@given(commands, names, st.text(max_size=30))
def test_thinking_never_reaches_the_command(command: str, name: str, thought: str) -> None:
    assume("</think>" not in thought.lower())
    assert parse_reply(f"<think>{thought}</think>\n{command}", name) == command
    assert parse_reply(f"{command}<think>{thought}", name) == command


words = st.lists(st.from_regex(r"[A-Za-z0-9.,!?'\"]{1,6}", fullmatch=True), min_size=1, max_size=6)
gaps = st.lists(st.sampled_from([" ", "  ", "\t", " \t "]), min_size=7, max_size=7)


@given(words, gaps, gaps, st.text(max_size=10))
def test_repeat_key_ignores_case_whitespace_and_reason(
    parts: list[str], gaps_a: list[str], gaps_b: list[str], reason: str
) -> None:
    def spaced(gaps: list[str]) -> str:
        return gaps[0] + "".join(w + g for w, g in zip(parts, gaps[1:], strict=False))

    key = repeat_key(" ".join(parts))
    assert repeat_key(spaced(gaps_a).upper()) == key
    assert repeat_key(spaced(gaps_b).lower() + "|" + reason) == key
    assert key == key.strip()
    assert "  " not in key


def test_a_reply_that_copies_its_prompt_echoes_it() -> None:
    from engine.agents.reply import echoes_transcript

    prompt = (
        'You are Ash.\n---\nWren says, "The bread is warm and the kettle is singing now."\n---\n'
        "## Good moves here (examples)\n~Ash> say Hello, Wren. How are you today?\n~Ash>"
    )
    assert echoes_transcript("say The bread is warm and the kettle is singing", prompt)
    assert echoes_transcript("say I've got a ~Ash>say I've got a", prompt)
    assert echoes_transcript("emote nods. Wren> say more", prompt)
    assert not echoes_transcript("say Hello, Wren. How are you today?", prompt)  # an example
    assert not echoes_transcript("say The bread is warm, thank you.", prompt)  # five words
    assert not echoes_transcript("go east", prompt)
