"""Retrieval's defects of issue 30, each pinned (pure, no I/O): an agent's own role gives
its own items no bonus (10); no shortlist drops an eligible item (11); plurals and
-ing forms match their word (12); a single keyword is enough to place an item where a
caller asks (13, ``unplaced``); the index changes item by item and stays what a fresh
build of the same items would be (14)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.retrieval import (
    Index,
    Item,
    Query,
    relevance,
    render,
    situation_keywords,
    stem,
    terms,
)

NOW = "2026-01-31T08:00"
OLD = "2026-01-02T08:00"


def item(key: str, text: str, *, kind: str = "note", sim: str = OLD, agent: str = "Ada",
         role: str = "gardener", tags: tuple[str, ...] = (), topic: str = "") -> Item:  # fmt: skip
    return Item(key=key, kind=kind, text=text, origin=key, tags=tags, topic=topic, sim=sim,  # type: ignore[arg-type]
                agent=agent, agent_role=role, entry_type="fact" if kind == "entry" else None)  # fmt: skip


def counts(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for term in terms(text):
        found[term] = found.get(term, 0) + 1
    return found


# --- 10: the role bonus --------------------------------------------------------------


def test_an_agents_own_items_get_no_bonus_for_its_own_role() -> None:
    query = Query(situation_keywords("The Yard, with its old well."), NOW, "gardener", agent="Ada")
    mine = item("n", "Pat hums while she sweeps the stairs.")
    assert relevance(counts(mine.text), mine, query) == 0.0
    bos = item("b", "Pat hums while she sweeps the stairs.", agent="Bo")
    assert relevance(counts(bos.text), bos, query) == pytest.approx(0.1)  # another gardener's
    tagged = item("t", "Pat hums.", tags=("gardener's lore",))
    assert relevance(counts(tagged.text), tagged, query) == pytest.approx(0.2)  # tags name it


def test_unrelated_own_notes_and_past_summaries_stay_out_of_the_prompt() -> None:
    index = Index([
        item("unrelated", "Pat hums while she sweeps the stairs."),
        item("past", "I ate rye bread by the fire.", kind="past"),
        item("well", "The old well rope frays near the bucket."),
    ])  # fmt: skip
    query = Query(situation_keywords("The Yard", "An old well."), NOW, "gardener", agent="Ada")
    assert [c.item.key for c in index.select(query, 400).chosen] == ["well"]


_WORDS = st.sampled_from(["well", "rope", "bread", "oven", "roses", "stairs", "pat", "lamp"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=6), min_size=1, max_size=12),
       st.lists(_WORDS, max_size=3), st.sampled_from(["gardener", "baker"]))  # fmt: skip
def test_own_items_score_as_if_the_agent_had_no_role_unless_their_tags_name_it(
    texts: list[list[str]], keywords: list[str], role: str
) -> None:
    items = [item(f"i{n}", " ".join(words)) for n, words in enumerate(texts)]
    keys = situation_keywords(*keywords)
    with_role = Index(items).relevances(Query(keys, NOW, role, agent="Ada"))
    without = Index(items).relevances(Query(keys, NOW, "", agent="Ada"))
    assert with_role.tolist() == without.tolist()


# --- 11: no shortlist before eligibility ----------------------------------------------


def test_one_old_relevant_note_is_chosen_among_300_recent_unrelated_ones() -> None:
    noise = [item(f"n{k}", f"Counted {k} sacks of flour in the mill loft.", sim=NOW)
             for k in range(300)]  # fmt: skip
    well = item("well", "The well rope is frayed.", sim="2026-01-01T08:00")
    index = Index([*noise, well])
    query = Query(situation_keywords("The Yard", "An old well."), NOW, "gardener", agent="Ada")
    assert "well" in [c.item.key for c in index.select(query, 400).chosen]
    assert [c.item.key for c in index.best(query, 5)] == ["well"]  # as recall finds it


def test_excluded_and_unwanted_items_never_take_an_eligible_ones_room() -> None:
    shown = [item(f"s{k}", f"The well number {k} is deep.", kind="past", sim=NOW)
             for k in range(300)]  # fmt: skip
    old = item("old", "A well by the mill.", kind="past", sim="2026-01-01T08:00")
    index = Index([*shown, old])
    query = Query(("well",), NOW)
    chosen = index.select(query, 400, exclude=[s.key for s in shown]).chosen
    assert [c.item.key for c in chosen] == ["old"]


# --- 12: a real stemmer --------------------------------------------------------------


@pytest.mark.parametrize(("one", "other"), [("key", "keys"), ("rose", "roses"),
                                            ("city", "cities"), ("run", "running")])  # fmt: skip
def test_plurals_and_ing_forms_are_the_same_word(one: str, other: str) -> None:
    assert stem(one) == stem(other)


def test_a_plural_in_the_situation_finds_the_singular_in_a_note() -> None:
    index = Index([item("key", "The iron key hangs behind the door.")])
    query = Query(situation_keywords("Two keys lie on the table."), NOW)
    assert [c.item.key for c in index.select(query, 400).chosen] == ["key"]


def test_other_scripts_still_match_as_they_are() -> None:
    assert terms("Вода в колодце") == ["вода", "колодце"]
    assert stem("水井") == "水井"
    index = Index([item("k", "Вода в колодце холодная.")])
    assert [c.item.key for c in index.best(Query(("колодце",), NOW), 3)] == ["k"]


# --- 13: a single keyword places an item where asked -----------------------------------


def test_a_single_keyword_places_an_entry_where_the_caller_asks() -> None:
    index = Index([item("v", "Vorpelwick lies past the ford.", kind="entry", agent="Bo"),
                   item("x", "The smithy needs charcoal.", kind="entry", agent="Bo")])  # fmt: skip
    query = Query(situation_keywords("vorpelwick"), NOW, agent="Nell")
    places = ("fact", "hypothesis", "gap")
    assert index.select(query, 400, places=places).chosen == []  # 0.3: no class of its own
    chosen = index.select(query, 400, places=places, unplaced="fact").chosen
    assert [(c.item.key, c.place) for c in chosen] == [("v", "fact")]
    fresh = Index([item("v", "Vorpelwick lies past the ford.", kind="entry", sim=NOW)])
    assert fresh.select(query, 400, places=places).chosen == []  # a recent finding: not wanted
    chosen = fresh.select(query, 400, places=places, unplaced="fact").chosen
    assert [(c.item.key, c.place) for c in chosen] == [("v", "fact")]


# --- 14: incremental changes ----------------------------------------------------------


def test_a_changed_item_changes_only_itself() -> None:
    items = [item(f"i{k}", f"Fact {k} about the oven.") for k in range(50)]
    index = Index(items)
    assert index.put(items[3]) is False  # the same item: nothing to do
    assert index.put(dataclasses.replace(items[3], text="The well is deep.")) is True
    assert index.remove("i4") is True
    assert index.remove("i4") is False
    assert len(index) == 49
    query = Query(("well",), NOW)
    assert [c.item.key for c in index.select(query, 400).chosen] == ["i3"]
    changed = [*items[:3], dataclasses.replace(items[3], text="The well is deep."), *items[5:]]
    assert index.sync(changed) == 0
    assert index.sync([*changed, item("new", "A new well.")], kinds=("note",)) == 1
    assert index.sync([], kinds=("past",)) == 0  # no past summary to take out
    assert {c.item.key for c in index.best(query, 5)} == {"i3", "new"}


_ROW = st.tuples(st.integers(0, 15), st.lists(_WORDS, min_size=1, max_size=5),
                 st.sampled_from(["entry", "note", "past"]), st.integers(0, 30))  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_ROW, st.integers(0, 15)), max_size=40), st.lists(_WORDS, max_size=3),
       st.integers(20, 400))  # fmt: skip
def test_an_index_changed_item_by_item_selects_as_a_fresh_one(
    steps: list[tuple[int, list[str], str, int] | int], keywords: list[str], budget: int
) -> None:
    index = Index()
    current: dict[str, Item] = {}
    for step in steps:
        if isinstance(step, int):  # take item ``step`` out
            index.remove(f"k{step}")
            current.pop(f"k{step}", None)
            continue
        number, words, kind, day = step
        new = item(f"k{number}", " ".join(words), kind=kind,
                   sim=f"2026-01-{1 + day % 30:02d}T08:00", tags=(words[0],))  # fmt: skip
        index.put(new)
        current[new.key] = new
    fresh = Index(sorted(current.values(), key=lambda i: i.key))
    query = Query(situation_keywords(*keywords), NOW, "pat", agent="Ada")
    assert sorted(i.key for i in index.items) == sorted(current)
    assert render(index.select(query, budget), scores=True) == render(
        fresh.select(query, budget), scores=True
    )
    assert [c.item.key for c in index.best(query, 5)] == [c.item.key for c in fresh.best(query, 5)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_WORDS, min_size=1, max_size=6), st.sampled_from(["Ada", "Bo"]),
                          st.sampled_from(["gardener", "head baker", ""]),
                          st.lists(st.sampled_from(["gardener lore", "oven", "well"]), max_size=2),
                          st.sampled_from(["", "Well", "Bread ovens"])),
                max_size=12),
       st.lists(_WORDS, max_size=4), st.sampled_from(["gardener", "baker", ""]))  # fmt: skip
def test_the_index_scores_every_item_as_relevance_does(
    rows: list[tuple[list[str], str, str, list[str], str]], keywords: list[str], role: str
) -> None:
    items = [item(f"i{n}", " ".join(words), agent=agent, role=agent_role, tags=tuple(tags),
                  topic=topic) for n, (words, agent, agent_role, tags, topic) in enumerate(rows)]  # fmt: skip
    query = Query(situation_keywords(*keywords), NOW, role, agent="Ada")
    index = Index(items)
    scores = index.relevances(query)
    for position, one in enumerate(items):
        assert scores[position] == pytest.approx(
            relevance(counts(one.text + " " + one.topic + " " + " ".join(one.tags)), one, query)
        )
