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
  prioritizes recent things); BM25 over the same items (rank_bm25) breaks ties.
- **Classes** (``classify``): proven facts, hypotheses and known gaps by their words
  ("unclear" is a gap), else by relevance (> 0.7 fact, > 0.4 hypothesis, else left
  out); an entry's type wins over its words (a mistake, a procedure or a skill is a
  fact about how to act). Notes and past summaries have sections of their own. An item
  from the last 24 world hours that no section took is a recent finding.
- **Selection** (``Index.select``): by combined score, best first; an item more than
  80% like one already chosen (rapidfuzz) is left out, the first kept; each item goes
  in one place only; items are added until the next would pass the token budget.

``render`` gives the prompt's lines (seed 003's ``## Prior Knowledge Summary``, then
the notes and past experiences), each section left out when empty; ``scores=True``
adds each item's scores and class (``@impersonate``, the TUI's prompt view).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Final, Literal

import numpy as np
from rank_bm25 import BM25Okapi
from rapidfuzz import fuzz

from engine.memory.knowledge import KnowledgeType

E_FOLDING_DAYS: Final = 7.0
"""Recency is ``exp(-age_days / 7)``: 7 days is its e-folding time (about 4.9 days to halve)."""
RECENT_HOURS: Final = 24
DUPLICATE: Final = 80.0
"""rapidfuzz similarity (0-100) above which an item repeats one already chosen."""
KEYWORDS_MAX: Final = 24
SHORTLIST: Final = 256
"""Items taken in score order before the budget: enough for any budget of a few
thousand tokens, few enough that deduplication and BM25 stay cheap at 10,000 items."""
CHARS_PER_TOKEN: Final = 4.0

ItemKind = Literal["entry", "note", "skill", "past"]
Place = Literal["fact", "hypothesis", "gap", "recent", "note", "past"]

FACT_WORDS: Final = ("verified", "confirmed", "measured", "proven", "test passed", "validated")
HYPOTHESIS_WORDS: Final = ("might", "possibly", "could", "maybe", "uncertain")
GAP_WORDS: Final = ("unknown", "unclear", "need to investigate", "todo", "gap")
HOW_TO_ACT: Final[frozenset[KnowledgeType]] = frozenset({"mistake", "procedure", "skill"})

HEADINGS: Final[dict[Place, str]] = {
    "fact": "### Proven Facts (Verified)",
    "hypothesis": "### Working Hypotheses (Unconfirmed)",
    "gap": "### Known Knowledge Gaps",
    "recent": "### Recent Findings (Last 24 Hours)",
    "note": "## Relevant private notes",
    "past": "## Related past experiences",
}
SUMMARY_HEADING: Final = "## Prior Knowledge Summary"
RELATED_HEADING: Final = "### Related Agents"
_KNOWLEDGE_PLACES: Final[tuple[Place, ...]] = ("fact", "hypothesis", "gap", "recent")
_OWN_PLACES: Final[tuple[Place, ...]] = ("note", "past")

# fmt: off
STOPWORDS: Final = frozenset((
    "the", "and", "for", "with", "from", "into", "this", "that", "there", "here", "your",
    "you", "are", "was", "were", "has", "have", "had", "not", "but", "its", "his", "her",
    "their", "them", "they", "she", "him", "who", "what", "when", "where", "which", "then",
    "than", "also", "just", "very", "some", "any", "all", "out", "off", "over", "under",
    "about", "again", "once", "only", "own", "same", "too", "can", "will", "would",
    "should", "could", "might", "must", "does", "did", "doing", "done", "been", "being",
    "our", "ours",
))
# fmt: on
_WORD: Final = re.compile(r"[^\W_]+")
_SUFFIXES: Final = ("ing", "ed", "es", "ly", "s", "e")


# --- words ---------------------------------------------------------------------------


def stem(word: str) -> str:
    """A light stem: the word lowercased, one common English ending off a word of five
    letters or more ("caching" and "cache" -> "cach"; "apples" -> "apple")."""
    word = word.casefold()
    if len(word) >= 5:
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


@lru_cache(maxsize=8192)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _WORD.findall(text.casefold())
                 if len(w) > 1 and w not in STOPWORDS)  # fmt: skip


def terms(text: str) -> list[str]:
    """The stems of ``text``'s words of two letters or more, stopwords left out (cached:
    a room's name and description come back every turn)."""
    return list(_terms(text))


def situation_keywords(*texts: str, limit: int = KEYWORDS_MAX) -> tuple[str, ...]:
    """The distinct stems of ``texts`` (three letters or more), in order, at most ``limit``:
    pass the room's name and description, who is here, what was last said to the agent,
    its own last commands, its goal, its role and its tags, most telling first."""
    found = dict.fromkeys(t for text in texts for t in terms(text) if len(t) > 2)
    return tuple(found)[:limit]


