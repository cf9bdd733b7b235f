"""The retrieval index's data structure (``Postings``; ``engine.memory.retrieval_index``
chooses from it): an agent's items kept up to date item by item. ``put`` and ``remove``
cost one item's stems and postings, ``sync`` makes the items of some kinds exactly the
given ones by changing only those that differ.

Each word's posting (the slots holding it, with how often) is a dict, changed in place;
the first query that asks for a word after it changed reads it into two arrays (slots,
counts), kept until the word's posting changes again. So relevance is numpy operations
over the postings of the query's words, not a Python loop over the items that hold them
(with words as common as a village's, mill, bread, Tam, each in a tenth to a quarter of
the items, that loop was the cost of a selection); only postings of a few hundred slots
in all, a small index's, are read item by item (``FEW``: cheaper there).

Many new items at once (building an index, a source read for the first time) are added
in bulk (``BULK``): their postings made by sorting arrays of (word, slot) pairs, not a
dict insertion per word. It reads each slot's relevance (from the postings and the
role); ``Index`` reads recency, semantic similarity and BM25.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from itertools import chain, pairwise
from typing import Final, TypeVar

import numpy as np

from engine.memory.retrieval_scoring import (
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
PLACES: Final[tuple[Place, ...]] = ("fact", "hypothesis", "gap", "recent", "note", "past")
"""The places, by their codes (their index here) in the per-slot arrays; -1 is none."""
CODE: Final[dict[Place, int]] = {place: code for code, place in enumerate(PLACES)}
OTHER, NOTE, PAST = 0, 1, 2
"""An item's kind as the choosing tells them apart (``Postings._kinds``)."""
FEW: Final = 256
"""Postings of a query's words holding at most this many slots in all are read item by
item in Python (``_few``): cheaper than arrays for a small index."""
BULK: Final = 64
"""New items added together (``sync``, building) from this many: their postings made by
sorting arrays rather than item by item."""


