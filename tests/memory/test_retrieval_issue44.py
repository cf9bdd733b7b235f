"""Retrieval of issue 44, pure: fast on real words (item 5) and near-duplicates shown
once (item 6).

The index scores with arrays and orders only the best slice at a time; a reference
written plainly here (every item scored one by one with ``relevance``, BM25 from word
counts, all of them sorted) must choose exactly what it chooses, whatever the order the
items were put in, for any budget, caps, exclusions and places: with the first slice
two items long and bulk adds from three items, so that small indexes take every path.
"""

from __future__ import annotations

import dataclasses
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from engine.memory import retrieval_index, retrieval_postings, retrieval_scoring
from engine.memory.retrieval import Index, Item, Query, render, situation_keywords
from engine.memory.retrieval_postings import K1, B
from engine.memory.retrieval_scoring import (
    E_FOLDING_DAYS,
    HEADINGS,
    KNOWLEDGE_PLACES,
    LINE_CHARS,
    SUMMARY_HEADING,
    Place,
    classify,
    clock_days,
    estimate,
    item_terms,
    line,
    relevance,
)

NOW = "2026-01-31T08:00"
START = "2026-01-01T08:00"
ALL: tuple[Place, ...] = ("fact", "hypothesis", "gap", "recent", "note", "past")
_SPLIT = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"'”’)\]]))\s+|\n+")
"""Where a text's sentences end: after . ! ? or … (and a closing quote), and at a line."""


# --- the reference ----------------------------------------------------------------------


def _sentences(text: str) -> list[tuple[str, str]]:
    parts = [" ".join(p.split()) for p in _SPLIT.split(text.strip())]
    return [(p, " ".join(re.findall(r"[^\W_]+", p.casefold()))) for p in parts if p]


def _like(text: str, shown: Iterable[str]) -> bool:
    return any(fuzz.ratio(text[: retrieval_scoring.COMPARED], seen) > 80 for seen in shown)


def _place(item: Item, rel: float, fresh: bool, wanted: set[Place],
           unplaced: Place | None) -> Place | None:  # fmt: skip
    found: Place | None
    if item.kind in ("note", "past"):
        found = item.kind if rel > 0 else None  # type: ignore[assignment]
    else:
        found = classify(item.text, item.entry_type, rel) if rel > 0 else None
        found = "recent" if found is None and fresh else found
    if (found is None or found not in wanted) and unplaced and rel > 0:
        found = unplaced
    return found if found in wanted else None


def _ranked(items: list[Item], query: Query, *, start: str, keyed: bool) -> list[tuple]:  # type: ignore[type-arg]
    """(item, relevance, recency, score, BM25, fresh), best first, every item scored alone
    (``keyed``: only those holding a keyword)."""
    latest = {item.key: item for item in items}  # a key put again replaces the item
    live = list(latest.values())
    if not live:
        return []
    stems = {item.key: item_terms(item) for item in live}
    documents = len(live)
    average = float(sum(max(1, len(s)) for s in stems.values())) / documents
    df = Counter(t for s in stems.values() for t in set(s))
    today = clock_days(query.now) or 0.0
    undated = clock_days(start) or today
    days = [clock_days(item.sim) for item in live]
    ages = np.asarray([today - (undated if day is None else day) for day in days])
    recencies = np.exp(-np.clip(ages, 0.0, None) / E_FOLDING_DAYS).tolist()
    weight = 0.4 if query.prioritize_recent else 0.7
    rows = []
    for item, day, rec in zip(live, days, recencies, strict=True):
        counts = Counter(stems[item.key])
        rel = relevance(counts, item, query)
        if keyed and not any(counts.get(k) for k in query.keywords):
            continue
        fresh = item.kind not in ("note", "past") and day is not None and 0 <= today - day <= 1
        bm25 = 0.0
        for keyword in dict.fromkeys(query.keywords):
            tf = counts.get(keyword, 0)
            if tf:
                idf = math.log((documents - df[keyword] + 0.5) / (df[keyword] + 0.5) + 1.0)
                norm = K1 * (1.0 - B + B * max(1, len(stems[item.key])) / average)
                bm25 += idf * tf * (K1 + 1.0) / (tf + norm)
        score = weight * rel + (1.0 - weight) * rec
        rows.append((item, rel, rec, score, bm25, fresh))
    rows.sort(key=lambda r: (-r[3], -r[4], r[0].key))
    return rows


