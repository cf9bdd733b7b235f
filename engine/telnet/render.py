"""Text for a MUD client, as pure functions: what the world says, made safe, wrapped at
the client's width and coloured by the kind of what happened.

The colours are the terminal UI's (``engine.tui.render.KIND_STYLES``: speech bold cyan,
movement green, building yellow ...), rendered as ANSI SGR sequences of the 16
standard colours by Rich. Text from the world may hold anything an agent wrote, so
control characters (an escape that would clear the player's screen) are taken out
before it is wrapped; each line is coloured on its own, so a wrapped line never
carries a colour over the line end.
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Sequence
from typing import Final

from rich.color import ColorSystem
from rich.style import Style

from engine.tui.render import FAILURE_STYLE, KIND_STYLES
from engine.world.events import EventKind

DEFAULT_WIDTH: Final = 80
MIN_WIDTH: Final = 10
MAX_WIDTH: Final = 1000
NO_COLOUR_TERMINALS: Final = frozenset({"dumb", "unknown", ""})
MTTS_ANSI: Final = 1
"""MTTS bit 1: the client speaks ANSI colour (https://tintin.mudhalla.net/protocols/mtts/)."""
NOTICE_STYLE: Final = "bold yellow"
"""The server's own words (a refused line, the world stopping)."""
CR_LF: Final = "\r\n"
"""Telnet's new line (RFC 854)."""
CR_NUL: Final = "\r\0"
"""Telnet's carriage return alone (RFC 854): back to the start of the line."""
_LINE_END = re.compile(r"\r\n|\r\0|\r|\n")
_BARE = re.compile(r"\r(?![\n\0])|(?<!\r)\n")

__all__ = [
    "FAILURE_STYLE",
    "NOTICE_STYLE",
    "event_style",
    "lines_for",
    "nvt_line_ends",
    "safe_text",
    "supports_colour",
    "wrap",
    "wrap_width",
]


def event_style(kind: EventKind) -> str:
    """The style the TUI gives ``kind``."""
    return KIND_STYLES.get(kind, "")


def safe_text(text: str) -> str:
    """``text`` with every control character but the line break taken out (a tab
    becomes a space, CR LF and CR become a line break)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    return "".join(ch for ch in text if ch == "\n" or ch.isprintable())


def nvt_line_ends(text: str) -> str:
    """``text`` as telnet wants its line ends (RFC 854): every LF that is not one already
    as CR LF, every other CR as CR NUL."""
    if _BARE.search(text) is None:  # what the server writes, as a rule
        return text
    return _LINE_END.sub(_nvt_end, text)


def _nvt_end(found: re.Match[str]) -> str:
    end = found.group()
    return CR_NUL if end == "\r" else CR_LF if end == "\n" else end


def wrap_width(cols: object) -> int:
    """The width to wrap at for what NAWS reported (80 when nothing usable was)."""
    if not isinstance(cols, int) or isinstance(cols, bool) or cols <= 0:
        return DEFAULT_WIDTH
    return max(MIN_WIDTH, min(MAX_WIDTH, cols))


def wrap(text: str, width: int) -> list[str]:
    """``text``'s lines, each wrapped to at most ``width`` characters (a word longer
    than that is cut); an empty line stays an empty line."""
    lines: list[str] = []
    for line in safe_text(text).split("\n"):
        if len(line) <= width:  # what textwrap makes of a line that fits, without it
            lines.append(line.rstrip() if line.strip() else "")
            continue
        pieces = textwrap.wrap(line, width, break_on_hyphens=False, drop_whitespace=True)
        lines.extend(pieces or [""])
    return lines


@functools.cache
def _style(style: str) -> Style:
    return Style.parse(style) if style else Style.null()


def paint(line: str, style: str, colour: bool) -> str:
    """``line`` in ``style`` as ANSI (plain when not ``colour``, or no style)."""
    if not colour or not style or not line:
        return line
    return _style(style).render(line, color_system=ColorSystem.STANDARD)


def lines_for(text: str, width: int, style: str = "", *, colour: bool = True) -> list[str]:
    """``text`` as the lines a client is sent: safe, wrapped at ``width``, coloured."""
    return [paint(line, style, colour) for line in wrap(text, width)]


def supports_colour(terminal_types: Sequence[str]) -> bool:
    """Whether a client that announced ``terminal_types`` (TTYPE, in order) shows ANSI
    colour: an MTTS bit field says so exactly; otherwise a dumb terminal, or one that
    announced nothing at all (a raw socket), gets none."""
    for name in terminal_types:
        words = name.strip().split()
        if len(words) == 2 and words[0].upper() == "MTTS" and words[1].isdigit():
            return bool(int(words[1]) & MTTS_ANSI)
    named = [t.strip().lower() for t in terminal_types if t.strip().lower() != "unknown"]
    return bool(named) and not all(t in NO_COLOUR_TERMINALS for t in named)
