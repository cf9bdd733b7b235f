"""When memory comes faster than the summarizer folds it (pure bookkeeping).

The memory bound (``engine.memory.backpressure.bound``) commits a character's due
chunk extractively the moment a memory would take it past the bound. Once that has
happened, the model is not keeping up with that character: its summary requests stop
being urgent (they would mostly upgrade what is committed, and no turn should wait for
that). When it happens twice within ``OUTRUN_SECONDS`` (a player typing fast, not one
burst), the character is *outrun* for that long: its chunks are made extractively as
they fall due, and calls in flight for a chunk already committed are cancelled.

Times are the wall clock's as the caller reads it (``engine.wallclock``: a replay
decides as the run did).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

OUTRUN_SECONDS: Final = 30.0
"""How long a character stays outrun after the bound last committed it at once."""
KEPT_UP_AFTER: Final = 4
"""Commits the model makes in time, after the bound committed a character at once,
before its requests are urgent again."""


@dataclass
class Outruns:
    last: dict[str, datetime] = field(default_factory=dict)
    """When the bound last committed each character's memories at once."""
    since: dict[str, datetime] = field(default_factory=dict)
    """When each outrun character was last committed at once (while outrun)."""
    behind: dict[str, int] = field(default_factory=dict)
    """Characters not urgent now -> the model's commits in time still to come first."""

    def committed_at_once(self, key: str, now: datetime) -> bool:
        """The bound committed ``key``'s memories at once ``now``: whether that makes it
        outrun (a second time within ``OUTRUN_SECONDS``)."""
        self.behind[key] = KEPT_UP_AFTER
        last, self.last[key] = self.last.get(key), now
        if last is not None and (now - last).total_seconds() < OUTRUN_SECONDS:
            self.since[key] = now
            return True
        return False

    def kept_up(self, key: str) -> None:
        """The model committed ``key``'s chunk in time (before the bound had to)."""
        left = self.behind.pop(key, 0) - 1
        if left > 0:
            self.behind[key] = left

    def not_urgent(self, key: str) -> bool:
        """The bound committed ``key`` at once, and the model has not kept up with it
        ``KEPT_UP_AFTER`` times since: its requests are not urgent (counted, not timed:
        urgency is asked whenever the dispatcher picks, which no replay repeats)."""
        return key in self.behind

    def maybe(self, key: str) -> bool:
        """``key`` may be outrun (ask ``outrun`` with the time; without, no clock is read)."""
        return key in self.since

    def outrun(self, key: str, now: datetime) -> bool:
        """``key`` is outrun ``now``."""
        since = self.since.get(key)
        return since is not None and (now - since).total_seconds() < OUTRUN_SECONDS
