"""How full a knowledge bank is, and what of it a consolidation prompt shows (pure).

``capacity`` measures the bank as the seed does (its JSON's characters / 4, in tokens)
against a capacity and puts it in a tier: GENEROUS under 30%, SELECTIVE from 30% and
HEAVY_CUT from 50% (an unknown capacity is GENEROUS). What it measures is what a
consolidation prompt shows of each entry (``shown_json``: type, content, tags), never
its history or access counts: the audit trail of UPDATEs does not make a bank "full".

``shown_entries`` picks the entries a prompt shows. The whole bank, in bank order, when
its lines fit the character budget and the reply may answer every one of them
(``max_entries``: the operations a reply may hold, less one per candidate); otherwise
mem0's pattern: each candidate against its few most similar entries (rapidfuzz's token
set ratio on content and tags), the candidates taking turns, whole lines only, so a bank
of thousands consolidates in a prompt of bounded size. The prompt says how many it left
out, and those are kept as they are.

``engine.memory.knowledge_ops`` re-exports all of this.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz, process, utils

from engine.memory.knowledge import Entry, cut_content
from engine.memory.knowledge_candidates import Candidate
from engine.memory.tokens import CHARACTERS, TokenCounter

Tier = Literal["GENEROUS", "SELECTIVE", "HEAVY_CUT"]
SELECTIVE_AT: Final = 30
"""Percent of the capacity from which the bank is SELECTIVE ..."""
HEAVY_CUT_AT: Final = 50
"""... and HEAVY_CUT."""
NEAREST: Final = 3
"""Entries shown per candidate when the whole bank cannot be."""


class Capacity(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: int
    """The bank's size: its JSON's characters / 4, rounded up."""
    percent: float | None
    """Of ``context_tokens``; None when the capacity is unknown."""
    tier: Tier
    context_tokens: int | None = None


def capacity(shown: str, context_tokens: int | None) -> Capacity:
    """The bank's size and tier; an unknown (or zero) capacity is GENEROUS."""
    tokens = -(-len(shown) // 4)  # ceil, in integers
    if context_tokens is None or context_tokens <= 0:
        return Capacity(tokens=tokens, percent=None, tier="GENEROUS")
    scaled = tokens * 100  # compared in integers: exactly 30% is SELECTIVE
    tier: Tier = (
        "GENEROUS"
        if scaled < SELECTIVE_AT * context_tokens
        else "SELECTIVE"
        if scaled < HEAVY_CUT_AT * context_tokens
        else "HEAVY_CUT"
    )
    return Capacity(tokens=tokens, percent=scaled / context_tokens, tier=tier,
                    context_tokens=context_tokens)  # fmt: skip


def shown_json(bank: Sequence[Entry]) -> str:
    """What ``capacity`` measures: the bank as a prompt shows it (type, content, tags)."""
    shown = [{"type": e.type, "content": e.content, "tags": e.tags} for e in bank]
    return json.dumps(shown, ensure_ascii=False)


def bank_digest(bank: Sequence[Entry]) -> str:
    """What a handbook was written from, in 16 hex digits: the entries' ids, types,
    contents and tags (not their uses), in order."""
    shown = [[e.id, e.type, e.content, e.tags] for e in bank]
    text = json.dumps(shown, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def entry_line(number: int, entry: Entry) -> str:
    """``- [3] (fact, 2 accesses) content [tags: a, b]``, on one line."""
    uses = "1 access" if entry.access_count == 1 else f"{entry.access_count} accesses"
    return f"- [{number}] ({entry.type}, {uses}) {_one_line(entry.content)}{_tag_list(entry.tags)}"


def candidate_line(index: int, candidate: Candidate) -> str:
    """``- [candidate 0] (mistake) content [tags: a, b]``, on one line."""
    content = cut_content(candidate.content)  # what is added is cut so too
    return f"- [candidate {index}] ({candidate.type}) {content}{_tag_list(candidate.tags)}"


def shown_entries(
    bank: Sequence[Entry],
    candidates: Sequence[Candidate],
    budget_chars: int,
    max_entries: int | None = None,
    counter: TokenCounter = CHARACTERS,
) -> tuple[list[tuple[int, Entry]], int]:
    """The entries a consolidation prompt shows, numbered 1.. in the order shown, and
    how many it leaves out (see the module): never more than ``max_entries`` (None: no
    limit), whole lines within ``budget_chars`` (as ``counter`` counts: characters, or
    the consolidator's tokens)."""
    length = len if counter is CHARACTERS else counter.count
    limit = len(bank) if max_entries is None else max(0, max_entries)
    sizes = [length(entry_line(k, e)) + 1 for k, e in enumerate(bank, 1)]
    if len(bank) <= limit and sum(sizes) <= budget_chars:
        return list(enumerate(bank, 1)), 0
    order = _nearest_first(bank, candidates)
    shown: list[tuple[int, Entry]] = []
    used = 0
    for i in order:
        if len(shown) >= limit:
            break
        size = length(entry_line(len(shown) + 1, bank[i])) + 1
        if used + size <= budget_chars:
            shown.append((len(shown) + 1, bank[i]))
            used += size
    return shown, len(bank) - len(shown)


def _nearest_first(bank: Sequence[Entry], candidates: Sequence[Candidate]) -> list[int]:
    """Bank positions in the order they are shown: each candidate's ``NEAREST`` most
    similar entries, the candidates taking turns; then every other entry, most like any
    candidate first (bank order among equals)."""
    if not bank:
        return []
    if not candidates:
        return list(range(len(bank)))
    mine = [_match_text(e.content, e.tags) for e in bank]
    theirs = [_match_text(c.content, c.tags) for c in candidates]
    scores = process.cdist(theirs, mine, scorer=fuzz.token_set_ratio,
                           processor=utils.default_process, dtype=np.float32)  # fmt: skip
    ranked = [np.argsort(-row, kind="stable") for row in scores]
    order: list[int] = []
    seen: set[int] = set()
    for rank in range(min(NEAREST, len(bank))):
        for row in ranked:
            i = int(row[rank])
            if i not in seen:
                seen.add(i)
                order.append(i)
    best = scores.max(axis=0)
    rest = [i for i in np.argsort(-best, kind="stable").tolist() if i not in seen]
    return order + rest


def _match_text(content: str, tags: Sequence[str]) -> str:
    return " ".join([content, *tags])


def _tag_list(tags: Sequence[str]) -> str:
    return f" [tags: {', '.join(tags)}]" if tags else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
