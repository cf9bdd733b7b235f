"""The summarizer's prompts fitted in tokens (issue 42, item 6): a chunk of Chinese
memories, which three characters a token called fitted at 1,684 characters and 3,381
tokens, fits the summarizer's ``num_ctx`` less ``num_predict`` as the embedded model's
tokenizer counts it; a merge whose two summaries do not fit gets them cut, not skipped."""

from __future__ import annotations

import pytest

from engine.memory.summary_prompts import (
    MERGE_CUE,
    fitted_chunk_prompt,
    fitted_merge_prompt,
    merge_prompt,
    prompt_budget,
)
from engine.memory.tokens import ELLIPSIS, ESTIMATE, RESERVED, TokenCounter

SAID = "我在花园里散步，和艾达说话，告诉她榅桲还没有成熟。天气很冷，风从北方吹来。"
OPTIONS = {"num_ctx": 1024, "num_predict": 200}


@pytest.fixture(scope="module")
def smollm2() -> TokenCounter:
    pytest.importorskip("llama_cpp")
    from engine.llm.local import embedded_tokens

    tokens = embedded_tokens()
    if tokens is None:
        pytest.skip("the embedded model is not installed")
    return tokens


def test_the_budget_is_in_tokens() -> None:
    assert prompt_budget(OPTIONS) == 1024 - 200 - RESERVED
    assert prompt_budget({"num_ctx": 1024}) == 1024 - 400 - RESERVED  # the default reply
    assert prompt_budget({}) is None


@pytest.mark.parametrize("fitted_by", ["tokenizer", "estimate"])
def test_a_chunk_of_chinese_memories_fits(smollm2: TokenCounter, fitted_by: str) -> None:
    counter = smollm2 if fitted_by == "tokenizer" else ESTIMATE
    memories = [f"明说：“{SAID * 3}”" for _ in range(8)]
    budget = prompt_budget(OPTIONS)
    prompt = fitted_chunk_prompt("Bo", memories, budget, counter)
    assert prompt is not None
    assert budget is not None
    assert smollm2.count(prompt) <= budget
    assert prompt.count("明说") == 8  # every memory, each cut
    assert prompt.count(ELLIPSIS) == 8


@pytest.mark.parametrize("fitted_by", ["tokenizer", "estimate"])
def test_a_merge_that_does_not_fit_gets_its_summaries_cut(
    smollm2: TokenCounter, fitted_by: str
) -> None:
    counter = smollm2 if fitted_by == "tokenizer" else ESTIMATE
    older, recent = "很久以前。" + SAID * 12 + "最后的旧事。", "刚才。" + SAID * 6 + "最新的事。"
    budget = prompt_budget(OPTIONS)
    assert budget is not None
    assert smollm2.count(merge_prompt("Bo", older, recent, 600)) > budget
    prompt = fitted_merge_prompt("Bo", older, recent, 600, budget, counter)
    assert prompt is not None
    assert smollm2.count(prompt) <= budget
    assert prompt.endswith(MERGE_CUE)
    shown_older = prompt.split("OLDER SUMMARY:\n", 1)[1].split("\n\n", 1)[0]
    shown_recent = prompt.split("RECENT SUMMARY:\n", 1)[1].split("\n\n", 1)[0]
    assert shown_older.startswith(ELLIPSIS)  # the oldest of each goes first
    assert shown_older.endswith("最后的旧事。")
    assert shown_recent.endswith("最新的事。")


def test_a_merge_that_fits_is_the_merge_prompt_and_one_that_cannot_is_none() -> None:
    assert fitted_merge_prompt("Bo", "I slept.", "I woke.", None, 2_000, ESTIMATE) == (
        merge_prompt("Bo", "I slept.", "I woke.")
    )
    assert fitted_merge_prompt("Bo", SAID * 9, SAID * 9, None, 150, ESTIMATE) is None