class Postings:
    """An agent's items, with what scoring needs computed once per item (its stems, the
    day it is from, its class by its words); change it with ``put``, ``remove`` and
    ``sync``, query it every turn. Positions are slots: stable while an item stays."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        items = list(items)
        self._slots: list[Item | None] = []
        self._where: dict[str, int] = {}
        self._free: list[int] = []
        self._stems: list[tuple[str, ...]] = []
        """Each slot's stems (``item_terms``)."""
        self._postings: dict[str, dict[int, int]] = {}
        """Stem -> the slots holding it -> how often."""
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        """Stem -> its posting as arrays (slots, counts), while it is unchanged."""
        self._topical: dict[str, set[int]] = {}
        """Stem -> the slots whose topic holds it."""
        self._tagged: dict[str, set[int]] = {}
        self._roles: dict[tuple[str, str], set[int]] = {}
        """(agent role casefolded, agent) -> its items."""
        size = max(64, len(items))
        self._days = np.zeros(size)
        self._undated = np.zeros(size, dtype=bool)
        self._alive = np.zeros(size, dtype=bool)
        self._kinds = np.zeros(size, dtype=np.int8)
        """``OTHER`` (an entry or a skill: may be a recent finding without a keyword),
        ``NOTE`` or ``PAST``."""
        self._worded = np.full(size, -1, dtype=np.int8)
        """The code of an entry's or a skill's class by its words (``worded``), or -1."""
        self._lengths = np.zeros(size)
        self._total = 0.0
        self._vectors: np.ndarray | None = None
        self._embedded = np.zeros(size, dtype=bool)
        self.sync(items)

    # -- changes ---------------------------------------------------------------------------

    def put(self, item: Item) -> bool:
        """Add ``item``, or replace the item with its key; False when it was there as is."""
        position = self._where.get(item.key)
        if position is not None:
            if self._slots[position] == item:
                return False
            self._drop(position)
        position = self._free.pop() if self._free else self._grow()
        stems = self._place_item(item, position)
        postings = self._postings
        for term, count in Counter(stems).items():
            found = postings.get(term)
            if found is None:
                postings[term] = {position: count}
            else:
                found[position] = count
            self._arrays.pop(term, None)
        day, kind, place, length = _numbers(item, stems)
        self._days[position], self._undated[position] = day or 0.0, day is None
        self._kinds[position], self._worded[position] = kind, place
        self._lengths[position] = length
        self._alive[position], self._embedded[position] = True, False
        self._total += length
        return True

    def _place_item(self, item: Item, position: int) -> tuple[str, ...]:
        """``item`` in ``position``'s slot, by its key, topic, tags and role: its stems."""
        stems = item_terms(item)
        self._slots[position] = item
        self._where[item.key] = position
        self._stems[position] = stems
        for term in topic_stems(item.topic):
            self._topical.setdefault(term, set()).add(position)
        for tag in {t.casefold() for t in item.tags}:
            self._tagged.setdefault(tag, set()).add(position)
        self._roles.setdefault((item.agent_role.casefold(), item.agent), set()).add(position)
        return stems

    def _add_all(self, items: list[Item]) -> None:
        """Add ``items``, none of whose keys is here, their keys distinct: as ``put``
        would, each posting made at once from sorted arrays (see ``BULK``)."""
        positions = [self._free.pop() if self._free else self._grow() for _ in items]
        stems = [self._place_item(item, p) for item, p in zip(items, positions, strict=True)]
        at = np.asarray(positions, dtype=np.intp)
        days, kinds, places, lengths = zip(*map(_numbers, items, stems), strict=True)
        self._days[at] = [day or 0.0 for day in days]
        self._undated[at] = [day is None for day in days]
        self._kinds[at], self._worded[at], self._lengths[at] = kinds, places, lengths
        self._alive[at], self._embedded[at] = True, False
        self._total += float(sum(lengths))
        ids = _Numbering()
        numbered = list(map(ids.__getitem__, chain.from_iterable(stems)))
        if not numbered:
            return
        slots = len(self._alive)
        owners = np.repeat(at, [len(found) for found in stems])
        pairs, counts = np.unique(np.asarray(numbered, dtype=np.int64) * slots + owners,
                                  return_counts=True)  # fmt: skip
        terms, held = np.divmod(pairs, slots)
        bounds = [0, *(np.flatnonzero(np.diff(terms)) + 1).tolist(), len(terms)]
        names = list(ids)
        for start, end in pairwise(bounds):
            term = names[int(terms[start])]
            posting = zip(held[start:end].tolist(), counts[start:end].tolist(), strict=True)
            found = self._postings.get(term)
            if found is None:
                self._postings[term] = dict(posting)
            else:
                found.update(posting)
            self._arrays.pop(term, None)

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
        new: dict[str, Item] = {}  # items whose keys are not here yet, the last of each key
        for item in items:
            if item.key not in keep:
                continue
            if item.key in self._where:
                changed += self.put(item)
            else:
                changed += new.get(item.key) != item
                new[item.key] = item
        if len(new) >= BULK:
            self._add_all(list(new.values()))
        else:
            for item in new.values():
                self.put(item)
        return changed

    def _drop(self, position: int) -> None:
        item = self._slots[position]
        assert item is not None
        postings = self._postings
        for term in dict.fromkeys(self._stems[position]):
            found = postings[term]
            del found[position]
            if not found:
                del postings[term]
            self._arrays.pop(term, None)
        for term in topic_stems(item.topic):
            _discard(self._topical, term, position)
        for tag in {t.casefold() for t in item.tags}:
            _discard(self._tagged, tag, position)
        _discard(self._roles, (item.agent_role.casefold(), item.agent), position)
        del self._where[item.key]
        self._slots[position] = None
        self._stems[position] = ()
        self._alive[position] = False
        self._embedded[position] = False
        self._total -= self._lengths[position]
        self._free.append(position)

    def _grow(self) -> int:
        position = len(self._slots)
        self._slots.append(None)
        self._stems.append(())
        if position >= len(self._alive):
            size = max(64, 2 * len(self._alive))
            self._days = _resized(self._days, size)
            self._undated = _resized(self._undated, size)
            self._alive = _resized(self._alive, size)
            self._kinds = _resized(self._kinds, size)
            self._worded = _resized(self._worded, size, fill=-1)
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

    def counts(self, position: int) -> Counter[str]:
        """The stems of the item at ``position`` and how often each occurs."""
        return Counter(self._stems[position])

    def matching(self, query: Query) -> set[int]:
        """The items holding at least one keyword."""
        return {p for k in query.keywords for p in self._postings.get(k, ())}

    def holding(self, query: Query) -> np.ndarray:
        """Each slot: whether its item holds at least one keyword."""
        found = np.zeros(len(self._alive), dtype=bool)
        for keyword in dict.fromkeys(query.keywords):
            posting = self._posting(keyword)
            if posting is not None:
                found[posting[0]] = True
        return found

    def _posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``term``'s posting as arrays (slots, counts), read once after each change."""
        arrays = self._arrays.get(term)
        if arrays is None:
            found = self._postings.get(term)
            if not found:
                return None
            arrays = self._arrays[term] = (
                np.fromiter(found.keys(), dtype=np.intp, count=len(found)),
                np.fromiter(found.values(), dtype=np.int64, count=len(found)),
            )
        return arrays

    def relevances(self, query: Query) -> np.ndarray:
        """Each slot's relevance (``relevance``, computed from the postings, the same
        operations in the same order, so the same floats): for the items a keyword or the
        role can make relevant, 0 for the others."""
        size = len(self._alive)
        keywords = dict.fromkeys(query.keywords)
        postings = [posting for k in keywords if (posting := self._postings.get(k))]
        if sum(map(len, postings)) <= FEW:
            scores = _few(postings, size)
        else:
            found = [arrays for k in keywords if (arrays := self._posting(k)) is not None]
            positions = np.concatenate([positions for positions, _ in found])
            further = np.concatenate([counts for _, counts in found]) - 1
            # the keywords each slot holds, and the further occurrences of them
            scores = 0.3 * np.bincount(positions, minlength=size) + np.minimum(
                0.3, 0.1 * np.bincount(positions, weights=further, minlength=size)
            )
        topical = [self._topical[k] for k in keywords if k in self._topical]
        for bonus, where in ((0.2, self._tagged_with(query)), (0.2, _array(*topical)),
                             (OWN_ROLE, self._theirs(query))):  # fmt: skip
            if len(where):
                scores[where] += bonus  # only where the bonus is, as relevance adds it
        capped: np.ndarray = np.minimum(1.0, scores)
        return capped

    def _tagged_with(self, query: Query) -> np.ndarray:
        """Items the role makes relevant without a keyword: those whose tags name it."""
        role = query.role.casefold().strip()
        if not role:
            return _NOWHERE
        return _array(*(positions for tag, positions in self._tagged.items() if role in tag))

    def _theirs(self, query: Query) -> np.ndarray:
        """... and other agents' of that role (never every item of the asking agent)."""
        role = query.role.casefold().strip()
        if not role:
            return _NOWHERE
        return _array(*(positions for (agent_role, agent), positions in self._roles.items()
                        if agent != query.agent and role in agent_role))  # fmt: skip


