"""An agent's items indexed for retrieval (``engine.memory.retrieval`` says how they are
scored): ``Index`` chooses what to show from them. Its data structure, kept up to date
item by item (``put``, ``remove``, ``sync``), and the per-slot scores it reads (relevance,
recency, similarity, BM25) are ``Postings`` (``engine.memory.retrieval_postings``).

``select`` decides eligibility (the item's place, the exclusions, its place being
wanted) for every item that could be shown before ordering and deduplicating them: no
shortlist cuts an eligible item.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from rapidfuzz import fuzz, process

from engine.memory.retrieval_postings import Postings
from engine.memory.retrieval_scoring import (
    DUPLICATE,
    HEADINGS,
    KNOWLEDGE_PLACES,
    RECENT_HOURS,
    SUMMARY_HEADING,
    Chosen,
    Place,
    Query,
    Selection,
    by_relevance,
    clock_days,
    estimate,
    line,
)

ALL_PLACES: tuple[Place, ...] = ("fact", "hypothesis", "gap", "recent", "note", "past")


class Index(Postings):
    """The items to show for a situation (``select``) or a question (``best``), chosen
    from the postings and scores ``Postings`` keeps."""

    # -- choosing --------------------------------------------------------------------------

    def select(
        self,
        query: Query,
        budget_tokens: int,
        *,
        tokens: Callable[[str], int] = estimate,
        start: str | None = None,
        exclude: Iterable[str] = (),
        places: Iterable[Place] = ALL_PLACES,
        caps: Mapping[Place, int] | None = None,
        semantic: Sequence[float] | None = None,
        unplaced: Place | None = None,
    ) -> Selection:
        """The items to show for ``query`` within ``budget_tokens`` (see the module).
        ``exclude``: item keys already shown elsewhere; ``places``: where items may go;
        ``caps``: the most tokens of the budget a place may take (an item past its
        place's cap is passed over, the next may still fit); ``semantic``: the
        situation's embedding; ``unplaced``: where an item that holds a keyword but that
        no wanted place takes goes (None: nowhere; ``agent new`` seeds every match)."""
        if not self._where or budget_tokens <= 0:
            return Selection()
        wanted, skip = set(places), set(exclude)
        rel, sem = self._hybrid(query, semantic)
        rec = self.recencies(query.now, start)
        weight = 0.4 if query.prioritize_recent else 0.7
        score = weight * rel + (1.0 - weight) * rec
        today = clock_days(query.now) or 0.0
        eligible, where = self._eligible(rel, today, wanted, skip, unplaced)
        if not eligible:
            return Selection()
        ties = self.bm25(query, eligible)
        order = self._order(eligible, score, ties)
        chosen: list[Chosen] = []
        texts: list[str] = []
        used = 0
        opened: set[str] = set()
        spent: dict[Place, int] = {}
        for k in order:
            position = eligible[k]
            item, place = self.at(position), where[k]
            text = self._texts[position]
            if _repeats(text, texts):
                continue
            heading = _heading_cost(place, opened, tokens)
            cost = tokens(line(item)) + heading
            if used + cost > budget_tokens:
                break
            cap = (caps or {}).get(place)
            if cap is not None and spent.get(place, 0) + cost > cap:
                continue
            spent[place] = spent.get(place, 0) + cost
            used += cost
            opened.add(HEADINGS[place])
            if place in KNOWLEDGE_PLACES:
                opened.add(SUMMARY_HEADING)
            texts.append(text[:COMPARED])
            chosen.append(Chosen(item, float(rel[position]), float(rec[position]),
                                 float(score[position]), place, _maybe(sem, position)))  # fmt: skip
        return Selection(chosen=chosen, tokens=used)

    def _order(self, positions: list[int], score: np.ndarray, ties: np.ndarray) -> list[int]:
        """Indexes into ``positions``, best first: by score, then BM25, then key (the
        order does not depend on the order items were put in)."""
        keys = np.asarray([self.at(p).key for p in positions])
        return [int(k) for k in np.lexsort((keys, -ties, -score[np.asarray(positions)]))]

    def _eligible(
        self, rel: np.ndarray, today: float, wanted: set[Place], skip: set[str],
        unplaced: Place | None,
    ) -> tuple[list[int], list[Place]]:  # fmt: skip
        """Every item that may be shown, with its place: relevant, or (not a note nor a
        past summary) from the last 24 hours; its place wanted; its key not excluded."""
        age = today - self._days
        fresh = self._placed & ~self._undated & (age >= 0) & (age <= RECENT_HOURS / 24)
        positions: list[int] = []
        where: list[Place] = []
        for position in np.flatnonzero(self._alive & ((rel > 0) | fresh)).tolist():
            found = self._place(position, float(rel[position]), bool(fresh[position]))
            if (found is None or found not in wanted) and unplaced and rel[position] > 0:
                found = unplaced
            if found is None or found not in wanted or self.at(position).key in skip:
                continue
            positions.append(position)
            where.append(found)
        return positions, where

    def _place(self, position: int, relevance: float, fresh: bool) -> Place | None:
        """Where the item goes at ``relevance`` (``fresh``: from the last 24 hours)."""
        kind = self.at(position).kind
        if kind == "note":
            return "note" if relevance > 0 else None
        if kind == "past":
            return "past" if relevance > 0 else None
        found = (self._worded[position] or by_relevance(relevance)) if relevance > 0 else None
        return "recent" if found is None and fresh else found

    def _hybrid(
        self, query: Query, semantic: Sequence[float] | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Relevance, raised to the semantic similarity where that is higher; and the
        similarities (None without embeddings)."""
        rel = self.relevances(query)
        sem = self.similarities(semantic)
        if sem is not None:
            rel = np.fmax(rel, sem)  # fmax: a NaN (no embedding) leaves the keyword score
        return rel, sem

    def best(self, query: Query, limit: int, *, start: str | None = None) -> list[Chosen]:
        """The ``limit`` best items for ``query`` among those that hold any of its words
        (``recall``): by combined score, near-duplicates left out, each with the place
        the prompt would give it."""
        positions = sorted(self.matching(query))
        if not positions:
            return []
        rel = self.relevances(query)
        rec = self.recencies(query.now, start)
        weight = 0.4 if query.prioritize_recent else 0.7
        score = weight * rel + (1.0 - weight) * rec
        ties = self.bm25(query, positions)
        today = clock_days(query.now) or 0.0
        age = today - self._days
        found: list[Chosen] = []
        texts: list[str] = []
        for k in self._order(positions, score, ties):
            position = positions[k]
            text = self._texts[position]
            if _repeats(text, texts):
                continue
            texts.append(text[:COMPARED])
            fresh = not self._undated[position] and 0 <= age[position] <= RECENT_HOURS / 24
            place = self._place(position, float(rel[position]), bool(fresh)) or "recent"
            found.append(Chosen(self.at(position), float(rel[position]), float(rec[position]),
                                float(score[position]), place))  # fmt: skip
            if len(found) == limit:
                break
        return found


def _maybe(values: np.ndarray | None, position: int) -> float | None:
    if values is None or math.isnan(values[position]):
        return None
    return float(values[position])


def _heading_cost(place: Place, opened: set[str], tokens: Callable[[str], int]) -> int:
    cost = 0 if HEADINGS[place] in opened else tokens(HEADINGS[place])
    if place in KNOWLEDGE_PLACES and SUMMARY_HEADING not in opened:
        cost += tokens(SUMMARY_HEADING)
    return cost


COMPARED: int = 400
"""The characters of two items' texts the near-duplicate check compares (a long past
summary's opening says what it is about; comparing all of two long ones costs their
lengths multiplied, for every item chosen)."""


def _repeats(text: str, chosen: list[str]) -> bool:
    """``text`` (its first ``COMPARED`` characters) is more than ``DUPLICATE`` similar to
    one of ``chosen`` (theirs; rapidfuzz's loop in C, each comparison cut short once it
    cannot reach the mark)."""
    if not chosen:
        return False
    found = process.extractOne(text[:COMPARED], chosen, scorer=fuzz.ratio,
                               score_cutoff=DUPLICATE)  # fmt: skip
    return found is not None and found[1] > DUPLICATE
