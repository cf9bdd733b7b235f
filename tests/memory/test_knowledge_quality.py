"""What counts as knowledge (pure): fragments a small model writes are dropped, and a
note no candidate carries becomes a fact of its own."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.knowledge_guards import without_fragments
from engine.memory.knowledge_ops import (
    Add,
    Candidate,
    Keep,
    ParsedOperations,
    Update,
    note_candidates,
    substantive,
)


@pytest.mark.parametrize(
    "text",
    [
        "The bread oven must be hot before dawn or the loaves stay flat.",
        "From the Square: go north, then east, then up.",
        "Mariam ist die Bäckerin am Markt.",
    ],
)
def test_statements_are_knowledge(text: str) -> None:
    assert substantive(text)


@pytest.mark.parametrize(
    "text",
    [
        "Bread",
        "The oven.",
        "[1] You add to your note 'Bread' [2], 3, you say,",
        "[candidate 0] The oven is hot before dawn",
        "~Ada> say the oven is hot",
        "[Mistakes] You are not in the room you said you were.",
        "12 34 56 78 90 ab cd ef",
        "",
    ],
)
def test_fragments_titles_and_markup_are_not(text: str) -> None:
    assert not substantive(text)


@given(st.lists(st.sampled_from(["[1]", "[22]", "[candidate 3]"]), min_size=1), st.text())
def test_text_with_the_prompts_markup_is_never_knowledge(marks: list[str], text: str) -> None:
    assert not substantive(text + " ".join(marks) + " the oven is always hot before dawn")


def test_a_note_no_candidate_carries_becomes_a_fact_from_its_newest_entry() -> None:
    notes = [
        ("Well", "The well was full.\n\n---\n\nThe yard well is dry; it has been since spring."),
        ("Bread", "The oven must be hot before dawn or the loaves stay flat."),
        ("Hi", "ok"),  # too little to be knowledge
    ]
    carried = [
        Candidate(type="procedure", content="Heat the oven before dawn, or the loaves stay flat.")
    ]
    (made,) = note_candidates(notes, carried)
    assert made == Candidate(
        type="fact", content="Well: The yard well is dry; it has been since spring.", tags=["well"]
    )


def test_a_long_note_is_cut_at_a_word() -> None:
    (made,) = note_candidates([("Long", "word " * 200)], [])
    assert len(made.content) <= 403
    assert made.content.endswith("word...")


def test_fragments_in_operations_are_set_aside_or_fall_back_on_the_candidate() -> None:
    parsed = ParsedOperations(
        operations=[
            Update(id="ltm-1-a", content="Bread"),
            Update(id="ltm-2-b", content="The oven is hottest an hour before dawn."),
            Add(candidate=0, content="[1] you"),
            Add(type="fact", content="Oven"),
            Keep(id="ltm-3-c"),
        ]
    )
    kept = without_fragments(parsed)
    assert kept.operations == [
        Update(id="ltm-2-b", content="The oven is hottest an hour before dawn."),
        Add(candidate=0),
        Keep(id="ltm-3-c"),
    ]
    assert len(kept.ignored) == 2
