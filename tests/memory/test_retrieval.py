"""Retrieval scoring (pure), as seed 003 states it: classification (with "unclear" a gap,
and an entry's type over its words), the relevance parts and their cap, recency at 0, 7,
14 and 30 days, both weightings, the budget, deduplication keeping the first, related
agents, the format, and stability: the same situation gives the same lines."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.retrieval import (
    SUMMARY_HEADING,
    Index,
    Item,
    Query,
    classify,
    combined,
    estimate,
    recency,
    related_agents,
    relevance,
    render,
    situation_keywords,
    stem,
    terms,
)

NOW = "2026-01-31T08:00"


def entry(key: str, text: str, *, sim: str = NOW, tags: tuple[str, ...] = (), topic: str = "",
          kind: str = "entry", entry_type: str | None = "fact", agent_role: str = "") -> Item:  # fmt: skip
    return Item(
        key=key,
        kind=kind,
        text=text,
        origin=key,
        tags=tags,
        topic=topic,
        sim=sim,  # type: ignore[arg-type]
        agent="Ada",
        agent_role=agent_role,
        entry_type=entry_type,
    )  # type: ignore[arg-type]


def counts(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for term in terms(text):
        found[term] = found.get(term, 0) + 1
    return found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Verified: the well is dry.", "fact"),
        ("The bread rose; test passed at dawn.", "fact"),
        ("The oven might be too hot.", "hypothesis"),
        ("Maybe Bo took the key.", "hypothesis"),
        ("It is unclear who took the key.", "gap"),
        ("Unknown: where the river starts.", "gap"),
        ("I need to investigate the cellar.", "gap"),
    ],
)
def test_classification_by_indicator_words(text: str, expected: str) -> None:
    assert classify(text, "observation", 0.0) == expected


def test_unclear_is_a_gap_not_a_hypothesis() -> None:
    assert classify("Whether the well is deep is unclear.", "fact", 0.1) == "gap"


def test_with_no_indicator_relevance_decides() -> None:
    assert classify("The well is dry.", "fact", 0.71) == "fact"
    assert classify("The well is dry.", "fact", 0.7) == "hypothesis"
    assert classify("The well is dry.", "fact", 0.41) == "hypothesis"
    assert classify("The well is dry.", "fact", 0.4) is None


def test_an_entry_type_that_says_how_to_act_wins_over_its_words() -> None:
    assert classify("Maybe knead the dough twice.", "procedure", 0.0) == "fact"
    assert classify("It is unclear why, but never go west.", "mistake", 0.0) == "fact"


def test_relevance_parts_and_the_cap() -> None:
    query = Query(keywords=situation_keywords("memory typescript caching"), now=NOW,
                  role="implementer")  # fmt: skip
    item = entry("e", "Verified: TypeScript memory store supports caching and memory")
    # three keywords +0.9, one further "memory" +0.1: 1.0 (the seed's example)
    assert relevance(counts(item.text), item, query) == pytest.approx(1.0)
    one = entry("e", "A memory, and memory again, and memory, and memory once more")
    assert relevance(counts(one.text), one, query) == pytest.approx(
        0.3 + 0.3
    )  # further: at most 0.3
    tagged = entry("t", "Nothing to see.", tags=("lead implementer",))
    assert relevance(counts(tagged.text), tagged, query) == pytest.approx(0.2)
    topical = entry("n", "Nothing to see.", topic="TypeScript")
    assert relevance(counts(topical.text), topical, query) == pytest.approx(0.2)
    theirs = entry("o", "Nothing to see.", agent_role="senior implementer")
    assert relevance(counts(theirs.text), theirs, query) == pytest.approx(0.1)
    everything = entry("x", item.text, tags=("implementer",), topic="memory",
                       agent_role="implementer")  # fmt: skip
    assert relevance(counts(everything.text), everything, query) == 1.0


@pytest.mark.parametrize(("days", "expected"), [(0, 1.0), (7, 0.3679), (14, 0.1353), (30, 0.0138)])
def test_recency_decays_with_a_seven_day_e_folding_time(days: float, expected: float) -> None:
    assert recency(days) == pytest.approx(expected, abs=1e-4)


def test_the_two_weightings() -> None:
    assert combined(1.0, 0.0) == pytest.approx(0.7)
    assert combined(0.0, 1.0) == pytest.approx(0.3)
    assert combined(1.0, 0.0, prioritize_recent=True) == pytest.approx(0.4)
    assert combined(0.0, 1.0, prioritize_recent=True) == pytest.approx(0.6)


def test_words_match_by_their_snowball_stem_in_any_script() -> None:
    assert stem("caching") == stem("cache") == "cach"
    assert stem("apples") == stem("apple") == "appl"
    assert terms("Кофе у колодца, café près du puits") == [
        "кофе",
        "колодца",
        "café",
        "près",
        "du",
        "puit",
    ]
    assert situation_keywords("The Yard", "A muddy yard.", "Bo") == ("yard", "muddi")


@pytest.mark.parametrize(
    ("irregular", "base"),
    [("wolves", "wolf"), ("loaves", "loaf"), ("mice", "mouse"), ("children", "child"),
     ("bought", "buy"), ("ran", "run"), ("knives", "knife"), ("feet", "foot"),
     ("sold", "sell"), ("thieves", "thief"), ("geese", "goose"), ("went", "go")],
)  # fmt: skip
def test_an_irregular_form_is_its_lemma(irregular: str, base: str) -> None:
    assert stem(irregular) == stem(base)


def test_leaves_and_lives_stay_verbs_where_people_leave_rooms() -> None:
    assert stem("leaves") == stem("leave")
    assert stem("lives") == stem("live")


def test_a_fact_about_the_room_is_chosen_and_unrelated_entries_are_not() -> None:
    index = Index([
        entry("well", "The old well in the yard has been dry since spring."),
        entry("bread", "Bread rises best near the kitchen stove.", sim="2026-01-01T08:00"),
        entry("books", "The library shelf holds maps of the coast.", sim="2026-01-01T08:00"),
    ])  # fmt: skip
    query = Query(
        keywords=situation_keywords("The Yard", "A muddy yard with an old well."), now=NOW
    )
    chosen = index.select(query, 400).chosen
    assert [c.item.key for c in chosen] == ["well"]
    assert chosen[0].place == "fact"  # "old", "well", "yard": 0.9, over 0.7


def test_the_budget_is_never_exceeded_and_the_best_go_first() -> None:
    items = [
        entry(f"e{n}", f"The well number {n} in the yard is deep and cold.") for n in range(50)
    ]
    index = Index(items)
    query = Query(keywords=("well", "yard"), now=NOW)
    selection = index.select(query, 60)
    lines = render(selection)
    assert selection.tokens <= 60
    assert sum(estimate(x) for x in lines if not x.startswith("#")) <= 60
    assert 0 < len(selection.chosen) < 50


def test_near_duplicates_across_kinds_appear_once_the_first_kept() -> None:
    index = Index([
        entry("entry", "The well in the yard is dry.", sim="2026-01-31T07:00"),
        entry("note", "The well in the yard is dry!", kind="note", entry_type=None,
              sim="2026-01-30T07:00"),
        entry("past", "The well in the yard is dry.", kind="past", entry_type=None,
              sim="2026-01-29T07:00"),
    ])  # fmt: skip
    chosen = index.select(Query(keywords=("well", "yard"), now=NOW), 400).chosen
    assert [c.item.key for c in chosen] == ["entry"]


def test_recent_findings_take_what_no_other_section_took() -> None:
    index = Index([
        entry("fresh", "Pat planted roses by the gate.", sim="2026-01-31T06:00"),
        entry("stale", "Pat planted tulips by the gate.", sim="2026-01-20T06:00"),
    ])  # fmt: skip
    selection = index.select(Query(keywords=("well",), now=NOW), 400)
    assert [(c.item.key, c.place) for c in selection.chosen] == [("fresh", "recent")]


def test_the_format_and_empty_sections_left_out() -> None:
    index = Index([
        entry("fact", "Verified: the well in the yard is dry."),
        entry("gap", "Unknown: who fills the well in the yard.", entry_type="observation"),
        entry("note", "Ask Bo about the well rope.", kind="note", topic="Rope", entry_type=None),
        entry("past", "I walked to the yard and looked into the well.", kind="past",
              entry_type=None, sim="2026-01-02T09:00"),
    ])  # fmt: skip
    selection = index.select(Query(keywords=("well", "yard"), now=NOW), 400)
    selection.related_agents.append("Bo")
    assert render(selection) == [
        SUMMARY_HEADING,
        "### Proven Facts (Verified)",
        "- Verified: the well in the yard is dry.",
        "### Known Knowledge Gaps",
        "- Unknown: who fills the well in the yard.",
        "### Related Agents",
        "Agents who know about this: Bo",
        "## Relevant private notes",
        "- Rope: Ask Bo about the well rope.",
        "## Related past experiences",
        "- (2026-01-02) I walked to the yard and looked into the well.",
    ]
    scored = render(selection, scores=True)
    assert scored[2].startswith("- Verified: the well in the yard is dry.  [rel 0.")
    assert scored[2].endswith(", fact]")


def test_related_agents_are_the_others_whose_items_match() -> None:
    query = Query(keywords=("well", "yard"), now=NOW)
    others = {
        "Bo": Index([entry("b", "The yard well needs a new rope.")]),
        "Pat": Index([entry("p", "Roses by the gate.")]),
        "Moss": Index([entry("m", "The well is deep.")]),
    }
    assert related_agents(query, others) == ["Bo", "Moss"]


def test_the_same_situation_gives_the_same_lines() -> None:
    items = [entry(f"e{n}", f"Fact {n} about the well and the yard.", sim=f"2026-01-{1 + n % 28:02d}T08:00")
             for n in range(40)]  # fmt: skip
    query = Query(keywords=("well", "yard"), now=NOW)
    assert render(Index(items).select(query, 200)) == render(Index(items).select(query, 200))


_TEXT = st.text(alphabet=st.characters(codec="utf-8", categories=["L", "Zs", "P"]), min_size=1,
                max_size=120)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_TEXT, st.integers(0, 60)), max_size=60),
    st.lists(st.sampled_from(["well", "yard", "bread", "кофе", "café"]), max_size=5, unique=True),
    st.integers(0, 600),
    st.booleans(),
)
def test_any_items_any_budget_never_exceeded_and_scores_in_range(
    rows: list[tuple[str, int]], keywords: list[str], budget: int, recent_first: bool
) -> None:
    items = [entry(f"e{n}", text, sim=f"2026-01-{1 + day % 28:02d}T08:00")
             for n, (text, day) in enumerate(rows)]  # fmt: skip
    selection = Index(items).select(Query(tuple(keywords), NOW, prioritize_recent=recent_first),
                                    budget)  # fmt: skip
    assert selection.tokens <= budget
    for chosen in selection.chosen:
        assert 0.0 <= chosen.relevance <= 1.0
        assert 0.0 <= chosen.recency <= 1.0
        assert math.isclose(chosen.score, combined(chosen.relevance, chosen.recency, recent_first))
    keys = [c.item.key for c in selection.chosen]
    assert len(keys) == len(set(keys))


def test_a_semantic_match_counts_where_no_keyword_does() -> None:
    old = "2026-01-01T08:00"  # a month ago: not a recent finding
    index = Index([
        entry("light", "The oil for the light is kept in the cellar.", sim=old),
        entry("roses", "Roses climb the garden wall.", sim=old),
    ])  # fmt: skip
    query = Query(keywords=("lamp",), now=NOW)
    assert [c.item.key for c in index.select(query, 400).chosen] == []  # no keyword matches
    index.set_vectors([[1.0, 0.0], [0.0, 1.0]])
    chosen = index.select(query, 400, semantic=[0.95, 0.05]).chosen
    assert [(c.item.key, c.place) for c in chosen] == [("light", "fact")]
    assert chosen[0].semantic == pytest.approx(0.998, abs=1e-3)
    assert "sem 1.00" in chosen[0].scores()
    assert index.embedded == 2


def test_items_without_a_vector_keep_their_keyword_score() -> None:
    index = Index([entry("a", "The lamp is lit at dusk by Pat."),
                   entry("b", "A second lamp hangs in the cellar, unused.")])  # fmt: skip
    index.set_vectors([[1.0, 0.0], None])
    chosen = {
        c.item.key: c for c in index.select(Query(("lamp",), NOW), 400, semantic=[0, 1]).chosen
    }
    assert chosen["a"].semantic == 0.0
    assert chosen["a"].relevance == pytest.approx(0.3)
    assert chosen["b"].semantic is None
    assert chosen["b"].relevance == pytest.approx(0.3)
