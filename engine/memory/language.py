"""Which language and script a text is in (pure; the model is read once from the
package).

    language("Ich habe heute Brot gebacken.")   # Language("de", 0.99)
    script("我们去花园吧")                         # "Han"
    foreign(summary, sources)                   # None, or why it is not their language

The language is py3langid's (a maintained fork of langid.py: a naive Bayes model of
byte n-grams over 97 languages, shipped in the package, numpy only; its probabilities
are normalised, so a short or mixed text gets a low one). The script is the Unicode
script most of a text's letters are written in, read from their Unicode names.

``foreign`` is the summary gate's check: a summary is in a foreign language when it is
written mostly in a script its sources do not use, or when the detector is sure of
its language (``SURE``) and that language is none of the languages a fair share
(``SHARE``) of its sources is written in. A text the detector is unsure of is never
called foreign: a name-heavy summary or a mixed world is let through rather than
rejected on a guess.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

SURE: Final = 0.9
"""The detector's probability at or above which a language is taken as the text's."""
SHARE: Final = 0.15
"""A language (or a script) is one of the sources' when at least this share of their
letters is written in it."""
MIN_LETTERS: Final = 12
"""A text with fewer letters than this has no language the check relies on."""

_SCRIPT_OF_NAME: Final = (
    ("CJK", "Han"), ("HIRAGANA", "Kana"), ("KATAKANA", "Kana"), ("HANGUL", "Hangul"),
    ("CYRILLIC", "Cyrillic"), ("GREEK", "Greek"), ("ARABIC", "Arabic"),
    ("HEBREW", "Hebrew"), ("DEVANAGARI", "Devanagari"), ("THAI", "Thai"),
    ("LATIN", "Latin"),
)  # fmt: skip
_KIN: Final = {"Kana": "Han", "Han": "Han"}
"""Japanese mixes kana and Han: the two count as one script."""


@dataclass(frozen=True, slots=True)
class Language:
    code: str
    """ISO 639-1 (``en``, ``de``, ``zh``...)."""
    probability: float


@lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier  # type: ignore[import-untyped]

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@lru_cache(maxsize=4096)
def language(text: str) -> Language:
    """The language ``text`` is most likely in, with its probability."""
    code, probability = _identifier().classify(text)
    return Language(str(code), round(float(probability), 6))


@lru_cache(maxsize=65536)
def _letter_script(char: str) -> str | None:
    if not char.isalpha():
        return None
    name = unicodedata.name(char, "")
    for prefix, found in _SCRIPT_OF_NAME:
        if name.startswith(prefix):
            return _KIN.get(found, found)
    return "Other"


def scripts(text: str) -> Counter[str]:
    """How many of ``text``'s letters each script has."""
    return Counter(s for s in map(_letter_script, text) if s is not None)


def script(text: str) -> str | None:
    """The script most of ``text``'s letters are in (None: no letters)."""
    found = scripts(text).most_common(1)
    return found[0][0] if found else None


def _shares(counts: Counter[str]) -> dict[str, float]:
    total = sum(counts.values())
    return {key: n / total for key, n in counts.items()} if total else {}


def language_code(text: str) -> str:
    """``text``'s language when the detector is sure of it, else ``en`` (the engine's
    own, which its memory lines are written in)."""
    found = language(text)
    return found.code if found.probability >= SURE else "en"


def is_english(text: str) -> bool:
    """``text`` reads as English (or its language cannot be told with confidence)."""
    found = language(text)
    return found.code == "en" or found.probability < SURE


_QUOTED: Final = re.compile(
    r"\"([^\"\n]+)\"|“([^”\n]+)”|«([^»\n]+)»|„([^“”\n]+)[“”]|「([^」\n]+)」"
)


def _speech_apart(line: str) -> list[str]:
    """A memory line as its quoted speech and the rest (``Lucía says, "..."``: the
    engine's English around another language)."""
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(line)]
    return [_QUOTED.sub(" ", line), *quoted] if quoted else [line]


def source_languages(sources: Iterable[str]) -> set[str]:
    """The languages at least ``SHARE`` of ``sources``' letters are in, each source
    judged on its own (a line of speech in German among English narration)."""
    letters: Counter[str] = Counter()
    pieces = [piece for source in sources for piece in _speech_apart(source)]
    for source in pieces:
        count = sum(1 for char in source if char.isalpha())
        if count < MIN_LETTERS:
            continue
        found = language(source)
        if found.probability >= SURE:
            letters[found.code] += count
    return {code for code, share in _shares(letters).items() if share >= SHARE}


def foreign(text: str, sources: Sequence[str]) -> str | None:
    """Why ``text`` is not in the language or script of ``sources`` (None: it is, or it
    cannot be told)."""
    mine = script(text)
    theirs = _shares(sum((scripts(s) for s in sources), Counter()))
    if mine is not None and theirs and theirs.get(mine, 0.0) < SHARE:
        main = max(theirs, key=lambda key: (theirs[key], key))
        return f"written in {mine} script, its sources in {main}"
    if sum(1 for char in text if char.isalpha()) < MIN_LETTERS:
        return None
    found = language(text)
    if found.probability < SURE:
        return None
    known = source_languages(sources)
    if known and found.code not in known:
        return f"written in {found.code}, its sources in {', '.join(sorted(known))}"
    return None