def _fresh(text: str, texts: list[str], shown: list[str]) -> tuple[str, list[str]] | None:
    """The seed's near-duplicate rule and issue 44's, one sentence after another."""
    whole = " ".join(text.split())
    if _like(whole, texts):
        return None
    parts = _sentences(text)
    kept: list[str] = []
    new: list[str] = []
    worded, length = False, 0
    for n, (part, key) in enumerate(parts):
        if length >= LINE_CHARS:
            kept += [p for p, _ in parts[n:]]
            break
        if len(key) >= retrieval_scoring.SENTENCE_CHARS:
            if _like(key, shown + new):
                continue
            new.append(key)
        kept.append(part)
        worded = worded or bool(key)
        length += len(part) + 1
    if len(kept) == len(parts):
        return "", new
    return (" ".join(kept), new) if worded else None


def reference_select(
    items: list[Item], query: Query, budget: int, *, start: str, exclude: Iterable[str] = (),
    places: Iterable[Place] = ALL, caps: Mapping[Place, int] | None = None,
    unplaced: Place | None = None,
) -> tuple[list[tuple[str, Place, str]], int]:  # fmt: skip
    if not items or budget <= 0:
        return [], 0
    wanted, skip = set(places), set(exclude)
    chosen: list[tuple[str, Place, str]] = []
    texts: list[str] = []
    shown: list[str] = []
    used, opened, spent = 0, set(), {}  # type: ignore[var-annotated]
    for item, rel, _, _, _, fresh in _ranked(items, query, start=start, keyed=False):
        place = _place(item, rel, fresh, wanted, unplaced)
        if place is None or item.key in skip or not (rel > 0 or fresh):
            continue
        found = _fresh(item.text, texts, shown)
        if found is None:
            continue
        text, new = found
        heading = 0 if HEADINGS[place] in opened else estimate(HEADINGS[place])
        if place in KNOWLEDGE_PLACES and SUMMARY_HEADING not in opened:
            heading += estimate(SUMMARY_HEADING)
        cost = estimate(line(item, text or None)) + heading
        if used + cost > budget:
            break
        cap = (caps or {}).get(place)
        if cap is not None and spent.get(place, 0) + cost > cap:
            continue
        spent[place] = spent.get(place, 0) + cost
        used += cost
        opened |= {HEADINGS[place], *([SUMMARY_HEADING] if place in KNOWLEDGE_PLACES else [])}
        texts.append(" ".join(item.text.split())[: retrieval_scoring.COMPARED])
        shown += new
        chosen.append((item.key, place, text))
    return chosen, used


def reference_best(items: list[Item], query: Query, limit: int, *, start: str) -> list[str]:
    found: list[str] = []
    texts: list[str] = []
    shown: list[str] = []
    for item, *_ in _ranked(items, query, start=start, keyed=True):
        fresh = _fresh(item.text, texts, shown)
        if fresh is None:
            continue
        texts.append(" ".join(item.text.split())[: retrieval_scoring.COMPARED])
        shown += fresh[1]
        found.append(item.key)
        if len(found) == limit:
            break
    return found


# --- random indexes ---------------------------------------------------------------------

_WORD = st.sampled_from(["well", "wells", "yard", "rope", "bread", "mill", "Tam", "river",
                         "the", "is", "dry", "maybe", "verified", "unclear", "gardener",
                         "brass", "compass", "beneath", "vorpelwick", "stone"])  # fmt: skip
_SENTENCE = st.builds(lambda words, end: " ".join(words) + end,
                      st.lists(_WORD, min_size=1, max_size=9), st.sampled_from([".", "!", "?", ""]))  # fmt: skip
