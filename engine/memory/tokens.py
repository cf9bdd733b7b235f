"""Counting a prompt's tokens, and cutting a text to a number of them (pure, no I/O).

Every prompt the engine sends is fitted to its model's ``num_ctx`` less its reply
(``prompt_room``), counted by a ``TokenCounter``: the model's own tokenizer where mudsim
has it (the embedded model: ``engine.llm.local_tokens``), else ``ESTIMATE``. The counter
comes with the LLM a prompt is for (``counter_of``: a backend, the dispatcher in front of
them and a run's recorder say which they count with), so each prompt builder gets it
with the model it writes for.

``estimate_tokens`` never counts fewer tokens than the embedded model's tokenizer
(SmolLM2-135M, a byte-level BPE with a 49k vocabulary, weaker than most servers' for
anything but English) on text of any script: it splits each line as such a tokenizer's
pre-tokenizer does (runs of letters with the space before them, each digit, runs of
other symbols, runs of whitespace), and no token spans two pieces, so each piece is
costed alone (each line's cost is remembered; each newline is a token, and every text
gets ``SLACK`` more):

- a run of ASCII letters: 1, plus 1.3 times the chance of a token boundary between each
  two neighbouring letters (``token_table``: measured on SmolLM2 over English, code and
  the words of every babel locale, plus a margin; two equal letters at least 0.5), and
  5% more: about 1.8 times what SmolLM2 counts for English prose, as much for a random
  string of letters;
- any other character: its UTF-8 bytes (a byte-level tokenizer, or a byte fallback,
  never needs more): about 2 a Cyrillic, Greek, Arabic or Hebrew letter, 3 a CJK,
  kana or Hangul character (SmolLM2 counts about 2), 4 an emoji; a space before a
  symbol merges with it, each digit is 1;
- a run of whitespace: spaces share a token 8 at most, newlines and tabs 2, any other
  takes its bytes; a run of more than one is split before its last character (1 more).

The guarantee is for text: natural language in any script, code, numbers, symbols,
random bytes or characters. A string built to defeat the letter-pair table (a soup of
common pairs that the tokenizer happens to split, "wowohe hewowo") can pass it by a
token or so in ten.

``scripts/token_table.py --check`` prints the calibration figures; a property test
holds the estimate to the real tokenizer on any text (``tests/memory/test_tokens.py``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast, runtime_checkable

from engine.memory.token_table import LETTERS, SPLITS

RESERVED: Final = 4
"""Tokens a prompt leaves free beside its text and reply: a BOS token, and what a server
may add around a raw prompt."""
ELLIPSIS: Final = "…"
"""What marks a cut text."""


class TokenCounter(Protocol):
    """How many tokens a text takes for one model."""

    def count(self, text: str) -> int: ...


@runtime_checkable
class CountsTokens(Protocol):
    """An LLM (backend, dispatcher, recorder) that says how its model counts tokens."""

    @property
    def token_counter(self) -> TokenCounter: ...


def counter_of(llm: object) -> TokenCounter:
    """How ``llm``'s model counts tokens: its own counter, ``ESTIMATE`` for one that has
    none (a test's fake) and for None (no LLM yet)."""
    return llm.token_counter if isinstance(llm, CountsTokens) else ESTIMATE


# -- the estimate ---------------------------------------------------------------------
_PIECE = re.compile(r" ?[A-Za-z]+|\d| ?(?:[^\s\w]|_)+|\s+|[^\W\d_A-Za-z]+")
"""A pre-tokenizer's pieces: ASCII words (the space before them included), digits,
symbol runs (the space before them included), whitespace runs, other letter runs."""
_SPLIT: Final[dict[str, float]] = {
    first + second: (10 if cell == "A" else int(cell)) / 10
    for row, first in enumerate(LETTERS)
    for second, cell in zip(LETTERS, SPLITS[row * 52 : row * 52 + 52], strict=True)
}
WORD_SCALE: Final = 1.3
"""What each boundary chance of the table counts for."""
WORD_MARGIN: Final = 1.05
"""A word's cost over its table sum (a word the tokenizer splits more than most)."""
SAME_LETTER: Final = 0.5
"""Two equal neighbouring letters are split at least this often ("aaaa": 2 tokens)."""
SLACK: Final = 2
"""Added to every estimate: a short text has no easy words to make up for a hard one
("wosm" is 3 tokens, though its letter pairs are common)."""
_KEPT_CHARS = 2048


def estimate_tokens(text: str) -> int:
    """A conservative count of ``text``'s tokens for a model whose tokenizer mudsim does
    not have (never below the embedded model's count, whatever the script). Line by
    line (each newline a token: no token of such a tokenizer spans one), each line's
    cost remembered, so a prompt whose lines come back turn after turn costs little."""
    if not text:
        return 0
    lines = text.split("\n")
    return math.ceil(sum(map(_line_cost, lines)) + len(lines) - 1 - 1e-9) + SLACK


def _line_cost(line: str) -> float:
    return _kept_line_cost(line) if len(line) <= _KEPT_CHARS else _cost(line)


@functools.lru_cache(maxsize=1 << 15)
def _kept_line_cost(line: str) -> float:
    return _cost(line)


def _cost(line: str) -> float:
    return sum(map(_piece_cost, _PIECE.findall(line)))


@functools.lru_cache(maxsize=1 << 16)
def _piece_cost(piece: str) -> float:
    last = piece[-1]
    if last.isascii() and last.isalpha():  # an ASCII word, maybe with its space
        word = piece.lstrip(" ")
        splits = 0.0
        for i in range(1, len(word)):
            pair = word[i - 1 : i + 1]
            chance = _SPLIT[pair]
            splits += max(chance, SAME_LETTER) if pair[0] == pair[1] else chance
        return (1 + WORD_SCALE * splits) * WORD_MARGIN
    if piece.isspace():
        return _whitespace_cost(piece)
    if piece[0] == " ":  # a symbol run with its space: the space merges with punctuation
        rest = piece[1:]
        return _bytes(rest) + (0 if rest[0] in _PUNCTUATION else 1)
    return _bytes(piece)


_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_RUN = re.compile(r"( +|\n+|\t+|[^ \n\t])")
_PER_TOKEN: Final = {" ": 8, "\n": 2, "\t": 2}
"""How many of these a token holds at least, in a run of them."""


def _whitespace_cost(piece: str) -> int:
    """A run of whitespace: runs of spaces, newlines or tabs share tokens, any other
    character takes its bytes; a run before text is split before its last character."""
    cost = 0 if len(piece) == 1 else 1
    for run in _RUN.findall(piece):
        per = _PER_TOKEN.get(run[0])
        cost += -(-len(run) // per) if per else _bytes(run)
    return cost


def _bytes(text: str) -> int:
    """UTF-8 bytes (a lone surrogate, which no prompt should hold, as three)."""
    return len(text.encode("utf-8", "surrogatepass"))


class Estimate:
    """``estimate_tokens`` as a ``TokenCounter``: for servers, whose tokenizer mudsim
    does not have."""

    def count(self, text: str) -> int:
        return estimate_tokens(text)

    def __repr__(self) -> str:
        return "ESTIMATE"


ESTIMATE: Final = Estimate()


class Characters:
    """Characters as tokens: budgets in characters (the pure prompt functions' default,
    for callers that have no model)."""

    def count(self, text: str) -> int:
        return len(text)

    def __repr__(self) -> str:
        return "CHARACTERS"


CHARACTERS: Final = Characters()


@dataclass(frozen=True)
class MostOf:
    """The largest count of several counters (a pool of endpoints that count apart)."""

    counters: tuple[TokenCounter, ...]

    def count(self, text: str) -> int:
        return max(counter.count(text) for counter in self.counters)


def most_of(counters: Iterable[TokenCounter]) -> TokenCounter:
    """One counter for several: the only one, or ``MostOf`` them; ``ESTIMATE`` for none."""
    distinct: list[TokenCounter] = []
    for counter in counters:
        if not any(counter is known for known in distinct):
            distinct.append(counter)
    if not distinct:
        return ESTIMATE
    return distinct[0] if len(distinct) == 1 else MostOf(tuple(distinct))


# -- budgets ----------------------------------------------------------------------------
def prompt_room(options: Mapping[str, Any], default_reply: int = 0) -> int | None:
    """The tokens a prompt may take: ``num_ctx`` less the reply's ``num_predict``
    (``default_reply`` when it gives none, or no limit) less ``RESERVED``; None when
    the options set no ``num_ctx``; never below 0."""
    try:
        context = int(options["num_ctx"])
    except (KeyError, TypeError, ValueError):
        return None
    if context <= 0:
        return None
    try:
        reply = int(options.get("num_predict", 0) or 0)
    except (TypeError, ValueError):
        reply = 0
    return max(0, context - (reply if reply > 0 else default_reply) - RESERVED)


SUMMARY_SAMPLE: Final = (
    'I went north to the Yard with Bo and said, "The mill is warm today, number 12." Pat '
    "told me the bread was lost; I waved, looked around the hall and wrote a note.\n"
    'You say, "The well is loud today, number 169" (Nobody else is here to hear you.)\n'
    "Bo arrives from The Hall."
)
"""Text of a summary's kind, both ways summaries are made: a model's first-person prose
and an extractive summary's memory lines (``chars_per_token`` measures on it)."""


def chars_per_token(counter: TokenCounter) -> float:
    """How many characters of a summary's kind of text one token of ``counter`` holds at
    least: the fewest over ``SUMMARY_SAMPLE``'s lines (3.2 for SmolLM2's tokenizer, 1.8
    for ``ESTIMATE``, which counts English at about twice what SmolLM2 does, 1 for
    ``CHARACTERS``)."""
    return min(len(line) / max(1, counter.count(line)) for line in SUMMARY_SAMPLE.splitlines())


def fits(text: str, limit: int, counter: TokenCounter) -> bool:
    """``text`` takes at most ``limit`` tokens (its UTF-8 bytes are a bound no tokenizer
    passes, so a short text is not counted at all)."""
    return len(text) <= limit if counter is CHARACTERS else (
        _bytes(text) <= limit or counter.count(text) <= limit
    )  # fmt: skip


def cut_text(text: str, limit: int, counter: TokenCounter, *, keep_end: bool = False) -> str:
    """``text`` within ``limit`` tokens: cut at its end (``keep_end``: at its start) at
    a word boundary where there is one near, marked ``…``; "" when not even that fits."""
    if fits(text, limit, counter):
        return text
    if limit <= 0:
        return ""
    return _cut(text, limit, cast("Hashable", counter), keep_end)


_NEAR = 16
"""A cut looks this far (or a fifth of what it keeps) for a space to cut at."""


@functools.lru_cache(maxsize=256)
def _cut(text: str, limit: int, counter: Any, keep_end: bool) -> str:
    """``cut_text``'s search, remembered (a long part is cut the same way every turn);
    ``counter``: a ``TokenCounter`` (``Any``: the cache needs it hashable)."""

    def shortened(size: int) -> str:
        if size <= 0:
            return ""
        near = max(_NEAR, size // 5)  # how far to look for a word boundary
        if keep_end:
            piece = text[len(text) - size :]
            space = piece.find(" ", 0, near) if text[len(text) - size - 1] != " " else -1
            piece = piece[space + 1 :] if space >= 0 else piece
            return ELLIPSIS + piece.lstrip()
        piece = text[:size]
        space = piece.rfind(" ", size - near) if text[size] != " " else size
        piece = piece[:space] if space > 0 else piece
        return piece.rstrip(" ,;:-") + ELLIPSIS

    low, high = 0, len(text)  # shortened(low) fits (or is empty), shortened(high) does not
    guess = len(text) * limit // max(1, counter.count(text))
    while high - low > 1:
        middle = guess if low < guess < high else (low + high) // 2
        guess = -1
        if counter.count(shortened(middle)) <= limit:
            low = middle
        else:
            high = middle
    return shortened(low)
