"""The quality gate for the summarizer's replies (pure): what is not a summary is
rejected with a reason, what is one passes, cleaned."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.summary_prompts import chunk_prompt, clean_summary, merge_prompt
from engine.memory.summary_quality import (
    CUT_OFF,
    ECHO,
    EMPTY,
    LOOP,
    REFUSAL,
    judge_summary,
)

CHUNK = chunk_prompt("Bo", ["You think: The forge is cold.", 'Bea says, "Morning."'])
MERGE = merge_prompt("Bo", "I met Bea at the well.", "I lit the forge.")

GOOD = [
    "I lit the forge and talked with Bea about the cold.",
    "I'm sorry I broke the lamp; I told Ada so, and she laughed.",
    "I cannot remember the way home, so I asked Bea.\nShe pointed north.",
    "Sorry was the first word I said to Bea today. Then I worked the bellows.",
    "I said: sure. Then I left.",
    "I helped Bea carry water. I helped Bea carry water again later, and we rested.",
]


@pytest.mark.parametrize("reply", GOOD)
def test_a_summary_passes_cleaned(reply: str) -> None:
    verdict = judge_summary("SUMMARY: " + reply + "\n", CHUNK)
    assert verdict.accepted
    assert verdict.summary == reply
    assert verdict.problem is None


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", EMPTY),
        ("\n\n", EMPTY),
        ("\n\n\n   \n", EMPTY),
        ("Sure!\n", EMPTY),
        ("<think>hmm, what happened</think>", EMPTY),
        (
            "Summarize these memories of Bo in first person (I, me, my), in 2-4 sentences.",
            ECHO,
        ),
        ("Begin at once with the summary: no introduction, no commentary. I lit it.", ECHO),
        ("MEMORIES:\nYou think: The forge is cold.", ECHO),
        ("I lit the forge.\nSUMMARY:", ECHO),
        ("I'm sorry, but I can't help with that request.", REFUSAL),
        ("I am sorry, I cannot summarize these memories.", REFUSAL),
        ("As an AI language model, I don't have personal memories.", REFUSAL),
        ("Unfortunately, I'm unable to provide a summary.", REFUSAL),
        ("I cannot comply with this request.", REFUSAL),
        ("I lit the forge, as an AI would.", REFUSAL),
        ("I lit the forge. I lit the forge. I lit the forge.", LOOP),
        ("I lit the forge.\nI lit the forge!\ni lit THE forge", LOOP),
        (" ".join(["and then I lit the forge and the fire"] * 3), LOOP),
        ("la " * 30, LOOP),
    ],
)
def test_what_is_not_a_summary_is_rejected(reply: str, problem: str) -> None:
    verdict = judge_summary(reply, CHUNK)
    assert verdict == type(verdict)(None, problem)
    assert not verdict.accepted


def test_a_reply_cut_off_by_the_token_limit_is_rejected_whatever_it_says() -> None:
    assert judge_summary(GOOD[0], CHUNK, truncated=True).problem == CUT_OFF


def test_the_merge_prompt_has_its_own_instructions_and_headings() -> None:
    assert judge_summary("Combine these two summaries of Bo's past into one", MERGE).problem == ECHO
    assert judge_summary("OLDER SUMMARY:\nI met Bea.", MERGE).problem == ECHO
    assert judge_summary("I met Bea at the well, then I lit the forge.", MERGE).accepted


# --- properties ---------------------------------------------------------------------------

_SUBJECTS = ["I", "Bea", "Ada", "the smith", "my brother"]
_VERBS = ["lit", "carried", "mended", "found", "sold", "watched", "painted", "hid"]
_OBJECTS = ["the forge", "a bucket", "the old lamp", "three nails", "the gate", "a map"]
_PLACES = ["at dawn", "in the yard", "by the well", "after supper", "in the rain"]

_SENTENCE = st.tuples(
    st.sampled_from(_SUBJECTS),
    st.sampled_from(_VERBS),
    st.sampled_from(_OBJECTS),
    st.sampled_from(_PLACES),
).map(lambda parts: " ".join(parts) + ".")
_SUMMARY = st.lists(_SENTENCE, min_size=1, max_size=5, unique=True).map(" ".join)
_REFUSALS = st.sampled_from(
    [
        "I'm sorry, but I can't help with that.",
        "As an AI, I have no memories.",
        "I cannot fulfill this request.",
        "Sorry, I am unable to summarize this.",
        "As a language model I can only guess.",
    ]
)


@given(st.text(max_size=300), st.text(max_size=300), st.booleans())
def test_the_gate_never_raises_and_passes_only_clean_text(
    reply: str, prompt: str, truncated: bool
) -> None:
    verdict = judge_summary(reply, prompt, truncated=truncated)
    assert (verdict.summary is None) != (verdict.problem is None)
    if verdict.summary is not None:
        assert not truncated
        assert verdict.summary == clean_summary(reply)
        assert verdict.summary.strip() == verdict.summary != ""
    else:
        assert verdict.problem is not None
        assert "\n" not in verdict.problem


@given(_SUMMARY)
def test_a_plain_summary_of_distinct_sentences_passes(summary: str) -> None:
    assert judge_summary(summary, CHUNK).summary == summary
    assert judge_summary("\n\n" + summary, CHUNK).summary == summary


@given(_SUMMARY, _SENTENCE, st.integers(3, 6))
def test_any_sentence_said_three_times_is_a_loop(summary: str, sentence: str, times: int) -> None:
    assert judge_summary(summary + " " + " ".join([sentence] * times), CHUNK).problem == LOOP


@given(_REFUSALS, _SUMMARY)
def test_a_refusal_fails_whatever_follows(refusal: str, summary: str) -> None:
    assert judge_summary(refusal + " " + summary, CHUNK).problem == REFUSAL


@given(_SUMMARY, st.integers(0, 20))
def test_six_words_of_the_instructions_are_an_echo(summary: str, at: int) -> None:
    instructions = CHUNK.split("\n\n", 1)[0].split()
    start = at % (len(instructions) - 5)
    piece = " ".join(instructions[start : start + 6])
    assert judge_summary(summary + " " + piece, CHUNK).problem == ECHO


@given(_SUMMARY)
def test_the_gate_is_deterministic(summary: str) -> None:
    assert judge_summary(summary, MERGE) == judge_summary(summary, MERGE)