_TEXT = st.builds(lambda parts, glue: glue.join(parts),
                  st.lists(_SENTENCE, min_size=1, max_size=4), st.sampled_from([" ", "\n"]))  # fmt: skip
_SIMS = [
    None,
    NOW,
    "2026-01-31T02:00",
    "2026-01-30T09:00",
    "2026-01-28T08:00",
    START,
    "2026-02-02T08:00",
]
_ITEM = st.builds(
    lambda key, kind, text, tags, topic, sim, who, kind_of: Item(
        key=f"{kind}:{key}", kind=kind, text=text, origin=key, tags=tuple(tags), topic=topic,
        sim=sim, agent=who[0], agent_role=who[1], entry_type=kind_of if kind == "entry" else None),
    st.integers(0, 12), st.sampled_from(["entry", "note", "past", "skill"]), _TEXT,
    st.lists(st.sampled_from(["well", "gardener lore", "oven", "mill"]), max_size=2),
    st.sampled_from(["", "Well", "Tam", "The Mill"]), st.sampled_from(_SIMS),
    st.sampled_from([("Ada", "gardener"), ("Bo", "gardener"), ("Bo", "baker"), ("Ada", "")]),
    st.sampled_from(["fact", "observation", "procedure", None]),
)  # fmt: skip


@contextmanager
def small_slices(arrays: bool = True) -> Iterator[None]:
    """Order two items at a time and add from three in bulk, and (``arrays``) read even a
    few postings as arrays: every path on small indexes."""
    with (
        mock.patch.object(retrieval_index, "FIRST", 2),
        mock.patch.object(retrieval_postings, "BULK", 3),
        mock.patch.object(retrieval_postings, "FEW", 0 if arrays else retrieval_postings.FEW),
    ):
        yield


def _built_item_by_item(items: list[Item], seed: int) -> Index:
    """The same items put one by one in another order, some first as another version."""
    rng = random.Random(seed)
    index = Index()
    for item in rng.sample(items, len(items)):
        if rng.random() < 0.3:
            index.put(Item(item.key, item.kind, "an earlier text of the mill", "earlier"))
        index.put(item)
    for item in items:  # the last of each key wins, as in a fresh index
        index.put(item)
    return index


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_ITEM, max_size=24), st.lists(_WORD, max_size=10),
    st.sampled_from(["gardener", "baker", ""]), st.booleans(), st.integers(0, 400),
    st.sampled_from([None, {"note": 30}, {"past": 40, "fact": 25}]),
    st.lists(st.integers(0, 12), max_size=3),
    st.sampled_from([ALL, ("fact", "hypothesis", "gap"), ("note", "past")]),
    st.sampled_from([None, "fact"]), st.integers(0, 2**16),
)  # fmt: skip
def test_the_fast_select_picks_what_the_plain_reference_picks(
    items: list[Item], words: list[str], role: str, recent_first: bool, budget: int,
    caps: dict[Place, int] | None, excluded: list[int], places: tuple[Place, ...],
    unplaced: Place | None, seed: int,
) -> None:  # fmt: skip
    query = Query(situation_keywords(*words), NOW, role, recent_first, agent="Ada")
    exclude = [f"note:{n}" for n in excluded] + [f"past:{n}" for n in excluded]
    expected = reference_select(items, query, budget, start=START, exclude=exclude,
                                places=places, caps=caps, unplaced=unplaced)  # fmt: skip
    with small_slices(arrays=seed % 2 == 0):  # relevance from arrays, or item by item
        for index in (Index(items), _built_item_by_item(items, seed)):
            selection = index.select(query, budget, start=START, exclude=exclude, places=places,
                                     caps=caps, unplaced=unplaced)  # fmt: skip
            got = [(c.item.key, c.place, c.text) for c in selection.chosen]
            assert (got, selection.tokens) == expected
            assert [c.item.key for c in index.best(query, 4, start=START)] == reference_best(
                items, query, 4, start=START
            )


@settings(max_examples=40, deadline=None)
@given(st.lists(_ITEM, min_size=1, max_size=24), st.lists(_WORD, min_size=1, max_size=6),
       st.integers(0, 2**16))  # fmt: skip