# --- items and scores ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Item:
    key: str
    """Unique among an agent's items (``entry:ltm-3-ab12cd``, ``note:Well`` ...)."""
    kind: ItemKind
    text: str
    origin: str
    """Where it came from, as a person reads it: ``knowledge ltm-3-ab12cd (fact)``,
    ``note 'Well'``, ``skill fetch-water``, ``summary of memories #64-#79``."""
    tags: tuple[str, ...] = ()
    topic: str = ""
    sim: str | None = None
    """When it was made or last changed, on the world clock (``2026-01-01T08:00``)."""
    agent: str = ""
    """Whose it is."""
    agent_role: str = ""
    entry_type: KnowledgeType | None = None


@dataclass(frozen=True)
class Query:
    keywords: tuple[str, ...]
    now: str
    """The world clock's reading."""
    role: str = ""
    prioritize_recent: bool = False


@dataclass(frozen=True, slots=True)
class Chosen:
    item: Item
    relevance: float
    recency: float
    score: float
    place: Place
    semantic: float | None = None
    """The cosine similarity with the situation, when the item had an embedding."""

    def scores(self) -> str:
        sem = f", sem {self.semantic:.2f}" if self.semantic is not None else ""
        return (f"rel {self.relevance:.2f}{sem}, rec {self.recency:.2f}, "
                f"score {self.score:.2f}, {self.place}")  # fmt: skip


@dataclass(frozen=True)
class Selection:
    chosen: list[Chosen] = field(default_factory=list)
    related_agents: list[str] = field(default_factory=list)
    tokens: int = 0
    """What the chosen lines cost, by the estimate the budget used."""

    def items(self, place: Place) -> list[Chosen]:
        return [c for c in self.chosen if c.place == place]


def relevance(counts: Mapping[str, int], item: Item, query: Query) -> float:
    """The seed's relevance of an item whose stems are ``counts`` (see the module)."""
    matched = [counts[k] for k in query.keywords if counts.get(k)]
    score = 0.3 * len(matched) + min(0.3, 0.1 * sum(n - 1 for n in matched))
    role = query.role.casefold().strip()
    if role and any(role in tag.casefold() for tag in item.tags):
        score += 0.2
    if item.topic and set(terms(item.topic)) & set(query.keywords):
        score += 0.2
    if role and role in item.agent_role.casefold():
        score += 0.1
    return min(1.0, score)


def clock_days(reading: str | None) -> float | None:
    """A world-clock reading as days since 0001-01-01 (None for no or a bad reading)."""
    if not reading:
        return None
    try:
        moment = datetime.fromisoformat(reading.strip().replace("Z", ""))
    except ValueError:
        return None
    return moment.toordinal() + (moment.hour * 60 + moment.minute) / 1440.0


def recency(age_days: float) -> float:
    """``exp(-age_days / 7)``; an age below 0 (an item from the clock's future) is 0."""
    return math.exp(-max(0.0, age_days) / E_FOLDING_DAYS)


def combined(relevance: float, recency: float, prioritize_recent: bool = False) -> float:
    weight = 0.4 if prioritize_recent else 0.7
    return weight * relevance + (1.0 - weight) * recency


def _says(text: str, words: Iterable[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text) for w in words)


def classify(text: str, entry_type: KnowledgeType | None, relevance: float) -> Place | None:
    """Proven fact, hypothesis or known gap (None: left out; see the module)."""
    if entry_type in HOW_TO_ACT:
        return "fact"
    lowered = text.casefold()
    if _says(lowered, FACT_WORDS):
        return "fact"
    if _says(lowered, GAP_WORDS):
        return "gap"
    if _says(lowered, HYPOTHESIS_WORDS):
        return "hypothesis"
    if relevance > 0.7:
        return "fact"
    if relevance > 0.4:
        return "hypothesis"
    return None


LINE_CHARS: Final = 320
"""An item's text as a line shows it, at most (a past summary can be long)."""


def line(item: Item) -> str:
    """An item as the prompt shows it (its text cut at a word past ``LINE_CHARS``)."""
    text = " ".join(item.text.split())
    if len(text) > LINE_CHARS:
        text = text[:LINE_CHARS].rsplit(" ", 1)[0] + "…"
    if item.kind == "note":
        return f"- {item.topic}: {text}" if item.topic else f"- {text}"
    if item.kind == "past" and item.sim:
        return f"- ({item.sim[:10]}) {text}"
    return f"- {text}"


def estimate(text: str) -> int:
    """chars / 4, rounded up: a token estimate when the model's is not known."""
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


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


# --- the index ------------------------------------------------------------------------


