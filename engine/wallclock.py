"""The one seam for what a run cannot repeat by itself: wall-clock readings and random
tokens. Everything the vault stamps with the time of day (a memory's ``at``, a summary's
``updated`` and history file name, a knowledge pass's id, a note's dates) and every
random id (a knowledge entry's) comes from here.

Live, ``now()`` is ``datetime.now(UTC)`` and ``token_hex(n)`` is ``secrets.token_hex(n)``.
A run being recorded adds a listener that hears every draw in order (the run record's
``draws.jsonl``); a replay installs a ``Script`` that serves the recorded draws back in
the same order, so a replayed vault is stamped exactly as the recorded one was. A draw
the script does not have, or of another kind, is ``DrawMismatch``: the replay has left
the recorded path.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Literal, NoReturn

Kind = Literal["now", "token"]
Draw = tuple[Kind, str]
"""("now", an ISO time with its offset) or ("token", the hex string)."""


class DrawMismatch(Exception):
    """A replay asked for a draw the recording does not have next."""


@dataclass
class Script:
    """Recorded draws, served in order."""

    draws: Sequence[Draw]
    position: int = 0
    failure: str | None = None
    """The first mismatch (kept: the code that drew may have caught the exception)."""

    def next(self, kind: Kind) -> str:
        if self.position >= len(self.draws):
            self._fail(f"draw {self.position + 1}: the recording has no more ({kind} asked)")
        recorded = self.draws[self.position]
        if recorded[0] != kind:
            self._fail(f"draw {self.position + 1}: the recording has a {recorded[0]}, the "
                       f"replay asked for a {kind}")  # fmt: skip
        self.position += 1
        return recorded[1]

    def _fail(self, message: str) -> NoReturn:
        self.failure = self.failure or message
        raise DrawMismatch(message)


@dataclass
class _State:
    listeners: list[Callable[[Draw], None]] = field(default_factory=list)
    script: Script | None = None


_state = _State()


def now() -> datetime:
    """The time of day, UTC (aware)."""
    if _state.script is not None:
        moment = datetime.fromisoformat(_state.script.next("now"))
    else:
        moment = datetime.now(UTC)
    if _state.listeners:
        _tell(("now", moment.isoformat()))
    return moment


def utc_iso() -> str:
    """``now()`` as the vault writes it: ISO 8601, microseconds, ``Z``."""
    if _state.script is None:  # live; a recorded run hears the same moment
        text = utc_text(time.time())
        if _state.listeners:
            _tell(("now", text[:-1] + "+00:00"))
        return text
    return now().astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"


def utc_text(moment: float) -> str:
    """The POSIX time ``moment`` as ``utc_iso`` writes it; the text up to the seconds is
    made once a second (every memory of a busy room is stamped)."""
    second, micro = _split(moment)
    kept = _utc_second[0]  # read once: another thread may replace it
    if kept[0] != second:
        kept = _utc_second[0] = (second, datetime.fromtimestamp(second, UTC).isoformat()[:19])
    return f"{kept[1]}.{micro:06d}Z"


def local_iso(moment: float) -> str:
    """``datetime.fromtimestamp(moment).astimezone().isoformat()`` (a run record's event
    time), the local zone's offset looked up once a minute (an offset changes only on a
    minute's boundary) and the text up to the seconds made once a second."""
    second, micro = _split(moment)
    kept = _local_second[0]  # read once: another thread may replace it
    if kept[0] != second:
        minute = second // 60
        cached, zone = _zone[0]
        if minute != cached or zone is None:
            zone = datetime.fromtimestamp(minute * 60).astimezone().tzinfo
            _zone[0] = (minute, zone)
        kept = _local_second[0] = (second, datetime.fromtimestamp(second, zone).isoformat())
    shown = kept[1]  # YYYY-MM-DDTHH:MM:SS+HH:MM
    return f"{shown[:19]}.{micro:06d}{shown[19:]}" if micro else shown


def _split(moment: float) -> tuple[int, int]:
    """``moment`` as whole seconds and microseconds (rounded, as ``datetime`` rounds)."""
    second = int(moment // 1)
    micro = round((moment - second) * 1e6)
    return (second + 1, 0) if micro == 1_000_000 else (second, micro)


_utc_second: list[tuple[int, str]] = [(-1, "")]
"""The second (since the epoch) last written by ``utc_text``, and its text."""
_local_second: list[tuple[int, str]] = [(-1, "")]
"""The same for ``local_iso``."""
_zone: list[tuple[int, tzinfo | None]] = [(-1, None)]
"""The minute (since the epoch) the local time zone was last looked up in, and its offset."""


def token_hex(nbytes: int) -> str:
    """Random hex (``2 * nbytes`` digits), as ``secrets.token_hex``."""
    value = _state.script.next("token") if _state.script is not None else secrets.token_hex(nbytes)
    _tell(("token", value))
    return value


def _tell(draw: Draw) -> None:
    for listener in list(_state.listeners):
        listener(draw)


@contextmanager
def listening(listener: Callable[[Draw], None]) -> Iterator[None]:
    """Tell ``listener`` every draw while the block runs (a recorded run)."""
    _state.listeners.append(listener)
    try:
        yield
    finally:
        _state.listeners.remove(listener)


@contextmanager
def scripted(script: Script) -> Iterator[Script]:
    """Serve ``script``'s draws instead of the clock and the random source (a replay)."""
    previous, _state.script = _state.script, script
    try:
        yield script
    finally:
        _state.script = previous


def release_script() -> Script | None:
    """End a script early (a fork goes live at its branch point); the script it was."""
    script, _state.script = _state.script, None
    return script
