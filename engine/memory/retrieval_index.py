"""An agent's items indexed for retrieval (``engine.memory.retrieval`` says how they are
scored): ``Index`` chooses what to show from them. Its data structure, kept up to date
item by item (``put``, ``remove``, ``sync``), and relevance read from it are
``Postings`` (``engine.memory.retrieval_postings``); recency, semantic similarity and
BM25 (the tie-breaker) are read here.

``select`` decides eligibility (the item's place, the exclusions, its place being
wanted) for every item that could be shown before ordering and deduplicating them: no
shortlist cuts an eligible item. Eligibility is a few array operations over every slot;
the order (score, then BM25, then key) is then made a slice at a time (``_ranked``):
the best ``FIRST`` scores and every item tied with the last of them, fully ordered, then
the next slice, four times larger, only if the budget is not full yet. Each slice holds
every item scoring above the rest, so the order is the full order, whatever order the
items were put in, at the cost of what is looked at.

Near-duplicates (``Shown``): an item more than ``DUPLICATE`` like one chosen before
(rapidfuzz's ratio over the first ``COMPARED`` characters) is left out, the first kept,
as seed 003 says. So is one whose every sentence is more than ``DUPLICATE`` like a
sentence already shown (each compared as its words, lower-cased), and an item with
something new shows without its sentences that repeat one shown or one of its own
before them: an extractive past summary keeps "Remember this, Bo: ..." and "Remember
this again, Bo: ..." as two lines, and a note's fact may sit in a longer summary, which
the whole-item ratio never took for a repeat, so the fact showed two or three times.
Only the sentences an item's line shows are compared (not those past ``LINE_CHARS``),
and not the short ones (``SENTENCE_CHARS``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import repeat
from typing import Final

import numpy as np

from engine.memory.retrieval_postings import CODE, K1, NOTE, OTHER, PAST, PLACES, B, Postings
from engine.memory.retrieval_scoring import (
    E_FOLDING_DAYS,
    HEADINGS,
    KNOWLEDGE_PLACES,
    RECENT_HOURS,
    SUMMARY_HEADING,
    Chosen,
    Place,
    Query,
    Selection,
    Shown,
    clock_days,
    estimate,
    line,
)

ALL_PLACES: tuple[Place, ...] = PLACES
FIRST: Final = 64
"""The first slice of the order (``_ranked``): about what a 2,000-token budget takes."""


class Index(Postings):
    """The items to show for a situation (``select``) or a question (``best``), chosen
    from the postings and scores ``Postings`` keeps."""

    # -- embeddings and recency -------------------------------------------------------------

    def set_vectors(self, vectors: Sequence[Sequence[float] | None]) -> None:
        """Each item's embedding (None: not embedded yet), in ``items``' order."""
        known = [v for v in vectors if v is not None]
        if not known:
            return
        width = len(known[0])
        if self._vectors is None or self._vectors.shape[1] != width:
            self._vectors = np.zeros((len(self._alive), width))
            self._embedded[:] = False
        positions = [p for p, item in enumerate(self._slots) if item is not None]
        for position, vector in zip(positions, vectors, strict=True):
            if vector is not None and len(vector) == width:
                norm = float(np.linalg.norm(vector))
                self._vectors[position] = np.asarray(vector) / (norm if norm > 0 else 1.0)
                self._embedded[position] = True

    @property
    def embedded(self) -> int:
        """How many items have an embedding."""
        return int(self._embedded.sum())

    def similarities(self, vector: Sequence[float] | None) -> np.ndarray | None:
        """Each slot's cosine similarity with ``vector`` (NaN where it has no embedding);
        None when there is nothing to compare."""
        if vector is None or self._vectors is None or len(vector) != self._vectors.shape[1]:
            return None
        query = np.asarray(vector, dtype=float)
        norm = np.linalg.norm(query)
        if norm == 0:
            return None
        scores = self._vectors @ (query / norm)
        return np.where(self._embedded, np.clip(scores, 0.0, 1.0), np.nan)

    def recencies(self, now: str, start: str | None = None) -> np.ndarray:
        """Each slot's recency at ``now``; an item with no time counts as ``start`` (the
        clock's start), or as ``now`` when that is unknown too."""
        today = clock_days(now) or 0.0
        undated = (clock_days(start) if start else None) or today
        days = np.where(self._undated, undated, self._days)
        return np.exp(-np.clip(today - days, 0.0, None) / E_FOLDING_DAYS)

    def bm25(self, query: Query, positions: Sequence[int] | np.ndarray) -> np.ndarray:
        """BM25 of ``positions`` for the query's keywords, from the postings (a keyword's
        document frequency is its posting's size), summed keyword by keyword in the
        query's order (a keyword none of them holds adds 0 to each: it is skipped)."""
        wanted = np.asarray(positions, dtype=np.intp)
        scores = np.zeros(len(wanted))
        if not len(wanted) or not query.keywords or not self._where:
            return scores
        at = wanted.tolist()
        documents = len(self._where)
        idfs: list[float] = []
        counts: list[int] = []  # each keyword's count in each of them, row by row
        for keyword in dict.fromkeys(query.keywords):
            posting = self._postings.get(keyword)
            if not posting:
                continue
            found: list[int] = list(map(posting.get, at, repeat(0)))
            if any(found):
                idfs.append(math.log((documents - len(posting) + 0.5) / (len(posting) + 0.5) + 1.0))
                counts += found
        if not idfs:
            return scores
        tf = np.asarray(counts, dtype=np.float64).reshape(len(idfs), len(at))
        norm = K1 * (1.0 - B + B * self._lengths[wanted] / (self._total / documents))
        for row in np.asarray(idfs)[:, None] * tf * (K1 + 1.0) / (tf + norm):
            scores += row  # 0 where it is not held
        return scores

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
        rel, sem = self._hybrid(query, semantic)
        rec = self.recencies(query.now, start)
        weight = 0.4 if query.prioritize_recent else 0.7
        score = weight * rel + (1.0 - weight) * rec
        today = clock_days(query.now) or 0.0
        where = self._places(rel, today, set(places), set(exclude), unplaced)
        eligible = np.flatnonzero(where >= 0)
        chosen: list[Chosen] = []
        shown = Shown()
        used = 0
        opened: set[str] = set()
        spent: dict[Place, int] = {}
        for position in self._ranked(query, eligible, score):
            item, place = self.at(position), PLACES[where[position]]
            fresh = shown.fresh(item.text)
            if fresh is None:
                continue
            text, pieces = fresh
            heading = _heading_cost(place, opened, tokens)
            cost = tokens(line(item, text or None)) + heading
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
            shown.add(item.text, pieces)
            chosen.append(Chosen(item, float(rel[position]), float(rec[position]),
                                 float(score[position]), place, _maybe(sem, position), text))  # fmt: skip
        return Selection(chosen=chosen, tokens=used)

    def _ranked(self, query: Query, positions: np.ndarray, score: np.ndarray) -> Iterator[int]:
        """``positions`` best first: by score, then BM25, then key (the order does not
        depend on the order items were put in), a slice at a time (see the module)."""
        rest = positions
        size = FIRST
        while len(rest):
            if len(rest) > size:
                values = score[rest]
                cut = np.partition(values, len(rest) - size)[len(rest) - size]
                above = values >= cut  # the best ``size`` and every one tied with the last
                part, rest = rest[above], rest[~above]
            else:
                part, rest = rest, rest[:0]
            scores = score[part].tolist()
            ties = self.bm25(query, part).tolist()
            keys = [self.at(p).key for p in part.tolist()]
            order = sorted(range(len(part)), key=lambda k: (-scores[k], -ties[k], keys[k]))
            yield from part[order].tolist()
            size *= 4

    def _places(
        self, rel: np.ndarray, today: float, wanted: set[Place], skip: set[str],
        unplaced: Place | None,
    ) -> np.ndarray:  # fmt: skip
        """Each slot's place code (``PLACES``), -1 where its item may not be shown: it may
        when it is relevant, or (not a note nor a past summary) from the last 24 hours;
        its place wanted; its key not excluded. Where it goes: a note or a past summary
        to its own section when relevant; an entry or a skill by its words, else by its
        relevance, else (from the last 24 hours) a recent finding."""
        kinds = self._kinds
        age = today - self._days
        fresh = (kinds == OTHER) & ~self._undated & (age >= 0) & (age <= RECENT_HOURS / 24)
        relevant = rel > 0
        by_relevance = np.where(
            rel > 0.7, CODE["fact"], np.where(rel > 0.4, CODE["hypothesis"], -1)
        )
        other = np.where(relevant, np.where(self._worded >= 0, self._worded, by_relevance), -1)
        other = np.where((other < 0) & fresh, CODE["recent"], other)
        place = np.where(kinds == NOTE, np.where(relevant, CODE["note"], -1),
                         np.where(kinds == PAST, np.where(relevant, CODE["past"], -1), other))  # fmt: skip
        allowed = np.zeros(len(PLACES) + 1, dtype=bool)  # the last: -1, never
        allowed[[CODE[p] for p in wanted if p in CODE]] = True
        if unplaced is not None and unplaced in wanted:
            place = np.where(~allowed[place] & relevant, CODE[unplaced], place)
        place = np.where(allowed[place] & self._alive, place, -1)
        for key in skip:
            position = self._where.get(key)
            if position is not None:
                place[position] = -1
        return place

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
        positions = np.flatnonzero(self.holding(query))
        if not len(positions) or limit <= 0:
            return []
        rel = self.relevances(query)
        rec = self.recencies(query.now, start)
        weight = 0.4 if query.prioritize_recent else 0.7
        score = weight * rel + (1.0 - weight) * rec
        today = clock_days(query.now) or 0.0
        where = self._places(rel, today, set(PLACES), set(), None)
        found: list[Chosen] = []
        shown = Shown()
        for position in self._ranked(query, positions, score):
            item = self.at(position)
            fresh = shown.fresh(item.text)
            if fresh is None:
                continue
            shown.add(item.text, fresh[1])
            place: Place = PLACES[where[position]] if where[position] >= 0 else "recent"
            found.append(Chosen(item, float(rel[position]), float(rec[position]),
                                float(score[position]), place, text=fresh[0]))  # fmt: skip
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
