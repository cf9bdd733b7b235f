"""Parsing one command line: verb, arguments, private reason, shortcuts, cleaning."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.commands.parser import ParsedLine, clean, parse_line


def parsed(line: str) -> ParsedLine:
    result = parse_line(line)
    assert result is not None, line
    return result


def test_verb_is_lower_cased_and_args_kept() -> None:
    result = parsed("LOOK At The Lamp")
    assert result.verb == "look"
    assert result.args == "At The Lamp"
    assert result.reason is None
    assert result.text == "LOOK At The Lamp"


def test_verb_alone() -> None:
    assert parsed("who") == ParsedLine("who", "", None, "who")


def test_surrounding_and_inner_spacing() -> None:
    result = parsed("   go    north   ")
    assert result.verb == "go"
    assert result.args == "north"
    assert result.text == "go    north"


def test_args_keep_their_case_and_inner_spacing() -> None:
    assert parsed("say Hello  THERE").args == "Hello  THERE"


def test_reason_after_a_bar() -> None:
    result = parsed("go north | to find Bo")
    assert result.verb == "go"
    assert result.args == "north"
    assert result.reason == "to find Bo"
    assert result.text == "go north"


def test_reason_splits_on_the_first_bar() -> None:
    result = parsed("say a | b | c")
    assert result.args == "a"
    assert result.reason == "b | c"
    assert result.text == "say a"


@pytest.mark.parametrize("line", ["say hi |", "say hi |   ", "say hi|\t"])
def test_empty_reason_is_none(line: str) -> None:
    result = parsed(line)
    assert result.args == "hi"
    assert result.reason is None


def test_no_bar_no_reason() -> None:
    assert parsed("say hi").reason is None


def test_double_quote_is_say() -> None:
    result = parsed('"hello there')
    assert result.verb == "say"
    assert result.args == "hello there"
    assert result.text == '"hello there'


def test_double_quote_with_space_and_reason() -> None:
    result = parsed('"  hello | being polite')
    assert (result.verb, result.args, result.reason) == ("say", "hello", "being polite")


def test_colon_is_emote() -> None:
    result = parsed(":waves")
    assert (result.verb, result.args) == ("emote", "waves")
    assert parsed(": waves at Bo").args == "waves at Bo"


def test_quotes_inside_the_text_are_kept() -> None:
    assert parsed('say she said "no"').args == 'she said "no"'
    assert parsed(':says "hi" loudly').args == 'says "hi" loudly'


def test_closing_quote_of_a_quoted_line_is_dropped() -> None:
    result = parsed('"hi"')
    assert (result.verb, result.args) == ("say", "hi")
    assert parsed('"hello there "').args == "hello there"


def test_only_a_lone_closing_quote_is_dropped() -> None:
    # An inner quote means the last one closes that, not the line.
    assert parsed('"she said "no"').args == 'she said "no"'
    assert parsed('"""').args == '""'


def test_a_bare_quote_says_a_quote_mark() -> None:
    assert parsed('""').args == '"'


def test_a_lone_shortcut_has_no_args() -> None:
    assert parsed('"') == ParsedLine("say", "", None, '"')
    assert parsed(":") == ParsedLine("emote", "", None, ":")


@pytest.mark.parametrize("line", ["", "   ", "\t\n", "| only a reason", "  |  ", "\x00\x1b"])
def test_blank_line_is_none(line: str) -> None:
    assert parse_line(line) is None


def test_nul_is_removed() -> None:
    result = parsed("lo\x00ok at\x00 lamp")
    assert result.verb == "look"
    assert result.args == "at lamp"


def test_escape_character_is_removed() -> None:
    result = parsed("say \x1b[31mred\x1b[0m")
    assert result.verb == "say"
    assert "\x1b" not in result.args
    assert "\x1b" not in result.text


def test_ansi_escape_sequences_are_removed_whole() -> None:
    result = parsed("say \x1b[31mred\x1b[0m text")
    assert result.args == "red text"
    assert parsed("\x1b[1mlook").verb == "look"


def test_other_control_characters_are_removed() -> None:
    result = parsed("say a\x07b\x7fc\x9bd\x08e | why\x00 not")
    assert result.args == "abcde"
    assert result.reason == "why not"


def test_tabs_and_newlines_become_spaces() -> None:
    result = parsed("go\tnorth\nnow\r")
    assert result.verb == "go"
    assert result.args == "north now"


# -- properties -------------------------------------------------------------------


def has_control(text: str) -> bool:
    return any(unicodedata.category(ch) == "Cc" for ch in text)


@given(st.text())
def test_parse_line_never_raises_and_yields_clean_fields(line: str) -> None:
    result = parse_line(line)
    if result is None:
        return
    assert isinstance(result, ParsedLine)
    assert result.verb
    assert not any(ch.isspace() for ch in result.verb), repr(result.verb)
    assert result.verb == result.verb.lower()
    for value in (result.verb, result.args, result.text, result.reason or ""):
        assert not has_control(value), repr(value)
    assert result.reason is None or result.reason.strip() == result.reason != ""
    assert result.args == result.args.strip()


@given(st.text(alphabet=st.characters(codec="ascii")))
def test_none_only_when_nothing_printable_before_the_bar(line: str) -> None:
    command = clean(line).partition("|")[0]  # an escape sequence such as ESC @ is no text
    printable = any(ch.isprintable() and not ch.isspace() for ch in command)
    result = parse_line(line)
    assert (result is None) == (not printable)
    if result is not None:
        assert " " not in result.verb
        assert result.text in line.replace("\t", " ").replace("\n", " ").replace("\r", " ") or (
            has_control(line)
        )


# -- NFKC: input as people type it ---------------------------------------------------


def full_width(text: str) -> str:
    """``text`` as a full-width input method types it: printable ASCII as U+FF01-U+FF5E,
    a space as the ideographic space U+3000; anything else as it is."""
    return "".join(
        "\u3000" if ch == " " else chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text
    )


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("ｌｏｏｋ", ParsedLine("look", "", None, "look")),
        ("ＧＯ　ｌｉｂｒａｒｙ", ParsedLine("go", "library", None, "GO library")),
        ("＂ｈｉ｜ｓｈｙ", ParsedLine("say", "hi", "shy", '"hi')),
        ("say ﬁne", ParsedLine("say", "fine", None, "say fine")),  # a ligature
        ("say Zoe\u0308", ParsedLine("say", "Zoë", None, "say Zoë")),  # composed
    ],
)
def test_a_line_is_taken_in_nfkc(typed: str, expected: ParsedLine) -> None:
    assert parse_line(typed) == expected


@given(st.text())
def test_parsing_the_full_width_form_of_a_line_is_parsing_the_line(line: str) -> None:
    ascii_line = "".join(ch for ch in line if ch.isascii())
    assert parse_line(full_width(ascii_line)) == parse_line(ascii_line)


@given(st.text(alphabet=st.characters(codec="ascii")))
def test_full_width_ascii_parses_as_ascii(line: str) -> None:
    assert parse_line(full_width(line)) == parse_line(line)


@given(st.text())
def test_a_clean_line_is_nfkc_and_cleaning_it_again_changes_nothing(line: str) -> None:
    cleaned = clean(line)
    assert unicodedata.is_normalized("NFKC", cleaned)
    assert clean(cleaned) == cleaned
