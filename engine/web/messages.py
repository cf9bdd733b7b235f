"""The websocket's messages, as pure functions: JSON text in both directions.

Server to page::

    {"type": "hello", "world": "Fixture", "max_line": 4000}
    {"type": "text", "text": "...", "style": "bold cyan", "classes": ["s-bold", "s-cyan"]}
    {"type": "prompt", "text": "Password: ", "hidden": true}
    {"type": "gmcp", "package": "Room.Info", "data": {...}}     (as telnet's GMCP)
    {"type": "here", "room": "hall", "names": ["Ada", "Pip"]}    (who is in the room)
    {"type": "close", "text": "The world is stopping now; ..."}

Page to server: ``{"type": "line", "text": "look"}``; anything else is answered with
one notice (``Refused``) and otherwise ignored.

A style is a Rich style name, as the TUI's (``engine.telnet.render.event_style``); the
page colours by ``classes``, one ``s-WORD`` class per word of the style it knows, so a
style it does not know shows plain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from engine.telnet.render import safe_text

COLOURS: Final = frozenset({"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"})
STYLE_WORDS: Final = (
    frozenset({"bold", "dim", "italic", "underline", "reverse", "strike"})
    | COLOURS
    | frozenset(f"bright_{colour}" for colour in COLOURS)
)
"""The Rich style words the page has a CSS class for (``s-bold``, ``s-bright_red`` ...)."""
EXPECTED: Final = 'a message the page sends: {"type": "line", "text": "..."}'


@dataclass(frozen=True, slots=True)
class Refused:
    """A message that is not a line: why (one sentence for the player)."""

    text: str


def css_classes(style: str) -> list[str]:
    """The page's classes for a Rich ``style`` ("bold cyan" -> s-bold, s-cyan); words it
    has no class for (a background, a hex colour) are left out."""
    return [f"s-{word}" for word in style.lower().split() if word in STYLE_WORDS]


def encode(message: dict[str, Any]) -> str:
    """``message`` as the JSON text of one websocket message."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def text(text: str, style: str = "", *, colour: bool = True) -> str:
    """A ``text`` message: ``text`` made safe (no control characters but line breaks),
    in ``style`` when the player has colour on."""
    style = style if colour else ""
    return encode({"type": "text", "text": safe_text(text), "style": style,
                   "classes": css_classes(style)})  # fmt: skip


def prompt(text: str, *, hidden: bool) -> str:
    return encode({"type": "prompt", "text": safe_text(text), "hidden": hidden})


def gmcp(package: str, data: Any) -> str:
    return encode({"type": "gmcp", "package": package, "data": data})


def here(room_id: str, names: list[str]) -> str:
    return encode({"type": "here", "room": room_id, "names": names})


def close(text: str | None) -> str:
    return encode({"type": "close", "text": safe_text(text or "")})


def hello(world: str, max_line: int) -> str:
    return encode({"type": "hello", "world": world, "max_line": max_line})


def parse(raw: str | bytes) -> str | Refused:
    """The text of a ``line`` message, or why ``raw`` is not one."""
    if isinstance(raw, bytes):
        return Refused(f"That was a binary message; this game only reads {EXPECTED}. "
                       "It was ignored.")  # fmt: skip
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return Refused(f"That message was not JSON; this game only reads {EXPECTED}. "
                       "It was ignored.")  # fmt: skip
    if not isinstance(message, dict) or message.get("type") != "line":
        return Refused(f"That message was not understood; this game only reads {EXPECTED}. "
                       "It was ignored.")  # fmt: skip
    line = message.get("text")
    if not isinstance(line, str):
        return Refused('That line message had no "text" string; it was ignored.')
    return line