def _few(postings: list[dict[int, int]], size: int) -> np.ndarray:
    """``relevances``' keyword part from a few postings, item by item in Python (the same
    operations on the same floats as the arrays')."""
    held: dict[int, int] = {}  # the keywords each slot holds
    further: dict[int, int] = {}  # further occurrences of them
    for posting in postings:
        for position, count in posting.items():
            held[position] = held.get(position, 0) + 1
            further[position] = further.get(position, 0) + count - 1
    scores = np.zeros(size)
    if held:
        scores[list(held)] = [0.3 * n + min(0.3, 0.1 * further[p]) for p, n in held.items()]
    return scores


class _Numbering(dict[str, int]):
    """Each key numbered as it first comes (0, 1, ...): looked up in C by ``map``."""

    def __missing__(self, key: str) -> int:
        number = self[key] = len(self)
        return number


def _numbers(item: Item, stems: tuple[str, ...]) -> tuple[float | None, int, int, int]:
    """What an item's slot holds in the arrays: its day (None: no time), its kind's
    code, its class by its words (an entry's or a skill's; -1: none), its length."""
    kind = NOTE if item.kind == "note" else PAST if item.kind == "past" else OTHER
    place = worded(item) if kind == OTHER else None
    return clock_days(item.sim), kind, -1 if place is None else CODE[place], max(1, len(stems))


def _array(*positions: set[int]) -> np.ndarray:
    """The slots in ``positions`` (each once), as an array."""
    if not positions:
        return _NOWHERE
    found = positions[0] if len(positions) == 1 else set().union(*positions)
    return np.fromiter(found, dtype=np.intp, count=len(found))


_NOWHERE: Final = np.zeros(0, dtype=np.intp)


def _discard(table: dict[_K, set[int]], key: _K, position: int) -> None:
    found = table[key]
    found.discard(position)
    if not found:
        del table[key]


def _resized(array: np.ndarray, size: int, fill: int = 0) -> np.ndarray:
    grown = np.full((size, *array.shape[1:]), fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown
