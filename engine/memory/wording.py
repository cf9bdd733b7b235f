"""Words, sentences, stems and content words of a text: what the summary gate, the
extractive summaries and retrieval read (pure).

    words("I'm at Ada's well.")          # ["i'm", "at", "ada's", "well"]
    sentences("I slept. Ada woke me!")   # ["I slept.", "Ada woke me!"]
    content_words("I told Ada the quinces were ripe.")   # {"told", "ada", "quinc", "ripe"}

There is one stemmer and one stopword list in mudsim, both here. ``stem`` takes a word
to its dictionary form first (simplemma's lemmatizer: "told" is "tell", "wolves"
"wolf", "children" "child", "bought" "buy"; a noun whose plural turns f to v is
that noun, "loaves" "loaf", where simplemma reads a verb), then to Snowball's stem of it ("keys" and
"key", "cities" and "city", "walked" and "walk" are one word); with ``language`` (an
ISO 639-1 code) it uses that language's lemmas and stemmer where there are some, and
English's for what they do not know. ``STOPWORDS`` are the function words that say
nothing of what a text is about. A content word is a word of three letters or more
that is not a stopword, compared by its stem.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

import simplemma
import snowballstemmer  # type: ignore[import-untyped]

STOPWORDS: Final = frozenset({
    "the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for",
    "with", "from", "into", "onto", "over", "under", "about", "as", "is", "are", "was",
    "were", "be", "been", "being", "it", "its", "this", "that", "these", "those", "there",
    "here", "then", "than", "so", "not", "no", "you", "your", "yours", "i", "me", "my",
    "mine", "we", "our", "ours", "he", "him", "his", "she", "her", "they", "them", "their",
    "what", "which", "who", "whom", "when", "where", "why", "how", "all", "any", "some",
    "can", "could", "would", "should", "will", "shall", "may", "might", "must", "do",
    "does", "did", "doing", "done", "have", "has", "had", "just", "very", "too", "also",
    "out", "off", "again", "once", "only", "own", "same", "till", "until", "whether",
    "while", "though", "although", "because", "since", "yet", "still", "even", "ever",
    "every", "each", "both", "either", "neither", "such", "other", "another", "more",
    "most", "much", "many", "few", "now", "up", "down", "upon", "if", "else",
    "anyway", "indeed", "quite", "rather", "really", "us", "let",
})  # fmt: skip
"""Function words: they say nothing of what a text is about (retrieval, the summary
gate and the extractive summaries all leave them out)."""

CONTRACTIONS: Final = ("n't", "'m", "'d", "'ll", "'ve", "'re")
"""A word ending so is a function word with a clitic (``i'm``, ``couldn't``): no content."""

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(
    r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bNo\.)(?<!\bMt\.)"
    r"(?<=[.!?…])\s+|(?<=[。！？])\s*|\n+"
)
"""A sentence ends after . ! ? … (but a title's full stop: ``Mr. Sato``), after a CJK
full stop, or at a line break."""
_SNOWBALL: Final = {
    "en": "english", "de": "german", "fr": "french", "es": "spanish", "it": "italian",
    "pt": "portuguese", "nl": "dutch", "sv": "swedish", "da": "danish", "no": "norwegian",
    "fi": "finnish", "ru": "russian", "tr": "turkish", "hu": "hungarian", "ro": "romanian",
    "pl": "polish", "cs": "czech", "el": "greek", "ca": "catalan",
}  # fmt: skip
"""ISO 639-1 code -> Snowball's algorithm for it."""
_LEMMAS: Final = frozenset({
    "bg", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa", "fi", "fr", "ga", "gd",
    "gl", "gv", "hbs", "hi", "hu", "hy", "id", "is", "it", "ka", "la", "lb", "lt", "lv", "mk",
    "ms", "nb", "nl", "nn", "pl", "pt", "ro", "ru", "se", "sk", "sl", "sq", "sv", "sw", "tl",
    "tr", "uk",
})  # fmt: skip
"""The languages simplemma has lemmas for."""


def words(text: str) -> list[str]:
    """Lower-case words (letters and digits, inner apostrophes kept)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


_UNSPACED: Final = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]"
)
"""Letters of scripts written without spaces between words (Han, kana, Hangul, Thai)."""


def word_count(text: str) -> int:
    """How many words ``text`` has; in a script written without spaces, a word is
    counted for every two letters."""
    count = 0
    for word in words(text):
        unspaced = len(_UNSPACED.findall(word))
        count += max(1, unspaced // 2) if unspaced else 1
    return count


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text``, stripped, empty ones dropped (a CJK full stop
    ends a sentence too)."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def is_content(word: str) -> bool:
    """A lower-case word says something: three letters or more, no stopword, no
    function word with a clitic."""
    return len(word) > 2 and word not in STOPWORDS and not word.endswith(CONTRACTIONS)


def content_words(text: str, language: str = "en") -> set[str]:
    """The content words of ``text``, each by its stem (see the module)."""
    return {stem(w, language) for w in words(text) if is_content(w)}


_F_TO_V: Final = frozenset({
    "calf", "dwarf", "elf", "half", "hoof", "knife", "loaf", "scarf", "sheaf", "shelf",
    "thief", "wharf", "wife", "wolf",
})  # fmt: skip
"""English nouns whose plural ends "-ves" (a closed class). "leaf" and "life" are not
here: "leaves" and "lives" are far more often verbs in a world where people leave rooms."""


@lru_cache(maxsize=65536)
def stem(word: str, language: str = "en") -> str:
    """``word``'s dictionary form's stem (see the module), lower-cased."""
    word = word.casefold().replace("’", "'")
    languages = (language, "en") if language in _LEMMAS and language != "en" else ("en",)
    lemma = simplemma.lemmatize(word, lang=languages).casefold()
    if word.endswith("ves") and language == "en":
        lemma = next((n for n in (word[:-3] + "f", word[:-3] + "fe") if n in _F_TO_V), lemma)
    return str(_stemmer(_SNOWBALL.get(language, "english")).stemWord(lemma))


@lru_cache(maxsize=32)
def _stemmer(algorithm: str) -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer(algorithm)
