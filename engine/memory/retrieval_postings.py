"""The retrieval index's data structure (``Postings``; ``engine.memory.retrieval_index``
chooses from it): an agent's items kept up to date item by item. ``put`` and ``remove``
cost one item's stems and postings, ``sync`` makes the items of some kinds exactly the
given ones by changing only those that differ. Nothing is computed over every item at
once but the recency of each (one vector operation): BM25, the tie-breaker, is computed
at select time from postings and document frequencies kept per item.

It reads, for each slot, what the choosing needs: relevance (from the postings and the
role), recency, semantic similarity (from the embeddings) and BM25.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

import numpy as np

from engine.memory.retrieval_scoring import (
    E_FOLDING_DAYS,
    OWN_ROLE,
    Item,
    ItemKind,
    Place,
    Query,
    clock_days,
    item_terms,
    topic_stems,
    worded,
)

K1 = 1.5
B = 0.75
"""BM25's parameters (rank_bm25's and Lucene's defaults)."""
_K = TypeVar("_K", bound=Hashable)


class Postings:
    """An agent's items, with what scoring needs computed once per item (its stems, the
    day it is from, its class by its words); change it with ``put``, ``remove`` and
    ``sync``, query it every turn. Positions are slots: stable while an item stays."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._slots: list[Item | None] = []
        self._where: dict[str, int] = {}
        self._free: list[int] = []
        self.counts: list[Counter[str]] = []
        """Each slot's stems and how often each occurs."""
        self._texts: list[str] = []
        self._worded: list[Place | None] = []
        self._postings: dict[str, set[int]] = {}
        self._tagged: dict[str, set[int]] = {}
        self._roles: dict[tuple[str, str], set[int]] = {}
        """(agent role casefolded, agent) -> its items."""
        self._days = np.zeros(0)
        self._undated = np.zeros(0, dtype=bool)
        self._alive = np.zeros(0, dtype=bool)
        self._placed = np.zeros(0, dtype=bool)
        """Not a note nor a past summary: may be a recent finding without a keyword."""
        self._lengths = np.zeros(0)
        self._total = 0.0
        self._vectors: np.ndarray | None = None
        self._embedded = np.zeros(0, dtype=bool)
        for item in items:
            self.put(item)

    # -- changes ---------------------------------------------------------------------------

    def put(self, item: Item) -> bool:
        """Add ``item``, or replace the item with its key; False when it was there as is."""
        position = self._where.get(item.key)
        if position is not None:
            if self._slots[position] == item:
                return False
            self._drop(position)
        position = self._free.pop() if self._free else self._grow()
        stems = item_terms(item)
        counts = Counter(stems)
        self._slots[position] = item
        self._where[item.key] = position
        self.counts[position] = counts
        self._texts[position] = " ".join(item.text.split())
        self._worded[position] = worded(item) if item.kind not in ("note", "past") else None
        for term in counts:
            self._postings.setdefault(term, set()).add(position)
        for tag in {t.casefold() for t in item.tags}:
            self._tagged.setdefault(tag, set()).add(position)
        self._roles.setdefault((item.agent_role.casefold(), item.agent), set()).add(position)
        day = clock_days(item.sim)
        self._days[position] = day or 0.0
        self._undated[position] = day is None
        self._alive[position] = True
        self._placed[position] = item.kind not in ("note", "past")
        self._lengths[position] = max(1, len(stems))
        self._total += self._lengths[position]
        self._embedded[position] = False
        return True

    def remove(self, key: str) -> bool:
        """Take the item with ``key`` out; False when there was none."""
        position = self._where.get(key)
        if position is None:
            return False
        self._drop(position)
        return True

    def sync(self, items: Iterable[Item], kinds: Iterable[ItemKind] | None = None) -> int:
        """Make this index's items of ``kinds`` (every kind: None) exactly ``items``, each
        change costing one item; how many items changed."""
        wanted = set(kinds) if kinds is not None else None
        items = list(items)
        keep = {item.key for item in items if wanted is None or item.kind in wanted}
        changed = 0
        for key, position in list(self._where.items()):
            item = self._slots[position]
            if key not in keep and item is not None and (wanted is None or item.kind in wanted):
                self._drop(position)
                changed += 1
        for item in items:
            if item.key in keep:
                changed += self.put(item)
        return changed

    def _drop(self, position: int) -> None:
        item = self._slots[position]
        assert item is not None
        for term in self.counts[position]:
            found = self._postings[term]
            found.discard(position)
            if not found:
                del self._postings[term]
        for tag in {t.casefold() for t in item.tags}:
            _discard(self._tagged, tag, position)
        _discard(self._roles, (item.agent_role.casefold(), item.agent), position)
        del self._where[item.key]
        self._slots[position] = None
        self.counts[position] = Counter()
        self._texts[position] = ""
        self._alive[position] = False
        self._embedded[position] = False
        self._total -= self._lengths[position]
        self._free.append(position)

    def _grow(self) -> int:
        position = len(self._slots)
        self._slots.append(None)
        self.counts.append(Counter())
        self._texts.append("")
        self._worded.append(None)
        if position >= len(self._alive):
            size = max(64, 2 * len(self._alive))
            self._days = _resized(self._days, size)
            self._undated = _resized(self._undated, size)
            self._alive = _resized(self._alive, size)
            self._placed = _resized(self._placed, size)
            self._lengths = _resized(self._lengths, size)
            self._embedded = _resized(self._embedded, size)
            if self._vectors is not None:
                self._vectors = _resized(self._vectors, size)
        return position

    # -- reading ---------------------------------------------------------------------------

    @property
    def items(self) -> list[Item]:
        """The items, in their slots' order."""
        return [item for item in self._slots if item is not None]

    def at(self, position: int) -> Item:
        item = self._slots[position]
        assert item is not None, position
        return item

    def __len__(self) -> int:
        return len(self._where)

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

    def matching(self, query: Query) -> set[int]:
        """The items holding at least one keyword."""
        return {p for k in query.keywords for p in self._postings.get(k, ())}

    def relevances(self, query: Query) -> np.ndarray:
        """Each slot's relevance (``relevance``, computed from the postings): for the
        items a keyword or the role can make relevant, 0 for the others."""
        scores = np.zeros(len(self._alive))
        held: dict[int, int] = {}  # position -> keywords it holds
        further: dict[int, int] = {}  # position -> further occurrences of them
        for keyword in dict.fromkeys(query.keywords):
            for position in self._postings.get(keyword, ()):
                held[position] = held.get(position, 0) + 1
                further[position] = further.get(position, 0) + self.counts[position][keyword] - 1
        tagged, theirs = self._role_made(query)
        keywords = frozenset(query.keywords)
        for position in held.keys() | tagged | theirs:
            score = 0.3 * held.get(position, 0) + min(0.3, 0.1 * further.get(position, 0))
            if position in tagged:
                score += 0.2
            topic = self.at(position).topic
            if topic and not topic_stems(topic).isdisjoint(keywords):
                score += 0.2
            if position in theirs:
                score += OWN_ROLE
            scores[position] = min(1.0, score)
        return scores

    def _role_made(self, query: Query) -> tuple[set[int], set[int]]:
        """Items the role makes relevant without a keyword: those whose tags name it, and
        other agents' of that role (never every item of the asking agent)."""
        role = query.role.casefold().strip()
        if not role:
            return set(), set()
        tagged = {p for tag, ps in self._tagged.items() if role in tag for p in ps}
        theirs: set[int] = set()
        for (agent_role, agent), positions in self._roles.items():
            if agent != query.agent and role in agent_role:
                theirs |= positions
        return tagged, theirs

    def recencies(self, now: str, start: str | None = None) -> np.ndarray:
        """Each slot's recency at ``now``; an item with no time counts as ``start`` (the
        clock's start), or as ``now`` when that is unknown too."""
        today = clock_days(now) or 0.0
        undated = (clock_days(start) if start else None) or today
        days = np.where(self._undated, undated, self._days)
        return np.exp(-np.clip(today - days, 0.0, None) / E_FOLDING_DAYS)

    def bm25(self, query: Query, positions: Sequence[int]) -> np.ndarray:
        """BM25 of ``positions`` for the query's keywords, from the postings (a keyword's
        document frequency is its posting's size)."""
        scores = np.zeros(len(positions))
        if not positions or not query.keywords or not self._where:
            return scores
        at = {p: k for k, p in enumerate(positions)}
        documents = len(self._where)
        average = self._total / documents
        for keyword in dict.fromkeys(query.keywords):
            posting = self._postings.get(keyword)
            if not posting:
                continue
            idf = math.log((documents - len(posting) + 0.5) / (len(posting) + 0.5) + 1.0)
            for position in posting if len(posting) < len(at) else [p for p in at if p in posting]:
                k = at.get(position)
                if k is None:
                    continue
                tf = self.counts[position][keyword]
                norm = K1 * (1.0 - B + B * self._lengths[position] / average)
                scores[k] += idf * tf * (K1 + 1.0) / (tf + norm)
        return scores


def _discard(table: dict[_K, set[int]], key: _K, position: int) -> None:
    found = table[key]
    found.discard(position)
    if not found:
        del table[key]


def _resized(array: np.ndarray, size: int) -> np.ndarray:
    grown = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown
