"""Secrets by their shape (pure), for ``secrets.redact`` (issue 44): the shapes no
vendor rule names. (Values told in words near a credential word: ``secret_told``.)

- **Card numbers**: 13 to 19 digits, in one run or grouped as cards print them (fours,
  or Amex's 4-6-5, spaces or dashes), that pass the Luhn check, whole.
- **Random-looking tokens**: a run of 16 or more of ``A-Z a-z 0-9 + / _ -`` (``=``
  padding after it) with a digit and a letter that mixes upper and lower case (not
  mostly words run together, "WheatHarvest2026"), or is hexadecimal of 24 or more (not
  a 40-digit commit id, a UUID, or what the words before it call a hash or an id), or
  is 32 or more with a quarter of it digits; or 24 or more letters, a third of them
  capitals inside: the body of a key, a base64 credential, a vendor token no rule
  knows, a hex secret. Where a line ends in a piece of such a run and the next line
  starts with the rest (a key split over two lines), the joined run is judged.
- **A chosen password's shape** anywhere: 8 or more characters with upper and lower
  case, a digit and a symbol inside (``R7v!qLm2pX``); digits that open something ("7746
  opens the vestry", "unlocks with 246810").
- **Listed values** of a plural credential word ("backup codes: 8f3k-2m9q, 7p1x-4n6z"),
  and the password of a Wi-Fi QR code's text (``WIFI:T:WPA;S:x;P:password;;``).
- **Command-line passwords**: ``-pM1llstone!``, ``-p 'x'``, ``--token=x``.
- **``user/pass`` pairs**: ``name/value`` or ``name:value`` whose value reads as one
  and has a capital or a symbol (``admin/Secret#1``, ``root:Inkwell99``); never a URL's
  scheme, a path, a time, an address or a slug ("feature/password-reset-2").

``PLACEHOLDER`` is what stands for a secret kept elsewhere (``********``, ``${VAR}``,
``<token>``, ``[REDACTED]``): never a secret. Each finder gives ``(start, end)`` spans of
the value alone; ``redact_spans`` replaces them. Text that says ``[redacted]`` is never
matched again, so redaction is idempotent.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from typing import Final

REDACTED: Final = "[redacted]"
Span = tuple[int, int]

TRIGGERS: Final[tuple[str, ...]] = (*"0123456789", "wifi:", "-", "_", "/", ":", "+")
"""Every span this module finds holds one of these (lower case)."""
PLACEHOLDER: Final = re.compile(
    r"\*+|\$\{?[A-Za-z_]\w*\}?|<[^>]*>?|\[[A-Za-z][\w -]*\]|x{3,}|\.{3,}", re.IGNORECASE
)
"""A value that stands for a secret kept elsewhere: a mask, a variable, a name in brackets."""


# -- cards ----------------------------------------------------------------------------------

_CARD = re.compile(
    r"(?<![\w-])(?:\d{13,19}|\d{4}(?P<sep>[ -])\d{4}(?:(?P=sep)\d{4}){1,2}(?:(?P=sep)\d{1,3})?"
    r"|\d{4}(?P<amex>[ -])\d{6}(?P=amex)\d{5})(?![\w-])"
)
"""A card number as cards print it: one run, groups of four, or Amex's 4-6-5."""


