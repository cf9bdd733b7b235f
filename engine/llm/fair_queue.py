"""The dispatcher's waiting line: priority order with aging (pure bookkeeping, no I/O).

    queue = FairQueue[str](bypass_limit=4)
    queue.push("summary", priority=1)
    queue.push("turn", priority=0)
    queue.pop().item                     # "turn": lower priority numbers go first

Requests are served lowest priority number first, first come first served within a
priority. Strict priority would let a steady stream of turns starve every summary, so
a waiting request *ages*: each time a request of a better priority is served while it
waits, it has been *bypassed* once; once bypassed ``bypass_limit`` times it is
*overdue*, and overdue requests go before everything else (the worst priority among
them first, so that serving one never bypasses another overdue one; oldest first
within a priority). So no request waits through more than ``bypass_limit`` (times its
patience, below) better-priority grants, and when nothing waits that long the order is
plain priority. It is not a fixed ratio: when
turns leave the slot free, summaries run at once; when many summaries are due, each
waits at most ``bypass_limit`` turns, so their share of the calls grows with what is
due. ``bypass_limit=None`` is strict priority (nothing ages).

A request pushed with ``patience=k`` lets ``k`` times as many better-priority grants go
first before it is overdue (it is counted as bypassed all the same). What no prompt waits
for, a human player's memory summaries, goes this way: a burst of fifty players'
summaries due at once then takes the slots turns leave free instead of every slot in
turn, yet none of them waits without limit.

A request pushed with ``urgent`` (a callable, asked each time the head is chosen) goes
before everything else while it answers True, oldest first: a compaction of a character
whose memory has fallen too far behind (``engine.memory.backpressure``). Each waiting
request counts the urgent ones that went before it that way (``passed_by_urgent``): a
turn that waited while compactions went first waited for memory (``held_for_memory``).
Urgency ages the other way too: a request passed by ``bypass_limit`` (times its
patience) urgent ones goes first, before them, so a crowd whose memory never catches up
(a player typing fast) starves no agent of its turns; the memory bound holds without
the model anyway (``engine.agents.compactor``). Overdue requests go before all of these,
so that no kind of aging makes a request wait through more than its limit.

``FairnessStats`` records, per priority, how many requests were granted and the most
times any of them was bypassed (``scripts/bench.py fairness`` and the tests read it).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")

DEFAULT_BYPASS_LIMIT = 4
"""How many better-priority grants a waiting request lets pass before it goes first."""


@dataclass(eq=False)
class Waiting(Generic[T]):
    item: T
    priority: int
    order: int
    """Arrival order (first come, first served)."""
    bypassed: int = 0
    """Better-priority requests served while this one waited."""
    patience: int = 1
    """Overdue after ``patience`` times the queue's ``bypass_limit`` (see the module)."""
    urgent: Callable[[], bool] | None = None
    """While it answers True the request goes first (see the module)."""
    passed_by_urgent: int = 0
    """Requests served before it for their urgency alone while it waited (it came first
    by priority and arrival, and was not urgent itself)."""


class FairQueue(Generic[T]):
    def __init__(self, bypass_limit: int | None = DEFAULT_BYPASS_LIMIT) -> None:
        if bypass_limit is not None and bypass_limit < 1:
            raise ValueError("bypass_limit must be at least 1 (or None: strict priority)")
        self.bypass_limit = bypass_limit
        self._waiting: list[Waiting[T]] = []
        self._order = itertools.count()

    def push(
        self,
        item: T,
        priority: int,
        *,
        patience: int = 1,
        urgent: Callable[[], bool] | None = None,
    ) -> Waiting[T]:
        if patience < 1:
            raise ValueError("patience must be at least 1")
        entry = Waiting(item, priority, next(self._order), patience=patience, urgent=urgent)
        self._waiting.append(entry)
        return entry

    def overdue(self, entry: Waiting[T]) -> bool:
        limit = self.bypass_limit
        return limit is not None and entry.bypassed >= limit * entry.patience

    def peek(self) -> Waiting[T] | None:
        """What ``pop`` would return (``_head``)."""
        return self._head()[0]

    def _head(self) -> tuple[Waiting[T] | None, bool]:
        """The head, and whether it goes first for its urgency alone: an overdue request
        (worst priority, then oldest), else one passed by ``bypass_limit`` urgent ones
        (oldest first), else an urgent one (oldest first), else the best priority
        (oldest first). Overdue ones go before the rest so that nobody is bypassed more
        than the limit, whichever kind of aging made another go first."""
        if not self._waiting:
            return None, False
        overdue = [entry for entry in self._waiting if self.overdue(entry)]
        if overdue:
            return min(overdue, key=lambda entry: (-entry.priority, entry.order)), False
        limit = self.bypass_limit
        for entry in self._waiting:  # (in arrival order: pushed in order, never reordered)
            if limit is not None and entry.passed_by_urgent >= limit * entry.patience:
                return entry, False
        for entry in self._waiting:
            if entry.urgent is not None and entry.urgent():
                return entry, True
        return min(self._waiting, key=lambda entry: (entry.priority, entry.order)), False

    def pop(self) -> Waiting[T]:
        """Take the head; every waiting request of a worse priority was bypassed once, and
        every one an urgent head went before for its urgency alone was passed by it."""
        head, jumped = self._head()
        if head is None:
            raise IndexError("pop from an empty FairQueue")
        self._waiting.remove(head)
        for entry in self._waiting:
            if entry.priority > head.priority:
                entry.bypassed += 1
            elif (
                jumped
                and (entry.priority, entry.order) < (head.priority, head.order)
                and not (entry.urgent is not None and entry.urgent())
            ):
                entry.passed_by_urgent += 1
        return head

    def remove(self, entry: Waiting[T]) -> None:
        """Forget a request that stopped waiting (cancelled); no-op if already gone."""
        if entry in self._waiting:
            self._waiting.remove(entry)

    def clear(self) -> list[Waiting[T]]:
        """Take everything, oldest first (shutdown)."""
        taken = sorted(self._waiting, key=lambda entry: entry.order)
        self._waiting.clear()
        return taken

    def __len__(self) -> int:
        return len(self._waiting)

    def __iter__(self) -> Iterator[Waiting[T]]:
        return iter(list(self._waiting))


@dataclass
class FairnessStats:
    """Per priority: requests granted, and the most better-priority grants one waited through."""

    granted: dict[int, int] = field(default_factory=dict)
    most_bypassed: dict[int, int] = field(default_factory=dict)

    def record(self, priority: int, bypassed: int) -> None:
        self.granted[priority] = self.granted.get(priority, 0) + 1
        self.most_bypassed[priority] = max(self.most_bypassed.get(priority, 0), bypassed)
