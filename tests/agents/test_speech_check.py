"""Whether a say or emote is speech (engine.agents.speech_check), for every backend and,
with ``noise_check``, for the embedded model."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.agents.prompt import PromptParts, render_prompt
from engine.agents.speech_check import (
    COPY_WORDS,
    REASONS,
    RECENT_SPEECH,
    STUTTER,
    Instructions,
    check_speech,
    dictionary,
    instruction_lines,
    speech_text,
    stutters,
    word_share,
)

PROMPT = render_prompt(
    PromptParts(
        name="Moss",
        profile="A gardener who worries about the apple trees.",
        room_name="The Garden",
        room_description="A walled garden of herbs and apple trees, with a bench under the wall.",
        exits=["north"],
        also_here=["Eliza"],
        memories=['Eliza says, "Hello Moss, what are you reading?"'],
        examples=["say Hello, Eliza. How are you today?", "go north"],
    )
)
RULES = Instructions.of(instruction_lines(PROMPT))

BAD = {
    # seen in issue 32, with the embedded model
    "Good moves here. You're looking at the floor, you look.": "markup",
    "To the guest, you are Eliza Exits again but this,": "markup",
    # more of the same kinds
    "~Moss> say hello": "markup",
    "Exits: north": "markup",
    "## Recent past": "markup",
    "I go <exit> now": "markup",
    "look | go north": "markup",
    "see help [topic]": "markup",
    "<|im_end|>": "markup",
    "[INST] hello": "markup",
    "Assistant: say hi": "markup",
    "> look": "markup",
    "--- the garden": "markup",
    "```json": "markup",
    '{"command": "look"}': "markup",
    "**Observations:** none": "markup",
    "hello\nthere": "markup",
    "a walled garden of herbs and apple trees": "copied",
    "I am a gardener who worries about the apple trees": "copied",
    "": "empty",
    " ... ": "empty",
    "( ) [ ] { }": "empty",
    "\u200b": "empty",
}
NOISE = {
    # what the embedded model writes: noise only where the backend is known to write it
    "ampersanag an armchair. эта острона.": "not words",
    "xqzt vrrk plonf the": "not words",
    "2111242232 4423": "not words",
    "the the the the the the": "stutter",
}
GOOD = (
    "Hello Eliza, I am reading about roses.",
    "The apples are nearly ripe, Eliza.",
    "It's a fine day, isn't it?",
    "smiles at Eliza and offers her an apple.",
    "I worry about the trees when it rains.",
    "Would you like some tea?",
    "Hmm, I think the bench is warm.",
    "Are you also here for the fair?",
    "In the recent past I kept bees.",
    "Good luck with the roses 🙂",
)
ANY_LANGUAGE = (
    "Guten Morgen, wie geht es dir heute?",
    "Bonjour, comment allez-vous ?",
    "¿Dónde está la biblioteca?",
    "我们去花园吧",
    "lol ok brb",
    "Meet me at B-12 near Zarathustra's tower.",
    "hello tok-00001",
)
CHAT_SIGNS = ("*sigh*", "<3", "#4", "B-12", "->", "~maybe~", "x_x", "^_^", "3>2", "`ls`", "{x}",
              "a|b", ":)", "50%", "[laughs]", "--", "😂")  # fmt: skip


@pytest.mark.parametrize(("text", "why"), BAD.items())
def test_bad_lines_fail_with_their_reason(text: str, why: str) -> None:
    assert check_speech(text, RULES).why == why


@pytest.mark.parametrize(("text", "why"), NOISE.items())
def test_noise_fails_only_where_the_backend_is_known_to_write_it(text: str, why: str) -> None:
    assert check_speech(text, RULES, noise_check=True).why == why
    assert check_speech(text, RULES).passes


@pytest.mark.parametrize("text", GOOD)
def test_good_lines_pass(text: str) -> None:
    assert check_speech(text, RULES).passes
    assert check_speech(text, RULES, noise_check=True).passes


@pytest.mark.parametrize("text", ANY_LANGUAGE)
def test_speech_in_any_language_with_names_and_codes_passes_without_the_noise_check(
    text: str,
) -> None:
    assert check_speech(text, RULES).passes


def test_a_word_said_over_and_over_is_a_stutter_with_the_noise_check() -> None:
    assert check_speech(" ".join(["north"] * STUTTER), RULES, noise_check=True).why == "stutter"
    below = " ".join(["no"] * (STUTTER - 1)) + " way"
    assert check_speech(below, RULES, noise_check=True).passes


def test_a_line_said_lately_is_a_repeat_and_an_older_one_is_not() -> None:
    said = ["Hello there, Eliza!", "Nice roses.", "Any news?", "I like tea.", "Look, rain.", "Hm."]
    assert check_speech("hello  there, eliza", RULES, said[:5]).why == "repeat"
    assert check_speech("hello there, eliza", RULES, said).passes  # six lines ago


def test_instructions_are_the_prompt_s_instructions_not_its_memories() -> None:
    lines = instruction_lines(PROMPT)
    assert any(line.startswith("## Good moves here") for line in lines)
    assert any(line.startswith("Exits:") for line in lines)
    assert not any("what are you reading" in line for line in lines)  # a memory
    assert not any(line.startswith("~") for line in lines)  # the example moves
    # replying with the words someone said is not copying the prompt
    assert check_speech("Eliza, what are you reading today?", RULES).passes


def test_names_in_the_instructions_count_as_words() -> None:
    here = Instructions.of(["You are Moss in The Garden.", "Exits: north   Also here: Zyxwen"])
    assert word_share("Hello, Zyxwen!", here.names) == 1.0
    assert word_share("Hello, Zyxwen!") == 0.5
    assert check_speech("Zyxwen, come and see the roses.", here, noise_check=True).passes
    assert "kettle" in dictionary()


def test_speech_text_reads_the_shortcuts_and_leaves_the_reason_out() -> None:
    assert speech_text("say Hello, Ash. | to be kind") == ("say", "Hello, Ash.")
    assert speech_text('"Hi there"') == ("say", "Hi there")
    assert speech_text(":waves.") == ("emote", "waves.")
    assert speech_text("EMOTE nods") == ("emote", "nods")
    assert speech_text("go north") is None


_WORDS = sorted(w for w in dictionary() if w.isalpha() and 2 < len(w) < 9)[::97]
_word = st.sampled_from(_WORDS)
_sentence = st.lists(_word, min_size=1, max_size=8).map(" ".join)


ANYWHERE = ("~Moss> hi", "<exit>", "</s>", "<|endoftext|>", "[/INST]", "[topic]", "| look",
            "| reason", "```", "line\nbreak")  # fmt: skip
"""Markup that fails wherever it stands in a line."""


@given(_sentence, st.sampled_from(ANYWHERE), st.integers(min_value=0, max_value=8))
def test_the_prompt_s_markup_anywhere_fails(text: str, sign: str, at: int) -> None:
    words = text.split()
    at = min(at, len(words))
    marked = " ".join([*words[:at], sign, *words[at:]])
    assert check_speech(marked, RULES).why == "markup"


@given(_sentence, st.sampled_from(("## ", "# ", "> ", "* ", "---", "Assistant: ", "User: ")))
def test_markup_that_opens_a_line_fails(text: str, start: str) -> None:
    assert check_speech(start + text, RULES).why == "markup"


@given(_sentence, st.sampled_from(CHAT_SIGNS), st.integers(min_value=0, max_value=8))
def test_chat_signs_anywhere_are_not_markup(text: str, sign: str, at: int) -> None:
    words = text.split()
    at = min(at, len(words))
    assert check_speech(" ".join([*words[:at], sign, *words[at:]]), ()).passes


_LETTER = st.characters(categories=["Lu", "Ll", "Lo"])
_FOREIGN = st.lists(st.text(_LETTER, min_size=1, max_size=8), min_size=1, max_size=8)


@given(_FOREIGN)
def test_words_of_any_script_pass_without_the_noise_check(words: list[str]) -> None:
    assume(not {w.lower() for w in words} & {"exits", "also", "commands"})  # the labels
    assert check_speech(" ".join(words) + "?", ()).passes


@given(_sentence, st.lists(_sentence, max_size=RECENT_SPEECH))
def test_dictionary_words_pass_unless_said_lately(text: str, recent: list[str]) -> None:
    verdict = check_speech(text, (), recent, noise_check=not stutters(text))
    said = text.lower() in (line.lower() for line in recent)
    assert verdict.why == ("repeat" if said else "passes")


@given(_sentence, st.integers(min_value=1, max_value=6))
def test_mostly_junk_is_not_words(text: str, junk: int) -> None:
    words = text.split()
    line = " ".join([*words, *["qzxv"] * max(junk, len(words))])
    assert check_speech(line, (), noise_check=True).why == "not words"
    assert check_speech(line, ()).passes


@given(st.data())
def test_any_run_of_instruction_words_is_a_copy(data: st.DataObject) -> None:
    source = ["a", "gardener", "who", "worries", "about", "the", "apple", "trees"]  # its profile
    start = data.draw(st.integers(min_value=0, max_value=len(source) - COPY_WORDS))
    run = source[start : start + COPY_WORDS]
    before = data.draw(st.lists(_word, max_size=3))
    assert check_speech(" ".join([*before, *run]), RULES).why == "copied"


@given(st.text(max_size=60), st.lists(st.text(max_size=20), max_size=6), st.booleans())
def test_the_verdict_is_a_known_reason_and_stable(
    text: str, recent: list[str], noise_check: bool
) -> None:
    first = check_speech(text, RULES, recent, noise_check=noise_check)
    assert first.why in {"passes", *REASONS}
    assert first.passes == (first.why == "passes")
    assert check_speech(text, RULES, recent, noise_check=noise_check) == first
    other = check_speech(text, RULES, recent, noise_check=not noise_check)
    strict, lenient = (first, other) if noise_check else (other, first)
    assert strict.passes <= lenient.passes  # the noise check only ever adds reasons
    if lenient.why in {"empty", "markup", "copied"}:
        assert strict == lenient