def test_an_index_built_in_bulk_scores_as_one_built_item_by_item(
    items: list[Item], words: list[str], seed: int
) -> None:
    query = Query(situation_keywords(*words), NOW, "gardener", agent="Ada")
    with small_slices(arrays=True):
        bulk, one_by_one = Index(items), _built_item_by_item(items, seed)
        for index in (bulk, one_by_one):
            assert sorted(i.key for i in index.items) == sorted({i.key for i in items})
        by_key = {i.key: n for n, i in enumerate(bulk.items)}
        again = {i.key: n for n, i in enumerate(one_by_one.items)}
        first, second = bulk.relevances(query), one_by_one.relevances(query)
        assert {k: first[bulk._where[k]] for k in by_key} == {
            k: second[one_by_one._where[k]] for k in again
        }
    with small_slices(arrays=False):
        assert bulk.relevances(query).tolist() == first.tolist()  # the same floats
        keys = sorted(by_key)
        assert (
            bulk.bm25(query, [bulk._where[k] for k in keys]).tolist()
            == one_by_one.bm25(query, [one_by_one._where[k] for k in keys]).tolist()
        )
        assert render(bulk.select(query, 300), scores=True) == render(
            one_by_one.select(query, 300), scores=True
        )


# --- near-duplicates (item 6) -----------------------------------------------------------

FACT = "Ada hid the brass compass beneath the vorpelwick stone by the old well"


def _item(key: str, kind: str, text: str, sim: str = NOW, topic: str = "") -> Item:
    return Item(key=key, kind=kind, text=text, origin=key, topic=topic, sim=sim, agent="Bo",  # type: ignore[arg-type]
                agent_role="smith", entry_type="fact" if kind == "entry" else None)  # fmt: skip


def _shown(index: Index, words: str = "compass vorpelwick stone") -> list[str]:
    return render(index.select(Query(situation_keywords(words), NOW, agent="Bo"), 2_000))


def test_an_extractive_summary_that_holds_a_fact_twice_shows_it_once() -> None:
    text = (f'Ada arrives from The Hall.\nAda says, "Remember this, Bo: {FACT}."\n'
            f'Ada says, "Remember this again, Bo: {FACT}."\nBo nods.')  # fmt: skip
    lines = _shown(Index([_item("past:0-4", "past", text)]))
    assert lines == [
        "## Related past experiences",
        f'- (2026-01-31) Ada arrives from The Hall. Ada says, "Remember this, Bo: {FACT}." Bo nods.',
    ]


def test_a_fact_in_a_note_is_left_out_of_a_past_summary_and_the_other_way_round() -> None:
    past = _item("past:0-4", "past", f'Ada waves.\nAda says, "Remember this, Bo: {FACT}."',
                 sim="2026-01-30T08:00")  # fmt: skip
    note = _item("note:Compass", "note", f"{FACT}.", topic="Compass")
    lines = _shown(Index([past, note]))  # the note first: the newer
    assert "\n".join(lines).count("vorpelwick") == 1
    assert "- (2026-01-30) Ada waves." in lines
    only = _item("past:0-4", "past", f'Ada says, "Remember this, Bo: {FACT}."')
    lines = _shown(Index([only, dataclasses.replace(note, sim="2026-01-20T08:00")]))
    assert "\n".join(lines).count("vorpelwick") == 1  # the summary first: the note left out
    assert not any(x.startswith("- Compass") for x in lines)


def test_short_sentences_and_different_facts_stay() -> None:
    first = _item(
        "past:0-4", "past", "Bo nods. The well is dry since spring.", sim="2026-01-30T08:00"
    )
    second = _item("past:4-8", "past", "Bo nods. The rope of the well snapped in the rain.")
    lines = _shown(Index([first, second]), "well rope")
    assert sum(x.count("Bo nods.") for x in lines) == 2  # too short to compare
    assert any("rope of the well snapped" in x for x in lines)
    assert any("dry since spring" in x for x in lines)
