"""Names in any script, as people type them (pure, no I/O).

Text is taken in NFKC (``normalized``): full-width ``Ｚｏｅ`` is ``Zoe``, a ligature
``ﬁ`` is ``fi``, a decomposed ``e`` + U+0308 is ``ë``. Two names are the same name when
their keys (``name_key``) are equal: NFKC, Latin letters without their accents and
strokes (``fold_latin``: ``Zoë``, ``Zoé`` and ``ZOE`` are all ``zoe``; ``Łukasz`` is
``lukasz``), case folded. On a terminal ``Zoë`` and ``Zoe`` are told apart by two dots,
so one could pass for the other in what the room hears ("Zoe says ..."): they are one
name, kept as first spelled.

A new name (``script_problem``) keeps to one script (Latin, Greek, Cyrillic, the CJK
family of Han, kana and Hangul, Arabic...; ASCII digits, ``-`` and ``_`` go with any),
so ``Zое`` with a Cyrillic ``о`` and ``е`` cannot pass for ``Zoe``; and a Greek or
Cyrillic name made only of letters that look Latin (Cyrillic ``Рор``) is refused, since
it would read as the Latin ``Pop``.
"""

from __future__ import annotations

import unicodedata
from typing import Final

_FOLDED_MARKS_AFTER: Final = frozenset({"LATIN", "GREEK", "CYRILLIC"})
"""Scripts whose accents ``fold_latin`` drops (elsewhere, as in Devanagari, a mark is
part of the letter)."""

_LATIN_LETTERS: Final = {
    "ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ħ": "h", "Ħ": "H",
    "ı": "i", "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
    "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D", "ŧ": "t", "Ŧ": "T", "ŋ": "ng", "Ŋ": "NG",
}  # fmt: skip
"""Latin letters NFKD does not take apart, as ASCII."""

_LOOKS_LATIN: Final = dict(
    zip(
        "АВЕКМНОРСТХЅІЈҮаеорсухѕіјһԁԛԝӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧοιακυρν",
        "ABEKMHOPCTXSIJYaeopcyxsijhdqwlABEZHIKMNOPTYXoiakupv",
        strict=True,
    )
)
"""Cyrillic and Greek letters drawn like a Latin one in common fonts."""

_CJK: Final = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL",
                         "IDEOGRAPHIC", "BOPOMOFO"})  # fmt: skip
"""Scripts written together (a Japanese name mixes kanji and kana)."""


def normalized(text: str) -> str:
    """``text`` in NFKC: what a name or a command is taken as."""
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def fold_latin(text: str) -> str:
    """``text`` with the accents of Latin, Greek and Cyrillic letters dropped and the
    Latin letters NFKD keeps whole spelled in ASCII: ``Łukasz Żółw`` -> ``Lukasz Zolw``."""
    kept: list[str] = []
    base = ""
    for ch in unicodedata.normalize("NFKD", normalized(text)):
        if unicodedata.combining(ch):
            if script(base) not in _FOLDED_MARKS_AFTER:
                kept.append(ch)
            continue
        base = ch
        kept.append(_LATIN_LETTERS.get(ch, ch))
    return unicodedata.normalize("NFC", "".join(kept))


def name_key(name: str) -> str:
    """What makes two names the same name: ``name_key("Zoë") == name_key("ZOE")``."""
    return " ".join(fold_latin(name).casefold().split())


def script(ch: str) -> str | None:
    """The script of the letter ``ch`` (``LATIN``, ``GREEK``, ``CJK``...), None for
    anything else (a digit, a mark, punctuation)."""
    if not ch or not unicodedata.category(ch).startswith("L"):
        return None
    first = unicodedata.name(ch, "").split(" ", 1)[0]
    return "CJK" if first in _CJK else first or None


def script_problem(name: str) -> str | None:
    """Why ``name`` (taken in NFKC) could pass for another name (one sentence), or None."""
    name = normalized(name)
    scripts = sorted({s for s in map(script, name) if s is not None})
    if len(scripts) > 1:
        shown = " and ".join(s.title() for s in scripts)
        return f"'{name}' mixes letters of different scripts ({shown}); pick a name in one."
    letters = [ch for ch in fold_latin(name) if unicodedata.category(ch).startswith("L")]
    if scripts and scripts[0] != "LATIN" and letters and all(ch in _LOOKS_LATIN for ch in letters):
        latin = "".join(_LOOKS_LATIN.get(ch, ch) for ch in fold_latin(name))
        return (
            f"'{name}' would read as the Latin name '{latin}' "
            f"({scripts[0].title()} letters that look Latin); pick another name."
        )
    return None
