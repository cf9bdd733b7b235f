"""Retrieval's pure parts (``engine.memory.retrieval`` says what they mean): words and
their Snowball stems, items and queries, relevance, recency, the combined score, the
classes and where an item goes in the prompt, what a line costs, and what repeats what
a selection has shown (``Shown``: ``engine.memory.retrieval_index`` says how)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Final, Literal

from rapidfuzz import fuzz, process

from engine.memory.knowledge import KnowledgeType
from engine.memory.wording import STOPWORDS, stem

E_FOLDING_DAYS: Final = 7.0
"""Recency is ``exp(-age_days / 7)``: 7 days is its e-folding time (about 4.9 days to halve)."""
RECENT_HOURS: Final = 24
DUPLICATE: Final = 80.0
"""rapidfuzz similarity (0-100) above which an item repeats one already chosen."""
KEYWORDS_MAX: Final = 24
CHARS_PER_TOKEN: Final = 4.0
OWN_ROLE: Final = 0.1
"""The bonus of an item whose agent (another agent, never the asking one) has the role."""

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
KNOWLEDGE_PLACES: Final[tuple[Place, ...]] = ("fact", "hypothesis", "gap", "recent")
OWN_PLACES: Final[tuple[Place, ...]] = ("note", "past")

_WORD: Final = re.compile(r"[^\W_]+")


# --- words ---------------------------------------------------------------------------


class _Stems(dict[str, str]):
    """A word (casefolded) -> its stem, or "" for a word no term is made of (a letter, a
    stopword), filled as words come: a text's stems are then looked up in C
    (``map``), ``stem`` called once per word (emptied when it holds ``_STEMS_KEPT``)."""

    def __missing__(self, word: str) -> str:
        if len(self) >= _STEMS_KEPT:
            self.clear()
        found = self[word] = stem(word) if len(word) > 1 and word not in STOPWORDS else ""
        return found


_STEMS_KEPT: Final = 1 << 18
_STEMS: Final = _Stems()


_ASCII_WORDS: Final = bytes(c if chr(c).isalnum() and c < 128 else 32 for c in range(256))
"""ASCII letters and digits as they are, every other byte a space: an ASCII text's words
(``_WORD``'s) are its translation's split, twice as fast as the regular expression."""


def _stems_of(text: str) -> tuple[str, ...]:
    lowered = text.casefold()
    if lowered.isascii():
        words = lowered.encode("ascii").translate(_ASCII_WORDS).decode("ascii").split()
    else:
        words = _WORD.findall(lowered)
    return tuple(filter(None, map(_STEMS.__getitem__, words)))


_terms: Final = lru_cache(maxsize=16384)(_stems_of)


def terms(text: str) -> list[str]:
    """The stems (``engine.memory.wording.stem``) of ``text``'s words of two letters or
    more, stopwords left out (cached: a room's name and description come back every
    turn)."""
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
    agent: str = ""
    """Who asks: its own items never get the role bonus of their agent (``OWN_ROLE``)."""


@dataclass(frozen=True, slots=True)
class Chosen:
    item: Item
    relevance: float
    recency: float
    score: float
    place: Place
    semantic: float | None = None
    """The cosine similarity with the situation, when the item had an embedding."""
    text: str = ""
    """The item's text as shown, when sentences of it that repeat what was shown before
    are left out (``Shown``); "": its whole text."""

    def line(self) -> str:
        """The item as the prompt shows it (``line``)."""
        return line(self.item, self.text or None)

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


@lru_cache(maxsize=16384)
def topic_stems(topic: str) -> frozenset[str]:
    """The stems of an item's topic (a keyword among them: +0.2)."""
    return frozenset(_terms(topic))


def item_terms(item: Item) -> tuple[str, ...]:
    """The stems an item is found by: its text's, its topic's and its tags' (not cached:
    an item's stems are asked for once, when it is indexed)."""
    return _stems_of(" ".join([item.text, item.topic, *item.tags]))


def theirs(item: Item, query: Query, role: str) -> bool:
    """Whether ``item`` gets its agent's role bonus: another agent's, with the role."""
    return bool(role) and item.agent != query.agent and role in item.agent_role.casefold()


def relevance(counts: Mapping[str, int], item: Item, query: Query) -> float:
    """The seed's relevance of an item whose stems are ``counts`` (see the module)."""
    matched = [counts[k] for k in query.keywords if counts.get(k)]
    score = 0.3 * len(matched) + min(0.3, 0.1 * sum(n - 1 for n in matched))
    role = query.role.casefold().strip()
    if role and any(role in tag.casefold() for tag in item.tags):
        score += 0.2
    if item.topic and not topic_stems(item.topic).isdisjoint(query.keywords):
        score += 0.2
    if theirs(item, query, role):
        score += OWN_ROLE
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


def _words(words: Iterable[str]) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")(?!\w)")


_FACT: Final = _words(FACT_WORDS)
_GAP: Final = _words(GAP_WORDS)
_HYPOTHESIS: Final = _words(HYPOTHESIS_WORDS)
_INDICATORS: Final = (*FACT_WORDS, *GAP_WORDS, *HYPOTHESIS_WORDS)


