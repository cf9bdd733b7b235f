"""What a connection may send, as pure rules (no I/O; time is a function passed in).

- ``LineAssembler``: the text a client sends, cut into lines at telnet's line ends
  (CR LF, CR NUL, a lone CR or LF); a line longer than the limit is never kept whole in
  memory: it is dropped as it arrives and reported once, with its length, when it ends.
- ``clean_line``: a line as the parser may see it: ANSI escape sequences and control
  characters out, backspace and DEL applied; a line the client's bytes did not decode
  to (it holds U+FFFD) is not text and is refused.
- ``RateLimiter``: a token bucket (``rate`` lines a second, a burst of as many); a
  line that comes too fast is told how long to wait for its turn.
- ``HourlyBudget``: at most so many uses an hour by each key (commands that spend
  model calls, for players below the role that may run them freely).

Who may connect and how fast logins are answered is ``engine.telnet.admission``.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

Clock = Callable[[], float]

_LINE_END = re.compile(r"\r\n|\r\x00|\r|\n")
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|O.?|[ -/]*[0-~]?)")
"""ANSI/VT escape sequences: CSI (arrow keys, colours), SS3 (keypad), and two-byte
escapes; a sequence cut short at the end of the line goes too."""
_ERASE: Final = frozenset("\b\x7f")
REPLACEMENT: Final = "\ufffd"


@dataclass(frozen=True, slots=True)
class TooLong:
    """A line that went past the limit: how many characters it had."""

    length: int


class LineAssembler:
    """Cuts a client's text into lines of at most ``limit`` characters."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._partial: list[str] = []
        self._partial_length = 0
        self._dropping = False
        """The line in progress went past the limit: its text is no longer kept."""
        self._after_cr = False
        """The last text ended with CR: an LF or NUL first in the next is its pair."""

    @property
    def pending(self) -> int:
        """Characters of the unfinished line received so far."""
        return self._partial_length

    def feed(self, text: str) -> list[str | TooLong]:
        """The lines ``text`` completes, in order (a line without its end is kept for
        the next ``feed``)."""
        if self._after_cr and text[:1] in ("\n", "\x00"):
            text = text[1:]
        self._after_cr = text.endswith("\r")
        done: list[str | TooLong] = []
        start = 0
        for end in _LINE_END.finditer(text):
            self._add(text[start : end.start()])
            done.append(self._finish())
            start = end.end()
        self._add(text[start:])
        return done

    def _add(self, piece: str) -> None:
        if not piece:
            return
        self._partial_length += len(piece)
        if self._partial_length > self.limit:
            self._dropping = True
            self._partial.clear()
        elif not self._dropping:
            self._partial.append(piece)

    def _finish(self) -> str | TooLong:
        line: str | TooLong = (
            TooLong(self._partial_length) if self._dropping else "".join(self._partial)
        )
        self._partial.clear()
        self._partial_length = 0
        self._dropping = False
        return line


def clean_line(line: str) -> str | None:
    """``line`` as the parser may see it, or None when it is not text (it holds bytes
    that did not decode: U+FFFD). Escape sequences and control characters go (a tab is
    a space); backspace and DEL erase the character before them."""
    if REPLACEMENT in line:
        return None
    line = _ESCAPE.sub("", line)
    kept: list[str] = []
    for ch in line:
        if ch in _ERASE:
            if kept:
                kept.pop()
        elif ch == "\t":
            kept.append(" ")
        elif ch.isprintable() or ch == " ":
            kept.append(ch)
    return "".join(kept)


class RateLimiter:
    """A token bucket: ``rate`` lines a second, at most ``rate`` (rounded up) at once;
    a line that comes too fast waits its turn (``reserve``)."""

    def __init__(self, rate: float, clock: Clock = time.monotonic) -> None:
        self.rate = rate
        self.burst = max(1.0, float(-(-rate // 1)))
        self.clock = clock
        self._tokens = self.burst
        self._last = clock()

    def reserve(self) -> float:
        """Take the next token: the seconds to wait before using it (0: at once). Calls
        one after another (each waiting its time) keep to ``rate`` a second."""
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0.0 else -self._tokens / self.rate


class HourlyBudget:
    """At most ``per_hour`` uses an hour by each key (a sliding hour)."""

    def __init__(self, per_hour: int, clock: Clock = time.monotonic) -> None:
        self.per_hour, self.clock = per_hour, clock
        self._uses: dict[str, deque[float]] = {}

    def take(self, key: str) -> bool:
        """Use one if the hour has one left (True), else False (nothing is used)."""
        now = self.clock()
        uses = self._uses.setdefault(key, deque())
        while uses and uses[0] <= now - 3600.0:
            uses.popleft()
        if len(uses) >= self.per_hour:
            return False
        uses.append(now)
        return True
