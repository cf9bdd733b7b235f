"""Name matching tiers: exact, exact without an article, prefix, word prefix."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from engine.world.matching import match, strip_article


def names(*entries: str | Sequence[str]) -> list[tuple[Sequence[str], str]]:
    """Candidates whose item is their first name; an entry may be a single name or a list."""
    out: list[tuple[Sequence[str], str]] = []
    for entry in entries:
        listed = [entry] if isinstance(entry, str) else list(entry)
        out.append((listed, listed[0]))
    return out


def test_strip_article() -> None:
    assert strip_article("The Hall") == "hall"
    assert strip_article("  a   brass lamp ") == "brass lamp"
    assert strip_article("an old well") == "old well"
    assert strip_article("theatre") == "theatre"
    assert strip_article("another") == "another"
    assert strip_article("the") == "the"


def test_each_tier_wins_over_the_ones_below() -> None:
    pool = ["lamp", "the lamp", "lamps", "brass lampshade"]
    assert match("lamp", names(*pool)) == ["lamp"]
    assert match("lamp", names(*pool[1:])) == ["the lamp"]
    assert match("lamp", names(*pool[2:])) == ["lamps"]
    assert match("lamp", names(*pool[3:])) == ["brass lampshade"]


def test_tier_order_does_not_depend_on_candidate_order() -> None:
    pool = ["brass lampshade", "lamps", "the lamp", "lamp"]
    assert match("lamp", names(*pool)) == ["lamp"]
    assert match("lamp", names(*pool[:3])) == ["the lamp"]
    assert match("lamp", names(*pool[:2])) == ["lamps"]


def test_exact_is_case_insensitive_and_trimmed() -> None:
    assert match("  THE HALL ", names("The Hall", "The Hallway")) == ["The Hall"]


def test_article_in_the_query_or_the_name() -> None:
    assert match("the brass lamp", names("a brass lamp")) == ["a brass lamp"]
    assert match("brass lamp", names("a brass lamp", "brass lamps")) == ["a brass lamp"]
    assert match("an old well", names("old well", "old wellhead")) == ["old well"]


def test_prefix_of_the_name_with_or_without_article() -> None:
    assert match("the h", names("The Hall", "A Yard")) == ["The Hall"]
    assert match("ha", names("The Hall", "A Yard")) == ["The Hall"]
    assert match("a y", names("The Hall", "A Yard")) == ["A Yard"]


def test_word_prefix() -> None:
    assert match("cop", names("The Big Copper Hall", "A Garden")) == ["The Big Copper Hall"]
    assert match("gar", names("The Big Copper Hall", "A Walled Garden")) == ["A Walled Garden"]


def test_prefix_beats_word_prefix() -> None:
    assert match("hal", names("The Copper Hall", "The Hall")) == ["The Hall"]


def test_longer_exact_name_never_loses_to_a_prefix() -> None:
    assert match("hall", names("Hallway", "Hall", "Hall Of Mirrors")) == ["Hall"]


def test_ambiguity_returns_every_match_in_the_best_tier() -> None:
    assert match("east", names("East Wing", "East Tower", "Northeast Hall")) == [
        "East Wing",
        "East Tower",
    ]
    assert match("rose", names("a red rose", "a white rose")) == ["a red rose", "a white rose"]


def test_aliases_and_ids_count_as_names() -> None:
    candidates: list[tuple[Sequence[str], str]] = [
        (["an old well", "well", "hole"], "well"),
        (["a brass lamp", "lamp"], "lamp"),
    ]
    assert match("hole", candidates) == ["well"]
    assert match("LAMP", candidates) == ["lamp"]


def test_an_item_matching_by_several_names_appears_once() -> None:
    candidates: list[tuple[Sequence[str], str]] = [(["lamp", "lamp", "lantern"], "lamp")]
    assert match("la", candidates) == ["lamp"]


def test_an_item_counts_at_its_best_name() -> None:
    candidates: list[tuple[Sequence[str], str]] = [
        (["The Big Hall", "hall"], "big"),
        (["Hallway"], "hallway"),
    ]
    assert match("hall", candidates) == ["big"]


def test_nothing_matches() -> None:
    assert match("kitchen", names("The Hall", "A Yard")) == []
    assert match("", names("The Hall")) == []
    assert match("   ", names("The Hall")) == []
    assert match("hall", []) == []


def test_mid_word_text_is_no_match() -> None:
    assert match("all", names("The Hall")) == []


# -- properties -------------------------------------------------------------------

name_text = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() == s and s != "")
words = st.lists(
    st.sampled_from(["the", "a", "an", "hall", "lamp", "Hall", "lamps", "old", "x", "ha"]),
    min_size=1,
    max_size=3,
).map(" ".join)
any_name = st.one_of(name_text, words)
name_lists = st.lists(st.lists(any_name, min_size=1, max_size=3), min_size=0, max_size=6)


@given(name_lists, st.one_of(st.text(max_size=12), words))
def test_result_is_a_subset_of_the_candidates(all_names: list[list[str]], query: str) -> None:
    candidates = [(item_names, index) for index, item_names in enumerate(all_names)]
    found = match(query, candidates)
    assert set(found) <= set(range(len(all_names)))
    assert len(found) == len(set(found))


@given(name_lists, st.data())
def test_a_unique_exact_name_wins_alone(all_names: list[list[str]], data: st.DataObject) -> None:
    if not all_names:
        all_names = [["lamp"]]
    candidates = [(item_names, index) for index, item_names in enumerate(all_names)]
    index = data.draw(st.integers(0, len(all_names) - 1))
    query = data.draw(st.sampled_from(all_names[index]))
    owners = {
        i
        for i, item_names in enumerate(all_names)
        for n in item_names
        if n.lower() == query.lower()
    }
    if owners == {index}:
        assert match(query, candidates) == [index]
    else:
        assert index in match(query, candidates)
