"""What the play bench counts as a sensible turn (engine.agents.play_quality)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.agents.play_quality import has_words, is_word, is_words, judge_turn


def _judge(
    verb: str | None, argument: str = "", *, ok: bool = True, recent: tuple[str, ...] = ()
) -> str:
    key = f"{verb} {argument}".strip() if verb else None
    return judge_turn(verb, argument, ok=ok, key=key, recent_keys=list(recent)).why


def test_a_valid_new_command_is_sensible() -> None:
    assert _judge("say", "Hello, Ash. How are you?") == "sensible"
    assert _judge("go", "east", recent=("look", "say hi")) == "sensible"
    assert _judge("note", "Kettle -> it hums when ready") == "sensible"


def test_what_is_not_sensible_and_why() -> None:
    assert _judge(None) == "skipped"
    assert _judge("go", "north", ok=False) == "failed"
    assert _judge("help", "movement") == "no-op"
    assert _judge("say", "2111242232423232") == "no-op"
    assert _judge("emote", "...") == "no-op"
    assert _judge("note", "2111242232 -> flour and water") == "junk note title"
    assert _judge("note", "Bread -> 1 2 3 4") == "no-op"


def test_a_repeat_is_one_of_the_last_three_commands_only() -> None:
    assert _judge("look", recent=("look", "go east", "say hi")) == "repeat"
    assert _judge("look", recent=("look", "go east", "say hi", "emote nods")) == "sensible"


def test_words_in_any_script_and_junk_that_is_not() -> None:
    for word in ("Kettle", "Café", "日本", "Привет", "don't", "well-made", "Hello,"):
        assert is_word(word), word
    for junk in ("2111242232", "xzk", "--", "a1b2", ""):
        assert not is_word(junk), junk
    assert is_words("Copper Kettle")
    assert not is_words("Kettle 42")
    assert not is_words("   ")
    assert has_words("I say 42 things")
    assert not has_words("42 . ! a")


@given(st.text(alphabet="0123456789 .,-", max_size=40))
def test_digits_and_punctuation_are_never_words(text: str) -> None:
    assert not has_words(text)
    assert _judge("say", text) == "no-op"
