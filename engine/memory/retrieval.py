"""What an agent brings to mind (seed 003), pure: items scored by relevance to where it
stands and by recency in world time, classified, deduplicated and fitted to a budget.

An ``Item`` is one thing an agent could remember: a knowledge-bank entry, a note, a
handbook skill, or a past short-term summary ("past experiences"). A ``Query`` is the
situation: its keywords (``situation_keywords``: the room, who is here, what was said
to the agent, its own last commands, its goal, its role and tags), the world clock's
reading, the agent's role.

- **Relevance** (``relevance``), capped at 1.0: +0.3 for each keyword the item holds,
  +0.1 for each further occurrence of any of them (at most +0.3 in all), +0.2 when one
  of its tags contains the role, +0.2 when its topic (a note's title, a skill's name,
  the rooms of a past summary, an entry's first tag) matches a keyword, +0.1 when the
  agent it came from has the role. Words match by a light stem (``stem``: "caching" and
  "cache" are one word), in any script.
- **Recency** ``exp(-age_days / 7)``, the age in world-clock days. 7 days is the
  e-folding time (a 4.9-day half-life; the seed calls it a half-life): 1.0 now, 0.37 a
  week ago, 0.14 two weeks ago, 0.01 a month ago. An item with no time counts as the
  clock's start.
- **Semantic** (when an embedding model is configured): an item's relevance is the
  higher of its keyword relevance and the cosine similarity of its embedding with the
  situation's (``Index.set_vectors``, ``select(..., semantic=...)``).
- **Combined** ``0.7 relevance + 0.3 recency`` (``0.4 / 0.6`` when the agent
  prioritizes recent things); BM25 over the same items breaks ties.
- **Classes** (``classify``): proven facts, hypotheses and known gaps by their words
  ("unclear" is a gap), else by relevance (> 0.7 fact, > 0.4 hypothesis, else left
  out); an entry's type wins over its words (a mistake, a procedure or a skill is a
  fact about how to act). Notes and past summaries have sections of their own. An item
  from the last 24 world hours that no section took is a recent finding.
- **Selection** (``Index.select``): every eligible item (a place it may go, not
  excluded) by combined score, best first, no shortlist before; an item more than 80%
  like one already chosen (rapidfuzz) is left out, the first kept, and so is one whose
  every sentence is more than 80% like a sentence already shown; an item with
  something new shows without its sentences that repeat (a fact shows once, whether
  it is kept as memories, a note, an entry or a past summary); each item goes in one
  place only; items are added until the next would pass the token budget.
- **The index** (``Index``, ``engine.memory.retrieval_index``) is changed item by item
  (``put``, ``remove``, ``sync``): a changed item costs its own update, not a rebuild.
  Relevance, eligibility and BM25 are array operations over the postings of the
  query's words; only the best items are put in order (``Index._ranked``).

``render`` gives the prompt's lines (seed 003's ``## Prior Knowledge Summary``, then
the notes and past experiences), each section left out when empty; ``scores=True``
adds each item's scores and class (``@impersonate``, the TUI's prompt view).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.memory.retrieval_index import Index
from engine.memory.retrieval_scoring import (
    CHARS_PER_TOKEN,
    DUPLICATE,
    E_FOLDING_DAYS,
    HEADINGS,
    KEYWORDS_MAX,
    KNOWLEDGE_PLACES,
    OWN_PLACES,
    RECENT_HOURS,
    RELATED_HEADING,
    SUMMARY_HEADING,
    Chosen,
    Item,
    ItemKind,
    Place,
    Query,
    Selection,
    classify,
    clock_days,
    combined,
    estimate,
    line,
    recency,
    relevance,
    situation_keywords,
    terms,
)
from engine.memory.wording import STOPWORDS, stem

__all__ = [
    "CHARS_PER_TOKEN", "DUPLICATE", "E_FOLDING_DAYS", "HEADINGS", "KEYWORDS_MAX",
    "RECENT_HOURS", "RELATED_HEADING", "STOPWORDS", "SUMMARY_HEADING", "Chosen", "Index",
    "Item", "ItemKind", "Place", "Query", "Selection", "TokenRate", "classify",
    "clock_days", "combined", "estimate", "line", "recency", "related_agents", "relevance",
    "render", "situation_keywords", "stem", "terms",
]  # fmt: skip


@dataclass
class TokenRate:
    """Characters per token of the model in use, learned from what its server counted
    (a moving average over the prompts sent); ``CHARS_PER_TOKEN`` until then."""

    chars_per_token: float = CHARS_PER_TOKEN
    seen: int = 0

    def observe(self, chars: int, tokens: int) -> None:
        if chars <= 0 or tokens <= 0:
            return
        rate = chars / tokens
        self.seen += 1
        weight = max(0.05, 1.0 / self.seen)  # the first ones count fully, then an average
        self.chars_per_token += weight * (rate - self.chars_per_token)

    def tokens(self, text: str) -> int:
        return max(1, math.ceil(len(text) / self.chars_per_token))


def related_agents(
    query: Query, others: Mapping[str, Index], threshold: float = 0.3,
    kinds: Iterable[ItemKind] = ("entry", "note", "skill", "past"),
) -> list[str]:  # fmt: skip
    """Other agents whose items (of ``kinds``) match the query, by relevance at least
    ``threshold``, most relevant first (ties by name)."""
    wanted = set(kinds)
    best: dict[str, float] = {}
    for name, index in others.items():
        if not index:  # no items: nothing to match (most agents' banks, early on)
            continue
        positions = [p for p in index.matching(query) if index.at(p).kind in wanted]
        top = max((relevance(index.counts(p), index.at(p), query) for p in positions),
                  default=0.0)  # fmt: skip
        if top >= threshold:
            best[name] = top
    return sorted(best, key=lambda name: (-best[name], name))


def render(selection: Selection, *, scores: bool = False) -> list[str]:
    """The prompt's lines for ``selection``: ``## Prior Knowledge Summary`` with its
    sections (seed 003's order), then the notes and the past experiences; a section with
    nothing in it is left out. ``scores``: each item line ends with its scores."""
    lines: list[str] = []
    if not selection.chosen and not selection.related_agents:
        return lines

    def shown(chosen: Chosen) -> str:
        text = chosen.line()
        return f"{text}  [{chosen.scores()}]" if scores else text

    by_place: dict[Place, list[Chosen]] = {}
    for chosen in selection.chosen:
        by_place.setdefault(chosen.place, []).append(chosen)
    knowledge = [p for p in KNOWLEDGE_PLACES if p in by_place]
    if knowledge or selection.related_agents:
        lines.append(SUMMARY_HEADING)
        for place in knowledge:
            lines += [HEADINGS[place], *map(shown, by_place[place])]
        if selection.related_agents:
            names = ", ".join(selection.related_agents)
            lines += [RELATED_HEADING, f"Agents who know about this: {names}"]
    for place in OWN_PLACES:
        if place in by_place:
            lines += [HEADINGS[place], *map(shown, by_place[place])]
    return lines
