"""The quality gate for the summarizer's replies (pure): what is not a summary is
rejected with a reason, what is one passes, cleaned. The corpus
(``summary_corpus``) holds the bad replies small models give and good summaries."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from summary_corpus import BAD, GOOD, LIMIT, PARAPHRASED, SCENES, Bad

from engine.memory import summary_quality as q
from engine.memory.summary_prompts import chunk_prompt, clean_summary, merge_prompt
from engine.memory.summary_quality import judge_summary

MEMORIES = [
    "You think: The forge is cold.",
    'Bea says, "Morning. The smith mended a gate. Is the forge hot yet?"',
    'You say, "Wait a little longer."',
]
CHUNK = chunk_prompt("Bo", MEMORIES)
OLDER, RECENT = "I met Bea at the well.", "I lit the forge and mended the gate."
PARTS = q.MergeParts(OLDER, RECENT, ["You light the forge.", "You mend the gate."])
MERGE = merge_prompt("Bo", OLDER, RECENT)


def _judge(reply: str, scene: str, *, truncated: bool = False) -> q.Verdict:
    name, memories = SCENES[scene]
    return judge_summary(reply, chunk_prompt(name, memories), sources=memories, limit=LIMIT,
                         truncated=truncated)  # fmt: skip


# --- the corpus -----------------------------------------------------------------------------


def test_the_corpus_is_big_enough_and_covers_every_problem() -> None:
    assert len(BAD) >= 40
    assert sum(map(len, GOOD.values())) >= 36
    kinds = Counter(bad.problem for bad in BAD)
    problems = {q.EMPTY, q.CUT_OFF, q.MIDWAY, q.NOISE, q.TEMPLATE, q.MARKUP, q.REFUSAL, q.ASKS_BACK,
                q.TOO_SHORT, q.NO_SENTENCE, q.ECHO, q.COPY, q.UNGROUNDED, q.LOOP, q.TOO_LONG}  # fmt: skip
    assert set(kinds) == problems
    several = problems - {q.TOO_LONG}
    assert all(kinds[p] >= 2 for p in several), kinds


@pytest.mark.parametrize(
    ("scene", "summary"), [(scene, s) for scene, found in GOOD.items() for s in found]
)
def test_a_good_summary_passes_as_it_was_written(scene: str, summary: str) -> None:
    verdict = _judge(summary, scene)
    assert verdict.problem is None
    assert verdict.summary == summary
    assert _judge("SUMMARY: " + summary + "\n", scene).summary == summary


@pytest.mark.parametrize(
    ("scene", "summary"), [(scene, s) for scene, found in PARAPHRASED.items() for s in found]
)
def test_a_summary_in_words_of_its_own_fails_only_the_measure_of_grounding(
    scene: str, summary: str
) -> None:
    problem = _judge(summary, scene).problem
    assert problem is not None
    assert problem.startswith((q.UNGROUNDED, q.UNFAITHFUL))


@pytest.mark.parametrize("bad", BAD, ids=lambda bad: f"{bad.scene}:{bad.reply[:30]!r}")
def test_a_bad_reply_is_rejected_for_what_it_is(bad: Bad) -> None:
    verdict = _judge(bad.reply, bad.scene, truncated=bad.truncated)
    assert verdict.summary is None
    assert verdict.problem is not None
    assert verdict.problem.startswith(bad.problem)


def test_the_soaks_garbage_is_all_rejected() -> None:
    from engine.llm.stub_server import GARBAGE

    for reply, done_reason in GARBAGE:
        verdict = _judge(reply, "forge", truncated=done_reason == "length")
        assert not verdict.accepted, reply


def test_a_reply_cut_off_by_the_token_limit_is_rejected_whatever_it_says() -> None:
    assert _judge(GOOD["forge"][0], "forge", truncated=True).problem == q.CUT_OFF


def test_a_too_long_reply_hands_back_its_text_to_be_compressed() -> None:
    verdict = _judge(GOOD["forge"][0] * 30, "forge")
    assert verdict.problem in (q.LOOP, q.TOO_LONG)
    long = next(bad for bad in BAD if bad.problem == q.TOO_LONG)
    verdict = _judge(long.reply, long.scene)
    assert verdict.cleaned == long.reply
    assert verdict.summary is None
    assert judge_summary(long.reply, CHUNK).accepted  # no limit: it passes


def test_a_merge_may_reuse_its_summaries_words_a_chunk_may_not() -> None:
    copied = OLDER + " Then " + RECENT[0].lower() + RECENT[1:]
    assert judge_summary(copied, MERGE, merge=PARTS).accepted
    lines = " ".join(MEMORIES)
    assert judge_summary(lines, CHUNK, sources=MEMORIES).problem == q.COPY


def test_the_merge_prompt_has_its_own_instructions_and_headings() -> None:
    assert judge_summary("Combine these two summaries of Bo's past into one, please do", MERGE,
                         merge=PARTS).problem == q.ECHO  # fmt: skip
    assert judge_summary("OLDER SUMMARY:\nI met Bea at the well and we talked a while.", MERGE,
                         merge=PARTS).problem == q.ECHO  # fmt: skip
    assert judge_summary("I met Bea at the well, then I lit the forge and mended a gate.",
                         MERGE, merge=PARTS).accepted  # fmt: skip


def test_a_merge_that_is_one_of_its_parts_again_or_drops_one_fails() -> None:
    lazy = judge_summary(RECENT, MERGE, merge=PARTS).problem
    assert lazy is not None
    assert lazy.startswith(q.LOSES_A_PART)  # (a copy of the recent one keeps no older detail)
    older_only = judge_summary("I met Bea at the well, and she was at the well.", MERGE,
                               merge=PARTS).problem  # fmt: skip
    assert older_only is not None
    assert older_only.startswith(q.LOSES_A_PART)


def test_quoted_questions_are_speech_not_questions_back() -> None:
    said = 'Bea asked me, "Is the forge hot yet?" and I told her to wait a little longer.'
    assert judge_summary(said, CHUNK, sources=MEMORIES).accepted


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
_SUMMARY = st.lists(_SENTENCE, min_size=2, max_size=5, unique=True).map(" ".join)
_SOURCES = [
    "Bea mended the forge and the gate.",
    "You carry a bucket, a map, three nails and the old lamp.",
    "I, Bea, Ada, the smith and my brother lit, carried, mended, found, sold, watched,"
    " painted and hid the forge, a bucket, the old lamp, three nails, the gate and a map"
    " at dawn, in the yard, by the well, after supper and in the rain.",
]
_REFUSALS = st.sampled_from(
    [
        "I'm sorry, but I can't help with that.",
        "As an AI, I have no memories.",
        "I cannot fulfill this request.",
        "Sorry, I am unable to summarize this.",
        "As a language model I can only guess.",
        "I am just an AI assistant.",
    ]
)
_TOKENS = st.sampled_from(["<|im_start|>", "<|endoftext|>", "[INST]", "</s>", "<end_of_turn>"])
_CONTROLS = st.sampled_from(["\x00", "\x1b[2J", "\x07", "\x1b", "\u200b", "\x7f", "\x9b"])


def _judge_plain(reply: str, limit: int | None = None) -> q.Verdict:
    return judge_summary(reply, CHUNK, sources=_SOURCES, limit=limit)


@given(st.text(max_size=300), st.text(max_size=300), st.booleans(), st.none() | st.integers(0, 400))
def test_the_gate_never_raises_and_passes_only_clean_text(
    reply: str, prompt: str, truncated: bool, limit: int | None
) -> None:
    verdict = judge_summary(reply, prompt, sources=[prompt], limit=limit, truncated=truncated)
    assert (verdict.summary is None) != (verdict.problem is None)
    if verdict.summary is not None:
        assert not truncated
        assert verdict.summary == clean_summary(reply.replace("\r\n", "\n").replace("\r", "\n"))
        assert verdict.summary.strip() == verdict.summary != ""
        assert limit is None or len(verdict.summary) <= limit
        assert len(q.words(verdict.summary)) >= q.MIN_WORDS
    else:
        assert verdict.problem is not None
        assert "\n" not in verdict.problem


@given(_SUMMARY)
def test_a_plain_summary_of_distinct_sentences_passes(summary: str) -> None:
    assert _judge_plain(summary).summary == summary
    assert _judge_plain("\n\n" + summary).summary == summary


@given(_SUMMARY, _SENTENCE, st.integers(3, 6))
def test_any_sentence_said_three_times_is_a_loop(summary: str, sentence: str, times: int) -> None:
    assert _judge_plain(summary + " " + " ".join([sentence] * times)).problem == q.LOOP


@given(_SUMMARY, _REFUSALS, st.booleans())
def test_a_refusal_anywhere_fails(summary: str, refusal: str, first: bool) -> None:
    reply = f"{refusal} {summary}" if first else f"{summary} {refusal}"
    assert _judge_plain(reply).problem == q.REFUSAL


@given(_SUMMARY, _TOKENS, st.integers(0, 400))
def test_a_chat_template_token_anywhere_fails(summary: str, token: str, at: int) -> None:
    at %= len(summary) + 1
    assert _judge_plain(summary[:at] + token + summary[at:]).problem == q.TEMPLATE


@given(_SUMMARY, _CONTROLS, st.integers(0, 400))
def test_a_control_character_anywhere_fails(summary: str, control: str, at: int) -> None:
    at = at % (len(summary) - 1) + 1  # inside: an end would be stripped as whitespace
    assert _judge_plain(summary[:at] + control + summary[at:]).problem == q.NOISE


@given(_SUMMARY, st.sampled_from(["What should I write?", "Do you want more detail?",
                                  "Let me know if you need anything else."]))  # fmt: skip
def test_talking_back_to_the_asker_fails(summary: str, question: str) -> None:
    assert _judge_plain(f"{summary} {question}").problem == q.ASKS_BACK


@given(_SUMMARY, st.integers(0, 20))
def test_five_words_of_the_instructions_are_an_echo(summary: str, at: int) -> None:
    instructions = [w for w in CHUNK.split("\n\n", 1)[0].split() if w != "Bo"]
    start = at % (len(instructions) - 4)
    piece = " ".join(instructions[start : start + 5])
    assert _judge_plain(summary + " " + piece).problem == q.ECHO


@given(_SUMMARY, st.integers(1, 600))
def test_what_passes_fits_the_limit(summary: str, limit: int) -> None:
    verdict = _judge_plain(summary, limit)
    assert verdict.accepted == (len(summary) <= limit)
    if not verdict.accepted:
        assert verdict.problem == q.TOO_LONG
        assert verdict.cleaned == summary


@given(_SUMMARY)
def test_a_summary_of_something_else_fails(summary: str) -> None:
    problem = judge_summary(summary, CHUNK, sources=["Zyx qwv plo."]).problem
    assert problem is not None
    assert problem.startswith(q.UNGROUNDED)


@given(_SUMMARY)
def test_the_gate_is_deterministic(summary: str) -> None:
    assert _judge_plain(summary) == _judge_plain(summary)


def test_words_are_compared_by_their_stems() -> None:
    from engine.memory.wording import content_words

    assert content_words("Rooms, walked, quinces, stories") == content_words(
        "room walk quince story"
    )
    assert content_words("glass") == {"glass"}
    assert content_words("the and of it") == set()
