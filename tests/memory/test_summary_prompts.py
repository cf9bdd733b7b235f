"""The summarizer's prompts and the cleaning of its replies (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.summary_prompts import (
    CHUNK_CUE,
    MERGE_CUE,
    chunk_prompt,
    clean_summary,
    merge_prompt,
)


def _memories_block(prompt: str) -> list[str]:
    """The lines between "MEMORIES:" and the blank line before the cue."""
    lines = prompt.split("\n")
    assert lines[-2:] == ["", CHUNK_CUE]
    return lines[lines.index("MEMORIES:") + 1 : -2]


def test_chunk_prompt_text_is_pinned() -> None:
    prompt = chunk_prompt("Ada", ["I look around.", 'Bo says,\n"Hello."', "   ", "I wave."])
    assert prompt == (
        "Summarize these memories of Ada in first person (I, me, my), in 2-4 sentences."
        " Begin at once with the summary: no introduction, no commentary.\n"
        "\n"
        "MEMORIES:\n"
        "I look around.\n"
        'Bo says, "Hello."\n'
        "I wave.\n"
        "\n"
        "SUMMARY:"
    )


def test_merge_prompt_text_is_pinned() -> None:
    prompt = merge_prompt("Ada", "I met Bo.\n\n\nI planted quinces.", "I picked apples.\n")
    assert prompt == (
        "Combine these two summaries of Ada's past into one first-person summary"
        " (I, me, my), in one paragraph: the older events briefly, the recent ones in more"
        " detail. Begin at once with the summary: no introduction, no commentary.\n"
        "\n"
        "OLDER SUMMARY:\n"
        "I met Bo.\n"
        "I planted quinces.\n"
        "\n"
        "RECENT SUMMARY:\n"
        "I picked apples.\n"
        "\n"
        "COMBINED SUMMARY:"
    )


def test_prompts_end_with_their_cue_and_nothing_after_it() -> None:
    assert chunk_prompt("Bo", ["x"]).endswith("\n\nSUMMARY:")
    assert merge_prompt("Bo", "a", "b").endswith("\n\nCOMBINED SUMMARY:")
    assert CHUNK_CUE == "SUMMARY:"
    assert MERGE_CUE == "COMBINED SUMMARY:"


def test_a_multiline_name_stays_on_one_line() -> None:
    assert chunk_prompt("Old\nTom", ["x"]).startswith("Summarize these memories of Old Tom in")


def test_chunk_prompt_holds_the_chunk_only() -> None:
    prompt = chunk_prompt("Ada", ["one", "two"])
    assert "summary of" not in prompt.lower()
    assert _memories_block(prompt) == ["one", "two"]


def test_no_blank_line_inside_the_memories_or_summaries() -> None:
    memories = ["a\n\nb", "\r\n\r\nc\r\n", "d\u2028\u2028e", "f\n \n\tg"]
    block = _memories_block(chunk_prompt("Ada", memories))
    assert block == ["a b", "c", "d e", "f g"]
    merged = merge_prompt("Ada", "x\n\n\ny\n  \nz", "p\r\n\r\nq")
    older = merged.split("OLDER SUMMARY:\n", 1)[1].split("\n\nRECENT SUMMARY:\n", 1)
    assert older[0] == "x\ny\nz"
    assert older[1].split("\n\n", 1)[0] == "p\nq"


@given(st.text(max_size=20), st.lists(st.text(max_size=40), max_size=12))
def test_chunk_prompt_has_one_line_per_non_empty_memory(name: str, memories: list[str]) -> None:
    prompt = chunk_prompt(name, memories)
    assert prompt.endswith("\n\n" + CHUNK_CUE)
    block = _memories_block(prompt)
    non_empty = [m for m in memories if "".join(m.split())]
    assert len(block) == len(non_empty)
    assert all(line.strip() == line and line for line in block)


@given(st.text(max_size=20), st.text(max_size=80), st.text(max_size=80))
def test_merge_prompt_never_has_a_blank_line_inside_a_summary(
    name: str, longterm: str, recent: str
) -> None:
    prompt = merge_prompt(name, longterm, recent)
    assert prompt.endswith("\n\n" + MERGE_CUE)
    # Exactly three blank lines: after the instruction, after L and after S.
    assert prompt.count("\n\n") == 3
    assert "\n\n\n" not in prompt


def test_an_empty_summary_is_shown_as_none() -> None:
    assert "OLDER SUMMARY:\n(none)\n\nRECENT SUMMARY:\nI sat.\n\n" in merge_prompt(
        "Bo", " \n", "I sat."
    )


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("I walked to the orchard.", "I walked to the orchard."),
        ("  I walked.\n", "I walked."),
        ("SUMMARY: I walked.", "I walked."),
        ("summary:\nI walked.", "I walked."),
        ("COMBINED SUMMARY: I walked.", "I walked."),
        ("**Summary:** I walked.", "I walked."),
        ("Here is a summary:\nI walked.", "I walked."),
        ("Here's the summary of my memories:\nI walked.", "I walked."),
        ("Here’s the summary:\nI walked.", "I walked."),
        ("Sure, here is a first-person summary:\nI walked.", "I walked."),
        ("Sure!\nI walked.", "I walked."),
        ("Okay.\nHere is the summary:\nSUMMARY: I walked.", "I walked."),
        ("Here is a summary: I walked.", "I walked."),
        ("<think>Ada walked, so...</think>I walked.", "I walked."),
        ("<THINK>\nplan\n\nmore\n</Think>\n\nI walked.", "I walked."),
        ("first thoughts</think>\nI walked.", "I walked."),
        ("I walked.<think>and then", "I walked."),
        ("I walked.\nI sat down.", "I walked.\nI sat down."),
        ("Here is the key: I hid it under the rug.", "Here is the key: I hid it under the rug."),
        ("Okay, so I walked north.", "Okay, so I walked north."),
        ("I said: sure.", "I said: sure."),
    ],
)
def test_clean_summary(reply: str, expected: str) -> None:
    assert clean_summary(reply) == expected


@pytest.mark.parametrize(
    "reply",
    ["", "   ", "\n\n", "SUMMARY:", "Here is a summary:", "Sure!", "<think>hmm</think>  "],
)
def test_clean_summary_of_nothing_is_a_failure(reply: str) -> None:
    assert clean_summary(reply) is None


_REPLY_PIECES = st.sampled_from(
    ["", " ", "\n", "\t", "SUMMARY:", "COMBINED SUMMARY:", "Here is a summary:", "Sure!",
     "Okay.", "<think>", "</think>", "**", ":", "I walked.", "x"]
)  # fmt: skip


@given(st.one_of(st.text(), st.lists(_REPLY_PIECES, max_size=8).map("".join)))
def test_clean_summary_never_returns_blank(reply: str) -> None:
    cleaned = clean_summary(reply)
    assert cleaned is None or (cleaned.strip() == cleaned and cleaned != "")
