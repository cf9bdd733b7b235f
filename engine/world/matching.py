"""Matching what a user typed against names (pure, no I/O).

Tiers, best first: exact (case-insensitive), exact without a leading article, prefix,
then word prefix ("cop" finds "The Copper Hall"). Only the best tier that matches
anything counts, so a longer exact name never loses to a prefix. Several matches in
that tier is an ambiguity the caller must report, never a guess. Both sides are taken in
NFKC (``Ｚｏë`` typed finds a ``Zoë`` a world file wrote decomposed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from engine.world.unicode_names import normalized

T = TypeVar("T")

_ARTICLES = ("the ", "a ", "an ")


def strip_article(text: str) -> str:
    lowered = normalized(text).strip().lower()
    for article in _ARTICLES:
        if lowered.startswith(article):
            return lowered[len(article) :].strip()
    return lowered


def match(query: str, candidates: Iterable[tuple[Sequence[str], T]]) -> list[T]:
    """Return the items whose names best match ``query`` (empty: none; >1: ambiguous).

    ``candidates`` pairs each item with the names it answers to (name, id, aliases).
    """
    wanted = normalized(query).strip().lower()
    if not wanted:
        return []
    bare = strip_article(wanted)
    tiers: list[list[T]] = [[], [], [], []]
    for names, item in candidates:
        tier = _best_tier(wanted, bare, names)
        if tier is not None and item not in tiers[tier]:
            tiers[tier].append(item)
    for found in tiers:
        if found:
            return found
    return []


def _best_tier(wanted: str, bare: str, names: Sequence[str]) -> int | None:
    best: int | None = None
    for raw in names:
        name = normalized(raw).lower()
        plain = strip_article(name)
        if wanted == name:
            return 0
        if bare == plain:
            best = 1
        elif best is None or best > 2:
            if plain.startswith(bare) or name.startswith(wanted):
                best = 2
            elif best is None and any(word.startswith(bare) for word in plain.split()):
                best = 3
    return best
