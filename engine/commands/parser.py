"""Parsing one command line (pure, no I/O): ``verb args | private reason``.

``"hello`` is ``say hello`` and ``:waves`` is ``emote waves``. Quotes inside the text
are kept. Control characters (terminal escapes, NUL) are dropped, so nothing typed
can repaint a screen or reach a file name; so are bidi overrides and isolates (they
would make the rest of a line read in another order than it was typed), lone
surrogates (undecodable bytes in a command-line argument) and the noncharacters
U+FFFE/U+FFFF (YAML cannot hold them). Every line break (U+2028 and U+2029 too, which
YAML reads as line breaks) becomes a space, so no name typed here can start a new line
in a vault file.

A line is taken in NFKC first (``engine.world.unicode_names.normalized``), as people
type it: full-width ``ｌｏｏｋ`` is ``look``, ``｜`` is the reason's bar, a ligature
``ﬁ`` is ``fi``; so a command reads the same whatever width an input method gave it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.world.unicode_names import normalized

_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
"""Terminal escape sequences (CSI such as colours, OSC such as window titles), whole."""
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
"""C0 and C1 controls, bidi embeddings/overrides/isolates, surrogates, U+FFFE/U+FFFF."""
_LINE_BREAKS = re.compile(r"[\t\n\r\u2028\u2029]")
SHORTCUTS = {'"': "say", ":": "emote"}


@dataclass(frozen=True, slots=True)
class ParsedLine:
    verb: str
    """Lower-cased; may be unknown (the registry corrects or refuses it)."""
    args: str
    reason: str | None
    """Text after the first ``|``: private, never shown to other characters."""
    text: str
    """The command as typed, without the reason (what a memory says was tried)."""


def clean(text: str) -> str:
    """``text`` in NFKC without terminal escape sequences and control characters; tabs
    and line breaks become spaces. Cleaning a clean text changes nothing."""
    text = _LINE_BREAKS.sub(" ", normalized(text))
    # what was dropped may have kept a letter and its mark apart: NFKC once more
    return normalized(_CONTROL.sub("", _ESCAPES.sub("", text)))


def parse_line(line: str) -> ParsedLine | None:
    """Parse ``line``; None when it holds no command at all."""
    command, bar, reason = clean(line).partition("|")
    command = command.strip()
    private = reason.strip() if bar and reason.strip() else None
    if not command:
        return None
    if command[0] in SHORTCUTS:
        verb, args = SHORTCUTS[command[0]], command[1:].strip()
        if command[0] == '"' and len(args) > 1 and args.endswith('"') and '"' not in args[:-1]:
            args = args[:-1].rstrip()
        return ParsedLine(verb, args, private, command)
    head, *rest = command.split(None, 1)
    return ParsedLine(head.lower(), rest[0].strip() if rest else "", private, command)