class Index:
    """An agent's items, with what scoring needs computed once (their stems, BM25, the
    days they are from): build one when the items change, query it every turn."""

    def __init__(self, items: Sequence[Item]) -> None:
        self.items = list(items)
        self._stems = [terms(" ".join([i.text, i.topic, *i.tags])) for i in self.items]
        self.counts = [Counter(s) for s in self._stems]
        self._postings: dict[str, list[int]] = {}
        for position, counts in enumerate(self.counts):
            for term in counts:
                self._postings.setdefault(term, []).append(position)
        self._days = np.array([clock_days(i.sim) or 0.0 for i in self.items], dtype=float)
        self._undated = np.array([clock_days(i.sim) is None for i in self.items], dtype=bool)
        self._bm25: BM25Okapi | None = None
        self._vectors: np.ndarray | None = None
        self._embedded = np.zeros(len(self.items), dtype=bool)

    def set_vectors(self, vectors: Sequence[Sequence[float] | None]) -> None:
        """Each item's embedding (None: not embedded yet), in the items' order."""
        known = [v for v in vectors if v is not None]
        if not known:
            return
        matrix = np.zeros((len(self.items), len(known[0])))
        for position, vector in enumerate(vectors):
            if vector is not None and len(vector) == matrix.shape[1]:
                matrix[position] = vector
                self._embedded[position] = True
        norms = np.linalg.norm(matrix, axis=1)
        self._vectors = matrix / np.where(norms > 0, norms, 1.0)[:, None]

    @property
    def embedded(self) -> int:
        """How many items have an embedding."""
        return int(self._embedded.sum())

    def similarities(self, vector: Sequence[float] | None) -> np.ndarray | None:
        """Each item's cosine similarity with ``vector`` (NaN where it has no embedding);
        None when there is nothing to compare."""
        if vector is None or self._vectors is None or len(vector) != self._vectors.shape[1]:
            return None
        query = np.asarray(vector, dtype=float)
        norm = np.linalg.norm(query)
        if norm == 0:
            return None
        scores = self._vectors @ (query / norm)
        return np.where(self._embedded, np.clip(scores, 0.0, 1.0), np.nan)

    def __len__(self) -> int:
        return len(self.items)

    def matching(self, query: Query) -> set[int]:
        """The items holding at least one keyword."""
        return {p for k in query.keywords for p in self._postings.get(k, ())}

    def relevances(self, query: Query) -> np.ndarray:
        scores = np.zeros(len(self.items))
        for position in self.matching(query) | self._extra(query):
            scores[position] = relevance(self.counts[position], self.items[position], query)
        return scores

    def _extra(self, query: Query) -> set[int]:
        """Items the role can make relevant without a keyword (their tags, their agent)."""
        role = query.role.casefold().strip()
        if not role:
            return set()
        return {p for p, i in enumerate(self.items)
                if role in i.agent_role.casefold() or any(role in t.casefold() for t in i.tags)}  # fmt: skip

    def recencies(self, now: str, start: str | None = None) -> np.ndarray:
        """Each item's recency at ``now``; an item with no time counts as ``start`` (the
        clock's start), or as ``now`` when that is unknown too."""
        today = clock_days(now) or 0.0
        days = self._days.copy()
        days[self._undated] = clock_days(start) if start else today
        return np.exp(-np.clip(today - days, 0.0, None) / E_FOLDING_DAYS)

    def bm25(self, query: Query, positions: list[int]) -> np.ndarray:
        if not positions or not query.keywords:
            return np.zeros(len(positions))
        if self._bm25 is None:
            self._bm25 = BM25Okapi([s or ["\x00"] for s in self._stems])
        return np.asarray(self._bm25.get_batch_scores(list(query.keywords), positions))

    def select(
        self,
        query: Query,
        budget_tokens: int,
        *,
        tokens: Callable[[str], int] = estimate,
        start: str | None = None,
        exclude: Iterable[str] = (),
        places: Iterable[Place] = ("fact", "hypothesis", "gap", "recent", "note", "past"),
        caps: Mapping[Place, int] | None = None,
        semantic: Sequence[float] | None = None,
    ) -> Selection:
        """The items to show for ``query`` within ``budget_tokens`` (see the module).
        ``exclude``: item keys already shown elsewhere; ``places``: where items may go;
        ``caps``: the most tokens of the budget a place may take (an item past its
        place's cap is passed over, the next may still fit); ``semantic``: the
        situation's embedding."""
        if not self.items or budget_tokens <= 0:
            return Selection()
        wanted, skip = set(places), set(exclude)
        rel, sem = self._hybrid(query, semantic)
        rec = self.recencies(query.now, start)
        weight = 0.4 if query.prioritize_recent else 0.7
        score = weight * rel + (1.0 - weight) * rec
        count = min(SHORTLIST, len(self.items))
        short = np.argpartition(-score, count - 1)[:count] if count < len(self.items) \
            else np.arange(len(self.items))  # fmt: skip
        shortlist = [int(p) for p in short]
        ties = self.bm25(query, shortlist)
        order = sorted(range(len(shortlist)), key=lambda k: (-score[shortlist[k]], -ties[k]))
        today = clock_days(query.now) or 0.0
        chosen: list[Chosen] = []
        texts: list[str] = []
        used = 0
        opened: set[str] = set()
        spent: dict[Place, int] = {}
        for k in order:
            position = shortlist[k]
            item = self.items[position]
            if item.key in skip:
                continue
            place = _place(item, float(rel[position]), today)
            if place is None or place not in wanted:
                continue
            text = " ".join(item.text.split())
            if any(fuzz.ratio(text, seen) > DUPLICATE for seen in texts):
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
            if place in _KNOWLEDGE_PLACES:
                opened.add(SUMMARY_HEADING)
            texts.append(text)
            chosen.append(Chosen(item, float(rel[position]), float(rec[position]),
                                 float(score[position]), place, _maybe(sem, position)))  # fmt: skip
        return Selection(chosen=chosen, tokens=used)

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
        ties = self.bm25(query, positions)
        order = sorted(range(len(positions)), key=lambda k: (
            -(weight * rel[positions[k]] + (1.0 - weight) * rec[positions[k]]), -ties[k]))  # fmt: skip
        today = clock_days(query.now) or 0.0
        found: list[Chosen] = []
        texts: list[str] = []
        for k in order:
            position = positions[k]
            item = self.items[position]
            text = " ".join(item.text.split())
            if any(fuzz.ratio(text, seen) > DUPLICATE for seen in texts):
                continue
            texts.append(text)
            place = _place(item, float(rel[position]), today) or "recent"
            score = weight * float(rel[position]) + (1.0 - weight) * float(rec[position])
            found.append(Chosen(item, float(rel[position]), float(rec[position]), score, place))
            if len(found) == limit:
                break
        return found


