"""The extractive fallback (pure): deterministic, within its budget, never empty, made
of the pieces it was given, oldest first."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from engine.memory.extractive import ELLIPSIS, NOTHING, extractive_merge, extractive_summary
from engine.memory.summary_prompts import summary_budget

CHUNK = [
    "You think: Thought number 0.",
    "You think: Thought number 1.",
    "The Yard\nA muddy yard.\nYou see: an old well. Bea is here.",
    'You say, "Hello, Bea."',
    "You think: Thought number 1.",
]


def test_the_most_informative_memories_in_their_order_one_line_each() -> None:
    text = extractive_summary(CHUNK, 100)
    assert text == 'The Yard A muddy yard. You see: an old…\nYou say, "Hello, Bea."'


def test_with_room_for_all_every_distinct_memory_is_kept_once() -> None:
    text = extractive_summary(CHUNK, 1200)
    assert text.splitlines() == [
        "You think: Thought number 0.",
        "You think: Thought number 1.",
        "The Yard A muddy yard. You see: an old well. Bea is here.",
        'You say, "Hello, Bea."',
    ]


def test_nothing_to_summarize_still_gives_a_summary() -> None:
    assert extractive_summary([], 100) == NOTHING
    assert extractive_summary(["  ", "\n"], 100) == NOTHING


def test_the_budget_follows_num_predict() -> None:
    assert summary_budget({"num_predict": 400}) == 1200
    assert summary_budget({}) == 1200
    assert summary_budget({"num_predict": -1}) == 1200
    assert summary_budget({"num_predict": 100}) == 300


def test_a_merge_serves_the_recent_summary_first_and_keeps_the_order() -> None:
    older = "I met Bo at the well. We talked about iron. I planted quinces in the garden."
    recent = "I picked apples. Ada asked me about the well. I said nothing about the key."
    merged = extractive_merge(older, recent, 120)
    assert len(merged) <= 120
    lines = merged.splitlines()
    assert lines[-2:] == ["Ada asked me about the well.", "I said nothing about the key."]
    assert all(line in older for line in lines[:-2])
    assert extractive_merge(older, recent, 1000).splitlines() == [
        "I met Bo at the well.", "We talked about iron.", "I planted quinces in the garden.",
        "I picked apples.", "Ada asked me about the well.", "I said nothing about the key.",
    ]  # fmt: skip


# --- properties ---------------------------------------------------------------------------

_MEMORY = st.one_of(
    st.text(max_size=200),
    st.lists(
        st.sampled_from(["You", "see", "Bea", "the", "forge", "well", "lamp", "\n", "said,",
                         "Hello.", "north", "You think:", "a", "muddy", "yard."]),
        max_size=30,
    ).map(" ".join),
)  # fmt: skip
_BUDGET = st.integers(2, 2000)  # summary_budget is at least 3


def _unpiece(line: str) -> str:
    """A chosen piece without the ellipses that mark where it was cut (at its end, or at
    its start where it was cut to keep a wanted word)."""
    return line.removeprefix(ELLIPSIS).removesuffix(ELLIPSIS)


@given(st.lists(_MEMORY, max_size=40), _BUDGET)
def test_a_summary_is_within_budget_never_empty_and_made_of_the_memories(
    memories: list[str], budget: int
) -> None:
    text = extractive_summary(memories, budget)
    assert 0 < len(text) <= budget
    assert text == extractive_summary(list(memories), budget)  # deterministic
    assert "\n\n" not in text
    flat = [" ".join(m.split()) for m in memories]
    lines = text.splitlines()
    if any(flat):
        after = -1  # each line is a later memory (whole, or its beginning cut short)
        for line in lines:
            head = _unpiece(line)
            found = [
                i
                for i, m in enumerate(flat)
                if i > after and (m == line or (line != head and head and m.startswith(head)))
            ]
            assert found, f"{line!r} is not the beginning of a later memory"
            after = found[0]
        assert len(set(line.lower() for line in lines)) == len(lines), "each kept once"
    else:
        assert text == NOTHING[:budget] or text.endswith(ELLIPSIS) or text == NOTHING


@given(st.lists(_MEMORY, min_size=1, max_size=40), st.integers(200, 2000))
def test_a_whole_budget_holds_the_first_memory_or_the_best_one(
    memories: list[str], budget: int
) -> None:
    text = extractive_summary(memories, budget)
    if any(m.split() for m in memories):
        assert text != NOTHING or any(" ".join(m.split()) == NOTHING for m in memories)


@given(st.text(max_size=600), st.text(max_size=600), _BUDGET)
def test_a_merge_is_within_budget_never_empty_and_made_of_both(
    older: str, recent: str, budget: int
) -> None:
    text = extractive_merge(older, recent, budget)
    assert 0 < len(text) <= budget
    assert text == extractive_merge(older, recent, budget)
    flat_older, flat_recent = " ".join(older.split()), " ".join(recent.split())
    for line in text.splitlines():
        head = _unpiece(line)
        assert head in flat_older or head in flat_recent or NOTHING.startswith(head)


@given(st.text(min_size=1, max_size=300).filter(str.strip), st.integers(100, 2000))
@example("00: \x1b00:00:00:00:000000000000000000000000", 100)  # cut before its wanted word
def test_a_merge_keeps_something_of_the_recent_summary(recent: str, budget: int) -> None:
    older = "I met Bo at the well. We talked about iron. I planted quinces."
    text = extractive_merge(older, recent, budget)
    flat_recent = " ".join(recent.split())
    assert any(_unpiece(line) in flat_recent for line in text.splitlines())


_WORDS = st.sampled_from(
    ["forge", "anvil", "bellows", "nails", "well", "bucket", "quince", "orchard", "fox",
     "latch", "market", "bread", "key", "fountain", "mill", "river", "sack", "flour"]
)  # fmt: skip
_SENTENCE = st.lists(_WORDS, min_size=2, max_size=6).map(
    lambda w: "I saw the " + " and the ".join(w) + "."
)
_SUMMARY = st.lists(_SENTENCE, min_size=1, max_size=6).map(" ".join)


@given(_SUMMARY, _SUMMARY, st.lists(_SENTENCE, max_size=4), st.integers(160, 1200))
def test_a_merge_keeps_a_detail_only_the_older_and_one_only_the_recent_has(
    older: str, recent: str, memories: list[str], budget: int
) -> None:
    """What a long-term summary must hold (issue 42): a word found only before its last
    chunk, and one found only in it, whenever the two summaries have such words."""
    from engine.memory.grounding import terms

    merged = extractive_merge(older, recent, budget, memories)
    assert len(merged) <= budget
    old, new, last = set(terms(older)), set(terms(recent)), set(terms(" ".join(memories)))
    mine = set(terms(merged))
    if old - new - last:
        assert mine & (old - new - last)
    if new - old:
        assert mine & (new - old)


def test_a_score_is_the_same_whatever_order_a_set_of_words_comes_in() -> None:
    """The selection sums exactly: no process's string hashing changes what is chosen
    (a replay in another process makes the same summary)."""
    import subprocess
    import sys

    code = (
        "from engine.memory.extractive import extractive_summary as s;"
        "print(s([f'memory {n}: ' + ' '.join(f'w{(n * 7 + k) % 23}' for k in range(9))"
        " for n in range(40)], 300))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout
        for seed in (11, 12, 13, 14)
    }
    assert len(outputs) == 1