def luhn(digits: str) -> bool:
    """Whether ``digits`` (digits only) pass the Luhn check."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def card_spans(text: str) -> list[Span]:
    found = []
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match[0])
        if 13 <= len(digits) <= 19 and luhn(digits) and len(set(digits)) > 2:
            found.append(match.span())
    return found


# -- random-looking tokens ------------------------------------------------------------------

_RUN = re.compile(r"(?<![\w+/#-])[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"[0-9a-fA-F]+")


def random_looking(token: str) -> bool:
    """A run that reads as a key, not a word (see the module)."""
    core = token.rstrip("=")
    if len(core) < 16 or "redacted" in core:
        return False
    digits = sum(c.isdigit() for c in core)
    if not digits:
        return _mixed_letters(core)
    if not any(c.isalpha() for c in core):
        return False
    if _HEX.fullmatch(core):
        return len(core) >= 24 and not (len(core) == 40 and core.islower())  # not a commit
    if len(core) >= 32 and digits * 4 >= len(core):
        return True  # a long run, a quarter of it digits: no word is written so
    upper, lower = any(c.isupper() for c in core), any(c.islower() for c in core)
    return upper and lower and len(set(core)) >= 10 and not _wordy(core) and not tag_like(core)


_TAG_WORD = re.compile(r"[A-Z]?[a-z]{4,}")


def tag_like(value: str) -> bool:
    """Parts joined by ``-``, ``_`` or ``.`` with a word among them: a model's tag or a
    name ("7b-instruct-q4_K_M", "Llama-3.2-1B-Instruct-GGUF"), not a key or a password."""
    parts = re.split(r"[-_.]", value)
    return len(parts) >= 2 and any(_TAG_WORD.fullmatch(part) for part in parts)


def _wordy(core: str) -> bool:
    """Mostly words run together ("WheatHarvest2026"): lower-case runs of four letters or
    more make up most of it (a random key's rarely do)."""
    return sum(len(run) for run in re.findall(r"[a-z]{4,}", core)) * 2 > len(core)


def _mixed_letters(core: str) -> bool:
    """Letters only, but as a random key mixes them: 24 or more, a third or more of them
    upper case after the first (a CamelCase name has about one in six)."""
    letters = [c for c in core[1:] if c.isalpha()]
    if len(core) < 24 or len(set(core)) < 12 or not letters or not set("_-+/") & set(core):
        return False
    share = sum(c.isupper() for c in letters) / len(letters)
    return 0.3 <= share <= 0.75


def random_spans(text: str) -> list[Span]:
    found = [m.span() for m in _RUN.finditer(text)
             if random_looking(m[0]) and not _an_identifier(text, m)]  # fmt: skip
    found += _split_over_lines(text)
    return found + _halves(text, found)


_PIECE = re.compile(r"(?<![\w+/-])[A-Za-z0-9+/_-]{8,}={0,2}")


def _halves(text: str, found: list[Span]) -> list[Span]:
    """The other half of a key split over two lines: on a line next to one that holds a
    key, a run of 8 or more with a digit and a capital inside ("first half: Zq8RwT3mXc\n
    and the rest: Lp0VbN6yHs2KjU9e")."""
    if "\n" not in text or not found:
        return []
    starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def line_of(at: int) -> int:
        return bisect.bisect_right(starts, at) - 1

    keyed = {line_of(start) for start, _ in found}
    near = {n for line in keyed for n in (line - 1, line + 1)} - keyed
    pieces = []
    for match in _PIECE.finditer(text):
        run = match[0]
        if line_of(match.start()) in near and any(c.isdigit() for c in run) \
                and any(c.isupper() for c in run[1:]) and any(c.islower() for c in run):  # fmt: skip
            pieces.append(match.span())
    return pieces


def _a_piece(run: str) -> bool:
    """A run that could be half a key: a digit, ``+`` or ``/`` in it, or a capital after
    its first letter ("Consolidated", a word that starts a line, is not)."""
    return any(c.isdigit() or c in "+/" for c in run) or any(c.isupper() for c in run[1:])


_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_HASH_WORDS = re.compile(
    r"(?:checksum|hash|sha-?\d*|md5|digest|commit|uuid|guid|id)\W{0,3}$", re.IGNORECASE
)


def _an_identifier(text: str, match: re.Match[str]) -> bool:
    """A UUID, or hexadecimal that the words before it call a hash or an id."""
    if _UUID.fullmatch(match[0]):
        return True
    return bool(_HEX.fullmatch(match[0]) and _HASH_WORDS.search(text[: match.start()][-24:]))


_TAIL = re.compile(r"([A-Za-z0-9+/_-]{6,})[ \t]*\n")
_HEAD = re.compile(r"[ \t]*([A-Za-z0-9+/_-]{6,}={0,2})(?![\w+/=-])")


def _split_over_lines(text: str) -> list[Span]:
    """A key split over two lines: the run that ends a line and the run that starts the
    next, when joined they read as a key."""
    found = []
    for tail in _TAIL.finditer(text):
        head = _HEAD.match(text, tail.end())
        if head is not None and _a_piece(tail[1]) and _a_piece(head[1]) \
                and random_looking(tail[1] + head[1]) \
                and not _HASH_WORDS.search(text[: tail.start(1)][-24:]):  # fmt: skip
            found += [tail.span(1), head.span(1)]
    return found


# -- command-line flags ---------------------------------------------------------------------

_FLAG = re.compile(
    r"(?<!\S)(?:-p|-k|--password|--passwd|--pass|--passphrase|--token|--secret|--api-key)"
    r"(?:[ \t]*=[ \t]*|[ \t]+|(?=[^\s-]))(?:'(?P<single>[^'\n]+)'|\"(?P<double>[^\"\n]+)\""
    r"|(?P<bare>[^\s'\"-]\S*))"
)


def flag_spans(text: str) -> list[Span]:
    """A password given on a command line: ``-pM1llstone!``, ``-p 'x'``, ``--token=x``
    (a bare value only when it looks like one)."""
    found = []
    for match in _FLAG.finditer(text):
        group = next(g for g in ("single", "double", "bare") if match[g] is not None)
        if group != "bare" or value_like(match[group]):
            found.append(match.span(group))
    return found


# -- values that say what they are ------------------------------------------------------------

DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{4}\b")
"""A date (``2026-12-07``, ``21/06/2019``): never a code."""
_CHOSEN = re.compile(r"(?<![\w@.:/])[^\s\"'`()<>\[\]{},;]{8,64}")
_OPENS = re.compile(
    r"(?<![\w-])(?P<value>[*#]*\d[\d-]{2,}[*#]*)\s+(?:opens|unlocks)\b"
    r"|\b(?:opens|unlocks)\s+(?:with|on)\s+(?P<after>[*#]*\d[\d-]{2,}[*#]*)(?![\w-])",
    re.IGNORECASE,
)


_LISTED = re.compile(
    r"\b(?:codes|pins|passwords|passcodes|tokens|keys)[ \t]*:[ \t]*"
    r"(?P<values>[^\s,;]+(?:[ \t]*[,;][ \t]*[^\s,;]+)*)",
    re.IGNORECASE,
)
_WIFI_QR = re.compile(r"WIFI:(?:[^;]*;)*?P:(?P<value>(?:\\.|[^;])+);", re.IGNORECASE)


def listed_spans(text: str) -> list[Span]:
    """Values a plural credential word lists ("backup codes: 8f3k-2m9q, 7p1x-4n6z"),
    each that looks like one (a count, "passwords: 2", is not); and the password of a
    Wi-Fi QR code's text (``WIFI:T:WPA;S:name;P:password;;``)."""
    found = [m.span("value") for m in _WIFI_QR.finditer(text)]
    for match in _LISTED.finditer(text):
        for value in re.finditer(r"[^\s,;]+", match["values"]):
            if value_like(value[0].rstrip(".")):
                start = match.start("values") + value.start()
                found.append((start, start + len(value[0].rstrip("."))))
    return found


def chosen_spans(text: str) -> list[Span]:
    """A chosen password's shape, wherever it stands: upper and lower case, a digit and
    a symbol inside (``R7v!qLm2pX``, ``W1ndm1ll$ails``); and digits that open something
    ("7746 opens the chapel vestry")."""
    found = [m.span("value" if m["value"] else "after") for m in _OPENS.finditer(text)
             if not DATE.fullmatch(m["value"] or m["after"])]  # fmt: skip
    for match in _CHOSEN.finditer(text):
        token = match[0].rstrip(".!?:")
        if "://" in token or ADDRESS.search(token) or "redacted" in token:
            continue
        if (any(c.isupper() for c in token) and any(c.islower() for c in token)
                and any(c.isdigit() for c in token) and SYMBOL.search(token[1:-1])):  # fmt: skip
            found.append((match.start(), match.start() + len(token)))
    return found


# -- user/pass pairs -------------------------------------------------------------------------

_PAIR = re.compile(
    r"(?<![\w./:@-])[A-Za-z][\w.-]{0,31}[/:](?!//)(?P<value>[^\s/:,;'\"()<>\[\]]{4,64})"
)
SYMBOL = re.compile(r"[!@#$%^&*~+=?|\\]")
ADDRESS = re.compile(r"@[\w-]+\.[A-Za-z]")
"""An address (``bo@example.com``), not a password."""


def pair_spans(text: str) -> list[Span]:
    found = []
    for match in _PAIR.finditer(text):
        value = match["value"].rstrip(".!?")
        mixed = (
            any(c.isupper() for c in value)
            or SYMBOL.search(value)
            or (not {"-", "_"} & set(value) and re.search(r"[a-z][0-9]|[0-9][a-z]", value))
        )  # "admin/fenlight2025"; not a slug, "feature/login-fix-2"
        if _HEX.fullmatch(value) and len(value) >= 16:
            continue  # "sha256:8950ab...": a digest, not a chosen password
        if tag_like(value):
            continue  # "qwen2.5:7b-instruct-q4_K_M": a model's tag
        if value_like(value) and mixed and not ADDRESS.search(value) and "\\" not in value:
            start = match.start("value")
            found.append((start, start + len(value)))
    return found


# -- what reads as a value -----------------------------------------------------------------


def value_like(token: str) -> bool:
    """A word that reads as a value: a digit and a letter, a letter and a symbol, or a
    case change inside it (``ThreeBlind``)."""
    if MEASURE.fullmatch(token) or PATH.search(token):
        return False  # "12th", "10am", "5kg": a count or a time; "~/.ssh/id_ed25519.pub"
    letters = any(c.isalpha() for c in token)
    if letters and any(c.isdigit() for c in token):
        return True
    inner = token[1:-1]
    if letters and SYMBOL.search(inner):
        return True
    return any(a.islower() and b.isupper() for a, b in itertools.pairwise(token))


PATH = re.compile(r"^~?/|^[A-Za-z]:\\|/[^/]*\.[A-Za-z]{1,5}$|\\")
MEASURE = re.compile(r"\d+(?:st|nd|rd|th|am|pm|s|kg|km|cm|mm|m|g|h|ft|in|x|%)", re.IGNORECASE)


# -- replacing -------------------------------------------------------------------------------


def redact_spans(text: str, spans: Iterable[Span]) -> str:
    """``text`` with each span (merged where they overlap) replaced by ``[redacted]``."""
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + REDACTED + text[end:]
    return text


def shape_spans(text: str) -> list[Span]:
    """Every span this module finds in ``text``."""
    return [*card_spans(text), *random_spans(text), *pair_spans(text), *flag_spans(text),
            *chosen_spans(text), *listed_spans(text)]  # fmt: skip
