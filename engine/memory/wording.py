"""Words, sentences and content words of a text: what the summary gate and the
extractive summaries read (pure).

    words("I'm at Ada's well.")          # ["i'm", "at", "ada's", "well"]
    sentences("I slept. Ada woke me!")   # ["I slept.", "Ada woke me!"]
    content_words("I told Ada the quinces were ripe.")   # {"told", "ada", "quinc", "ripe"}

A content word is a word of three letters or more that is not a function word; it is
compared by its stem (``stem``: a plural's or a past tense's ending off, then its first
``STEM`` letters), so "room" and "rooms", "walk" and "walked" count as one.
"""

from __future__ import annotations

import re
from typing import Final

STEM: Final = 5
"""Content words are compared by this many first letters (a crude stem)."""

STOPWORDS: Final = frozenset({
    "the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for",
    "with", "from", "into", "onto", "over", "under", "about", "as", "is", "are", "was",
    "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there",
    "here", "then", "than", "so", "not", "no", "you", "your", "yours", "i", "me", "my",
    "mine", "we", "our", "he", "him", "his", "she", "her", "they", "them", "their",
    "what", "which", "who", "whom", "when", "where", "why", "how", "all", "any", "some",
    "can", "could", "would", "should", "will", "shall", "may", "might", "must", "do",
    "does", "did", "done", "have", "has", "had", "just", "very", "too", "also",
})  # fmt: skip
"""Function words: they say nothing of what a text is about."""

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")


def words(text: str) -> list[str]:
    """Lower-case words (letters and digits, inner apostrophes kept)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text``, stripped, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def content_words(text: str) -> set[str]:
    """The content words of ``text``, each by its stem (see the module)."""
    return {stem(w) for w in words(text) if len(w) > 2 and w not in STOPWORDS}


def stem(word: str) -> str:
    """A crude stem: "'s", then "ies" (as "y"), "ing", "ed", "es" or "s" off a word long
    enough to keep three letters, then the first ``STEM`` letters."""
    word = word.removesuffix("'s")
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    else:
        for ending in ("ing", "ed", "es", "s"):
            if word.endswith(ending) and not word.endswith("ss") and len(word) - len(ending) >= 3:
                word = word[: -len(ending)]
                break
    return word[:STEM]
