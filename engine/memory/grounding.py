"""Is a summary grounded in what it summarizes? Measured, not listed (pure).

    found = grounding(summary, sources, names=("Ada", "The Mill"))
    found.support        # 0.83: the share of its content words its sources hold
    found.invented       # ("Zarathustra", "1912"): names and numbers they lack

A summary is *grounded* (``Grounding.grounded``) when

- its *support* is above ``SUPPORT``: more than that share of its content words (as
  they occur: a name said three times counts three times; ``engine.memory.wording``: one
  stemmer, one stopword list) appear among its sources' content words, or in ``names`` (the agent's profile, the world's rooms,
  objects and people); in a script written without spaces (Han, kana, Hangul, Thai)
  a "word" is a pair of neighbouring letters;
- it *invents* nothing: every capitalised word but a sentence's first (a name) and
  every quoted phrase in it appears in its sources or in ``names`` (numbers are
  ``engine.memory.faithfulness``'s: as values, in digits or in words).

``keeps_both`` is a merge's test: a long-term summary made of an older one and a recent
one must carry a detail (a content word) only the older holds and one only the recent
holds, and ``near_copy`` says when it is no more than one of them again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from rapidfuzz import fuzz

from engine.memory.wording import is_content, sentences, stem, words

SUPPORT: Final = 0.5
"""A summary is grounded when more than this share of its content words is supported."""
NOUNS_CAPITALISED: Final = frozenset({"de", "lb"})
"""Languages that capitalise every noun: a capital there is no sign of a name."""
RECENT_SHARE: Final = 0.1
"""The least share of what only the recent summary says that a merge keeps."""
NEAR_COPY: Final = 90.0
"""rapidfuzz ``ratio`` (0-100) at or above which a merge is one of its parts again."""

_UNSPACED: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]"
)
_CAPITALISED: Final = re.compile(r"(?<![\w'’])[^\W\d_][\w'’-]*")
_QUOTED: Final = re.compile(r"\"([^\"\n]{3,})\"|“([^”\n]{3,})”|«([^»\n]{3,})»|„([^“”\n]{3,})[“”]")
_PRONOUN_I: Final = frozenset({"i", "i'm", "i've", "i'd", "i'll"})


@dataclass(frozen=True, slots=True)
class Grounding:
    support: float
    """The share of the summary's content words (as they occur) found in its sources
    (1.0: it has none)."""
    unsupported: tuple[str, ...]
    """Its content words (stems) the sources lack, in order."""
    invented: tuple[str, ...]
    """Names and quoted phrases of it the sources lack, in order."""

    @property
    def grounded(self) -> bool:
        return self.support > SUPPORT and not self.invented

    def why_not(self) -> str | None:
        """One line saying why the summary is not grounded (None: it is)."""
        if self.invented:
            shown = ", ".join(repr(found) for found in self.invented[:3])
            return f"names what its memories never do ({shown})"
        if self.support <= SUPPORT:
            return (
                f"has only {self.support:.0%} of its words in its memories "
                f"(more than {SUPPORT:.0%} must be)"
            )
        return None


def terms(text: str, language: str = "en") -> list[str]:
    """``text``'s content words by stem, in order, repeats kept: words of three letters
    or more that are no stopword; in an unspaced script, pairs of neighbouring letters."""
    found: list[str] = []
    for word in words(text):
        if _UNSPACED.search(word):
            letters = [c for c in word if c.isalpha()]
            found.extend(a + b for a, b in pairwise(letters))
            if len(letters) == 1:
                found.append(letters[0])
        elif is_content(word):
            found.append(stem(word, language))
    return found


def vocabulary(texts: Iterable[str], language: str = "en") -> set[str]:
    """The content words (stems) of ``texts`` together."""
    return {term for text in texts for term in terms(text, language)}


def grounding(
    summary: str, sources: Sequence[str], names: Sequence[str] = (), *, language: str = "en"
) -> Grounding:
    """How well ``summary`` is grounded in ``sources`` (the raw memories it covers, and
    summaries already found grounded) and ``names`` (see the module); ``language`` is
    the summary's (its words' stems, and whether a capital means a name)."""
    known = vocabulary([*sources, *names], language)
    said = terms(summary, language)
    unsupported = tuple(dict.fromkeys(term for term in said if term not in known))
    missing = sum(1 for term in said if term not in known)
    support = 1.0 - missing / len(said) if said else 1.0
    capitals = language not in NOUNS_CAPITALISED
    return Grounding(support, unsupported, invented(summary, [*sources, *names], capitals=capitals))


def invented(summary: str, sources: Sequence[str], *, capitals: bool = True) -> tuple[str, ...]:
    """The names (capitalised words but a sentence's first: unless not ``capitals``, in
    a language that capitalises every noun) and quoted phrases of ``summary`` that
    ``sources`` do not hold."""
    said = [" ".join(words(source)) for source in sources]
    known_words = {word for text in said for word in text.split()}
    known_stems = {stem(word) for word in known_words}
    found: list[str] = []
    for sentence in sentences(summary) if capitals else ():
        for index, match in enumerate(_CAPITALISED.finditer(sentence)):
            name = match.group(0).strip("-'’")
            lowered = name.lower().replace("’", "'")
            if index == 0 or not name[:1].isupper() or lowered in _PRONOUN_I:
                continue
            if not _known_name(lowered, known_words, known_stems):
                found.append(name)
    for match in _QUOTED.finditer(summary):
        phrase = " ".join(words(next(group for group in match.groups() if group)))
        if phrase and not any(phrase in text for text in said):
            found.append(f'"{phrase}"')
    return tuple(dict.fromkeys(found))


def _known_name(name: str, known_words: set[str], known_stems: set[str]) -> bool:
    parts = words(name)
    return bool(parts) and all(p in known_words or stem(p) in known_stems for p in parts)


def keeps_both(
    merged: str, older: str, recent: str, recent_memories: Sequence[str] = ()
) -> str | None:
    """Why ``merged`` does not carry both parts of a merge (None: it does): a detail of
    ``older`` (the old long-term summary) that neither ``recent`` (the short-term
    summary) nor its memories hold, and at least ``RECENT_SHARE`` of the details only
    ``recent`` holds (at least one)."""
    old, new = vocabulary([older]), vocabulary([recent])
    old_only = old - new - vocabulary(recent_memories)
    new_only = new - old
    mine = set(terms(merged))
    if old_only and not mine & old_only:
        return "keeps nothing of the older summary"
    wanted = max(1, math.ceil(RECENT_SHARE * len(new_only)))
    if new_only and len(mine & new_only) < min(wanted, len(new_only)):
        return "keeps too little of the recent summary"
    return None


def near_copy(merged: str, parts: Sequence[str]) -> bool:
    """``merged`` is (nearly) one of ``parts`` word for word, and not all of them (two
    parts nearly alike, as a repetitive life makes them, may well merge into either)."""
    mine = " ".join(words(merged))
    close = [fuzz.ratio(mine, " ".join(words(part))) >= NEAR_COPY for part in parts if part]
    return any(close) and not all(close)