def classify(text: str, entry_type: KnowledgeType | None, relevance: float) -> Place | None:
    """Proven fact, hypothesis or known gap (None: left out; see the module)."""
    if entry_type in HOW_TO_ACT:
        return "fact"
    lowered = text.casefold()
    if any(word in lowered for word in _INDICATORS):  # else no pattern can match
        if _FACT.search(lowered):
            return "fact"
        if _GAP.search(lowered):
            return "gap"
        if _HYPOTHESIS.search(lowered):
            return "hypothesis"
    return by_relevance(relevance)


def by_relevance(relevance: float) -> Place | None:
    """An entry's class when neither its type nor its words decide."""
    if relevance > 0.7:
        return "fact"
    if relevance > 0.4:
        return "hypothesis"
    return None


def worded(item: Item) -> Place | None:
    """An item's class by its type and its words alone (``classify`` at relevance 0)."""
    return classify(item.text, item.entry_type, 0.0)


LINE_CHARS: Final = 320
"""An item's text as a line shows it, at most (a past summary can be long)."""


def line(item: Item, text: str | None = None) -> str:
    """An item as the prompt shows it (its text, or ``text`` in its place, cut at a word
    past ``LINE_CHARS``)."""
    text = " ".join((item.text if text is None else text).split())
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


# --- near-duplicates -----------------------------------------------------------------


COMPARED: int = 400
"""The characters of two items' texts the near-duplicate check compares (a long past
summary's opening says what it is about; comparing all of two long ones costs their
lengths multiplied, for every item chosen)."""
SENTENCE_CHARS: Final = 32
"""A sentence whose words make fewer characters ("Bo nods.", "Tam arrives from the
mill.") is not compared: it repeats at little cost, and an extractive past summary
holds dozens of them, each compared with every sentence shown."""
_SENTENCE: Final = re.compile(r"(?:(?<=[.!?…])|(?<=[.!?…][\"'”’)\]]))\s+|\n+")


class Shown:
    """What a selection has shown so far, for the near-duplicate check (see the module):
    the texts of the items chosen (their first ``COMPARED`` characters) and the
    sentences of their lines (each as its words, lower-cased)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.pieces: list[str] = []
        self._seen: set[str] = set()

    def fresh(self, text: str) -> tuple[str, list[str]] | None:
        """None when ``text`` (an item's) repeats what was shown; else the text to show
        ("": all of it; else without its sentences that repeat one shown or one of its
        own before them), and the words of the sentences compared that it shows, for
        ``add``. Only the sentences its line shows are compared: those it is not cut
        before (``LINE_CHARS``), the sentences left out not counted."""
        whole, parts, keys, compared = _sentences(text)
        if _repeats(whole, self.texts):
            return None
        if not compared:  # no sentence long enough to compare
            return "", []
        pieces, seen = self.pieces, self._seen
        mark = len(pieces)  # its own sentences go on the list while they are compared
        kept: list[str] = []
        worded = False  # a sentence with words is kept
        length = 0  # where the next sentence kept would begin in its line
        for n, (part, key) in enumerate(zip(parts, keys, strict=True)):
            if length >= LINE_CHARS:  # its line is cut before the rest: as they are
                kept += parts[n:]
                break
            if len(key) >= SENTENCE_CHARS:
                if key in seen or _repeats(key, pieces):
                    continue
                pieces.append(key)
            kept.append(part)
            worded = worded or bool(key)
            length += len(part) + 1
        shown = pieces[mark:]
        del pieces[mark:]
        if len(kept) == len(parts):
            return "", shown
        return (" ".join(kept), shown) if worded else None

    def add(self, text: str, pieces: list[str]) -> None:
        """An item with ``text`` was chosen, showing ``pieces`` (``fresh``'s)."""
        self.texts.append(_sentences(text)[0])
        self.pieces.extend(pieces)
        self._seen.update(pieces)


@lru_cache(maxsize=16384)
def _sentences(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...], bool]:
    """An item's text as the near-duplicate check compares it: its first ``COMPARED``
    characters; its sentences (its lines, each split after a full stop, a question or an
    exclamation mark) and the words of each, lower-cased; whether one of those is long
    enough to compare (cached: the same items are looked at turn after turn)."""
    parts = tuple(p for p in (" ".join(p.split()) for p in _SENTENCE.split(text.strip())) if p)
    keys = tuple(" ".join(_WORD.findall(part.casefold())) for part in parts)
    compared = any(len(key) >= SENTENCE_CHARS for key in keys)
    return " ".join(text.split())[:COMPARED], parts, keys, compared


def _repeats(text: str, chosen: list[str]) -> bool:
    """``text`` (its first ``COMPARED`` characters) is more than ``DUPLICATE`` similar to
    one of ``chosen`` (rapidfuzz's loop in C, each comparison cut short once it
    cannot reach the mark)."""
    if not chosen:
        return False
    found = process.extractOne(text[:COMPARED], chosen, scorer=fuzz.ratio,
                               score_cutoff=DUPLICATE)  # fmt: skip
    return found is not None and found[1] > DUPLICATE
