"""Whether the summarizer answers, and what memory does while it does not (pure).

A summary call that fails with a server error (HTTP 5xx, a timeout, a refused
connection: the dispatcher has already retried it) counts against the summarizer;
any answer, even one the gate rejects, counts for it. After ``FAILING_AFTER`` failed
calls in a row the summarizer is *failing*: every summary step is made extractively
at once (``method: extractive``), with no call, so memory keeps its bound and no agent
waits for a server that does not answer. While failing, one step every
``TRY_AGAIN_AFTER`` seconds asks the model again; its answer ends the failing.

Each change is said once, as a line people read (``notice``):

    summaries failing: HTTP 500: internal error (1 since 10:42:03); retrying
    summaries failing: HTTP 500: internal error (2 since 10:42:03); writing extractive summaries
    summaries answer again after 14 failed calls; the model writes them

The first failure is said at once (the dispatcher's retries take seconds), so a run
says its memory is in trouble well within 10 s of the first failed request. Times
are the wall clock's (``engine.wallclock``), so a replay decides as the run did.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final

FAILING_AFTER: Final = 2
"""Failed summary calls in a row after which summaries are made extractively."""
TRY_AGAIN_AFTER: Final = 60.0
"""Seconds between two tries of the model while it is failing."""


@dataclass
class SummarizerHealth:
    failed_in_a_row: int = 0
    since: datetime | None = None
    """When the first failure in a row happened."""
    last_error: str | None = None
    last_try: datetime | None = None
    """When a step last asked the model while it was failing."""

    @property
    def failing(self) -> bool:
        return self.failed_in_a_row >= FAILING_AFTER

    def use_model(self, now: datetime) -> bool:
        """Whether a summary step starting ``now`` asks the model (else: extractive)."""
        if not self.failing:
            return True
        if self.last_try is None or (now - self.last_try).total_seconds() >= TRY_AGAIN_AFTER:
            self.last_try = now
            return True
        return False

    def failed(self, now: datetime, error: str) -> str | None:
        """A summary call failed with a server error: the line to say, if any."""
        self.failed_in_a_row += 1
        self.last_error = error
        if self.since is None:
            self.since = now
        if self.failed_in_a_row == FAILING_AFTER:
            self.last_try = now  # the next try of the model waits TRY_AGAIN_AFTER
        if self.failed_in_a_row in (1, FAILING_AFTER):
            return self.describe()
        return None

    def answered(self) -> str | None:
        """A summary call was answered: the line to say, if a failure was said."""
        count = self.failed_in_a_row
        self.failed_in_a_row, self.since, self.last_error, self.last_try = 0, None, None, None
        if count:
            calls = "call" if count == 1 else "calls"
            return f"summaries answer again after {count} failed {calls}; the model writes them"
        return None

    def describe(self) -> str | None:
        """``summaries failing: <error> (<n> since <time>); writing extractive summaries``
        while it fails (None while it answers)."""
        if self.failed_in_a_row == 0 or self.since is None:
            return None
        doing = "writing extractive summaries" if self.failing else "retrying"
        since = f"{self.since.astimezone(UTC):%H:%M:%S} UTC"  # never the process's zone
        return (
            f"summaries failing: {self.last_error} ({self.failed_in_a_row} since {since}); {doing}"
        )