def _maybe(values: np.ndarray | None, position: int) -> float | None:
    if values is None or math.isnan(values[position]):
        return None
    return float(values[position])


def _place(item: Item, relevance: float, today: float) -> Place | None:
    if item.kind == "note":
        return "note" if relevance > 0 else None
    if item.kind == "past":
        return "past" if relevance > 0 else None
    place = classify(item.text, item.entry_type, relevance) if relevance > 0 else None
    if place is None:
        day = clock_days(item.sim)
        if day is not None and 0 <= today - day <= RECENT_HOURS / 24:
            return "recent"
    return place


def _heading_cost(place: Place, opened: set[str], tokens: Callable[[str], int]) -> int:
    cost = 0 if HEADINGS[place] in opened else tokens(HEADINGS[place])
    if place in _KNOWLEDGE_PLACES and SUMMARY_HEADING not in opened:
        cost += tokens(SUMMARY_HEADING)
    return cost


def related_agents(
    query: Query, others: Mapping[str, Index], threshold: float = 0.3,
    kinds: Iterable[ItemKind] = ("entry", "note", "skill", "past"),
) -> list[str]:  # fmt: skip
    """Other agents whose items (of ``kinds``) match the query, by relevance at least
    ``threshold``, most relevant first (ties by name)."""
    wanted = set(kinds)
    best: dict[str, float] = {}
    for name, index in others.items():
        if not index.items:
            continue
        positions = [p for p in index.matching(query) if index.items[p].kind in wanted]
        top = max((relevance(index.counts[p], index.items[p], query) for p in positions),
                  default=0.0)  # fmt: skip
        if top >= threshold:
            best[name] = top
    return sorted(best, key=lambda name: (-best[name], name))


# --- the prompt's lines ---------------------------------------------------------------


def render(selection: Selection, *, scores: bool = False) -> list[str]:
    """The prompt's lines for ``selection``: ``## Prior Knowledge Summary`` with its
    sections (seed 003's order), then the notes and the past experiences; a section with
    nothing in it is left out. ``scores``: each item line ends with its scores."""
    lines: list[str] = []

    def shown(chosen: Chosen) -> str:
        text = line(chosen.item)
        return f"{text}  [{chosen.scores()}]" if scores else text

    knowledge = [p for p in _KNOWLEDGE_PLACES if selection.items(p)]
    if knowledge or selection.related_agents:
        lines.append(SUMMARY_HEADING)
        for place in knowledge:
            lines += [HEADINGS[place], *map(shown, selection.items(place))]
        if selection.related_agents:
            names = ", ".join(selection.related_agents)
            lines += [RELATED_HEADING, f"Agents who know about this: {names}"]
    for place in _OWN_PLACES:
        found = selection.items(place)
        if found:
            lines += [HEADINGS[place], *map(shown, found)]
    return lines
