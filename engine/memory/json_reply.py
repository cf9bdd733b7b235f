"""Read the JSON a model wrote, however it wrapped it (pure).

Models put their JSON in code fences (with or without a language), after a line of
prose ("Here are the memories:"), before a closing remark, and with a comma after the
last item. ``parse_json_reply`` finds the first JSON array or object in such a reply
and reads it. The fenced blocks are tried first when a fence opens before any bracket,
the whole text first otherwise. In each, the first ``[`` or ``{`` whose matching close
makes valid JSON is taken (a bracketed aside in the prose, ``[see below]``, is passed
over); commas before a ``]`` or ``}`` outside strings are dropped; raw control
characters inside strings are let through. Anything else raises ``ReplyUnparseable``
with a one-line reason, and the caller retries or falls back.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

_FENCE: Final = re.compile(r"```[^\n`]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_OPEN: Final = {"[": "]", "{": "}"}
_STARTS_TRIED: Final = 50
"""Bracketed asides passed over at most, so a reply of brackets stays cheap."""


class ReplyUnparseable(ValueError):
    """The reply holds no JSON array or object that can be read."""


def parse_json_reply(text: str) -> Any:
    """The first JSON array or object in ``text`` (see the module's docstring)."""
    fences = [match.group(1) for match in _FENCE.finditer(text)]
    start, fence = _next_start(text, 0), text.find("```")
    fenced_first = fence >= 0 and (start < 0 or fence < start)
    regions = [*fences, text] if fenced_first else [text, *fences]
    first_error: str | None = None
    for region in regions:
        try:
            return _first_value(region)
        except ReplyUnparseable as exc:
            first_error = first_error or str(exc)
    raise ReplyUnparseable(first_error or "no JSON array or object in the reply")


def _first_value(text: str) -> Any:
    start = _next_start(text, 0)
    if start < 0:
        raise ReplyUnparseable("no JSON array or object in the reply")
    reason = ""
    for _ in range(_STARTS_TRIED):
        if start < 0:
            break
        cleaned = _balanced(text, start)
        if cleaned is None:
            opener = "array" if text[start] == "[" else "object"
            raise ReplyUnparseable(f"the JSON {opener} opened at character {start} never closes")
        try:
            return json.loads(cleaned, strict=False)
        except ValueError as exc:
            reason = reason or f"invalid JSON at character {start}: {_one_line(str(exc))}"
        start = _next_start(text, start + 1)
    raise ReplyUnparseable(reason or "no JSON array or object in the reply")


def _next_start(text: str, begin: int) -> int:
    found = [i for i in (text.find("[", begin), text.find("{", begin)) if i >= 0]
    return min(found) if found else -1


def _balanced(text: str, start: int) -> str | None:
    """The text from ``start`` to its matching close, with trailing commas dropped; None
    when it never closes. A closer of the wrong kind is left for ``json.loads`` to
    refuse."""
    stack: list[str] = []
    out: list[str] = []
    in_string = False
    escaped = False
    pending_comma = -1
    """Index in ``out`` of a comma outside strings not yet followed by a value."""
    for char in text[start:]:
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char in " \t\r\n":
            out.append(char)
            continue
        if char in "]}" and pending_comma >= 0:
            out[pending_comma] = ""
        pending_comma = -1
        if char == ",":
            pending_comma = len(out)
        elif char == '"':
            in_string = True
        elif char in _OPEN:
            stack.append(_OPEN[char])
        elif char in "]}":
            stack.pop()
            if not stack:
                out.append(char)
                return "".join(out)
        out.append(char)
    return None


def _one_line(text: str) -> str:
    return " ".join(text.split())
