"""Parsing one command line (pure, no I/O): ``verb args | private reason``.

``"hello`` is ``say hello`` and ``:waves`` is ``emote waves``. Quotes inside the text
are kept. Control characters (terminal escapes, NUL) are dropped, so nothing typed
can repaint a screen or reach a file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ESCAPES = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
"""Terminal escape sequences (CSI such as colours, OSC such as window titles), whole."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
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
    """Drop terminal escape sequences and control characters; tabs and newlines become spaces."""
    text = text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    return _CONTROL.sub("", _ESCAPES.sub("", text))


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
