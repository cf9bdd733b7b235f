"""How full a knowledge bank is, and what of it a consolidation prompt shows (pure).

``capacity`` measures the bank as the seed does (its JSON's characters / 4, in tokens)
against a capacity and puts it in a tier: GENEROUS under 30%, SELECTIVE from 30% and
HEAVY_CUT from 50% (an unknown capacity is GENEROUS). ``shown_entries`` picks the
entries a prompt shows when the whole bank would not fit in its character budget: those
most like the candidates (rapidfuzz's token set ratio on content and tags), whole
lines only; the prompt says how many it left out, and those are kept as they are.

``engine.memory.knowledge_ops`` re-exports all of this.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz, utils

from engine.memory.knowledge import Entry
from engine.memory.knowledge_candidates import Candidate

Tier = Literal["GENEROUS", "SELECTIVE", "HEAVY_CUT"]
SELECTIVE_AT: Final = 30
"""Percent of the capacity from which the bank is SELECTIVE ..."""
HEAVY_CUT_AT: Final = 50
"""... and HEAVY_CUT."""


class Capacity(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens: int
    """The bank's size: its JSON's characters / 4, rounded up."""
    percent: float | None
    """Of ``context_tokens``; None when the capacity is unknown."""
    tier: Tier
    context_tokens: int | None = None


def capacity(bank_json: str, context_tokens: int | None) -> Capacity:
    """The bank's size and tier; an unknown (or zero) capacity is GENEROUS."""
    tokens = -(-len(bank_json) // 4)  # ceil, in integers
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


def entry_line(number: int, entry: Entry) -> str:
    """``- [3] (fact, 2 accesses) content [tags: a, b]``, on one line."""
    uses = "1 access" if entry.access_count == 1 else f"{entry.access_count} accesses"
    return f"- [{number}] ({entry.type}, {uses}) {_one_line(entry.content)}{_tag_list(entry.tags)}"


def candidate_line(index: int, candidate: Candidate) -> str:
    """``- [candidate 0] (mistake) content [tags: a, b]``, on one line."""
    return f"- [candidate {index}] ({candidate.type}) {_one_line(candidate.content)}{_tag_list(candidate.tags)}"


def shown_entries(
    bank: Sequence[Entry], candidates: Sequence[Candidate], budget_chars: int
) -> tuple[list[tuple[int, Entry]], int]:
    """The entries a consolidation prompt shows, numbered 1.. in the order shown, and
    how many it leaves out. All of them, in bank order, when their lines fit in
    ``budget_chars``; otherwise those most like a candidate first, as many whole lines
    as fit."""
    if sum(len(entry_line(k, e)) + 1 for k, e in enumerate(bank, 1)) <= budget_chars:
        return list(enumerate(bank, 1)), 0
    texts = [_match_text(c.content, c.tags) for c in candidates]

    def likeness(entry: Entry) -> float:
        mine = _match_text(entry.content, entry.tags)
        return max((fuzz.token_set_ratio(mine, text, processor=utils.default_process)
                    for text in texts), default=0.0)  # fmt: skip

    scores = [likeness(entry) for entry in bank]
    order = sorted(range(len(bank)), key=lambda i: (-scores[i], i))
    shown: list[tuple[int, Entry]] = []
    used = 0
    for i in order:
        size = len(entry_line(len(shown) + 1, bank[i])) + 1
        if used + size <= budget_chars:
            shown.append((len(shown) + 1, bank[i]))
            used += size
    return shown, len(bank) - len(shown)


def _match_text(content: str, tags: Sequence[str]) -> str:
    return " ".join([content, *tags])


def _tag_list(tags: Sequence[str]) -> str:
    return f" [tags: {', '.join(tags)}]" if tags else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
