"""Summaries made without a model: the deterministic fallback of the waterfall (pure).

When the summarizer's replies keep failing the quality gate, the compactor commits an
*extractive* summary instead, so a weak model slows memory down but never stops it:

- ``extractive_summary(memories, budget)``: the chunk's most informative memories,
  each on one line and cut to a share of the budget, in the order they happened;
- ``extractive_merge(longterm, recent, budget, recent_memories)``: the long-term and the short-term
  summaries folded into one, the recent one first served (two thirds of the budget at
  least, as the merge prompt asks "the recent ones in more detail"), then the older one
  in what is left, older first in the text;
- ``extractive_compress(text, budget)``: a summary the model wrote too long, cut to its
  most informative sentences.

A memory (or a sentence) is informative by the words it has that the others lack: its
score is the sum, over its distinct content words, of 1 / (the number of pieces that
word appears in), summed exactly (``math.fsum``: no result depends on the order a
set of words comes in, which string hashing sets per process). Ties go to the earlier
piece. Exact repeats are kept once. The
result is never longer than ``budget`` characters and never empty.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Final

from engine.memory.wording import STOPWORDS, sentences, words

NOTHING: Final = "Nothing stood out."
"""The summary of a chunk with no text at all (a summary is never empty)."""
ELLIPSIS: Final = "…"
MIN_PIECE: Final = 40
"""A piece is cut to no less than this many characters (when the budget allows)."""
PIECES_AT_LEAST: Final = 3
"""Each piece is cut to at most 1/3 of the budget, so at least three fit."""


def extractive_summary(memories: Sequence[str], budget: int) -> str:
    """The most informative of ``memories`` within ``budget`` characters, one line
    each, oldest first."""
    pieces = _distinct(_one_line(memory) for memory in memories)
    chosen = _distinct(_select(pieces, budget, cap=_piece_cap(budget)))  # two cut alike
    return "\n".join(chosen) if chosen else _fit(NOTHING, budget)


def extractive_merge(
    longterm: str, recent: str, budget: int, recent_memories: Sequence[str] = ()
) -> str:
    """``longterm`` and ``recent`` as one summary within ``budget`` characters: the
    recent summary's best sentences first served, the older one's in what is left. It
    keeps both: a sentence of the older summary with a word neither the recent one nor
    its memories (``recent_memories``) have, and one of the recent summary with a word
    the older lacks, whenever there are such sentences."""
    older = _distinct(_one_line(s) for s in sentences(longterm))
    newer = _distinct(_one_line(s) for s in sentences(recent) if _one_line(s) not in older)
    old_words = set().union(*map(_content_words, older))
    new_words = _content_words(recent)
    old_only = old_words - new_words - set().union(*map(_content_words, recent_memories))
    cap = _piece_cap(budget)
    older_share = min(budget // 3, _length(older))
    picked_newer = _select(newer, budget - older_share, cap=cap, scored_with=older + newer,
                           holding=new_words - old_words)  # fmt: skip
    left = budget - _length(picked_newer) - (1 if picked_newer else 0)
    picked_older = _select(older, left, cap=cap, scored_with=older + newer, holding=old_only)
    chosen = picked_older + picked_newer
    return "\n".join(chosen) if chosen else _fit(NOTHING, budget)


def extractive_compress(text: str, budget: int) -> str:
    """``text`` (a summary the model wrote too long) within ``budget`` characters: its
    most informative sentences, in their order."""
    pieces = _distinct(_one_line(s) for s in sentences(text))
    chosen = _select(pieces, budget, cap=_piece_cap(budget))
    return " ".join(chosen) if chosen else _fit(_one_line(text) or NOTHING, budget)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _distinct(pieces: Iterable[str]) -> list[str]:
    """Non-empty pieces, each kept once (compared without case), in order."""
    seen: set[str] = set()
    kept = []
    for piece in pieces:
        key = piece.lower()
        if piece and key not in seen:
            seen.add(key)
            kept.append(piece)
    return kept


@lru_cache(maxsize=8192)
def _content_words(piece: str) -> frozenset[str]:
    """``piece``'s content words (cached: a selection asks for each piece's often)."""
    return frozenset(w for w in words(piece) if len(w) > 2 and w not in STOPWORDS)


def _select(
    pieces: list[str], budget: int, *, cap: int, scored_with: list[str] | None = None,
    holding: AbstractSet[str] = frozenset(),
) -> list[str]:  # fmt: skip
    """Pieces by score (best first, ties: earlier; the best one with a word of
    ``holding``, if any, before all), each cut to ``cap``, while they fit in ``budget``
    with a newline between two; returned in their original order. A score is summed
    exactly (``math.fsum``), so it is the same whatever order a process's string hashing
    gives a set of words."""
    if budget <= 0 or not pieces:
        return []
    frequency = Counter(w for piece in scored_with or pieces for w in _content_words(piece))

    def score(piece: str) -> float:
        return math.fsum(1 / frequency[w] for w in _content_words(piece) if frequency[w])

    ranked = sorted(range(len(pieces)), key=lambda i: (-score(pieces[i]), i))
    holder = next((i for i in ranked if _content_words(pieces[i]) & holding), None)
    if holder is not None:
        ranked.remove(holder)
        ranked.insert(0, holder)
    chosen: dict[int, str] = {}
    used = 0
    for index in ranked:
        room = budget - used - (1 if chosen else 0)
        if room < min(MIN_PIECE, budget):
            break
        piece = _fit(pieces[index], min(cap, room))
        if index == holder and not _content_words(piece) & holding:
            piece = _fit_around(pieces[index], min(cap, room), holding)
        if piece:
            chosen[index] = piece
            used += len(piece) + (1 if len(chosen) > 1 else 0)
    return [chosen[i] for i in sorted(chosen)]


def _fit_around(piece: str, limit: int, wanted: AbstractSet[str]) -> str:
    """``piece`` cut to ``limit`` characters so that it keeps a word of ``wanted``: from
    an ellipsis before that word's clause on (``_fit`` keeps only its start)."""
    found = [w for w in words(piece) if w in wanted]
    if not found:
        return _fit(piece, limit)
    at = piece.lower().find(found[0])
    start = max(0, piece.rfind(" ", 0, max(0, at - limit // 3)) + 1)
    return _fit(ELLIPSIS + piece[start:], limit) if start else _fit(piece, limit)


def _piece_cap(budget: int) -> int:
    return max(min(MIN_PIECE, budget), budget // PIECES_AT_LEAST)


def _fit(piece: str, limit: int) -> str:
    """``piece`` whole when it fits in ``limit`` characters, else cut at a word
    boundary (or mid-word if it must) and ended with an ellipsis."""
    if len(piece) <= limit:
        return piece
    if limit <= len(ELLIPSIS):
        return piece[:limit].rstrip()
    head = piece[: limit - len(ELLIPSIS)]
    cut = head.rsplit(" ", 1)[0] if " " in head[1:] else head
    return (cut.rstrip(" ,;:-") or cut) + ELLIPSIS


def _length(pieces: list[str]) -> int:
    return sum(len(p) for p in pieces) + max(0, len(pieces) - 1)
