"""Password checks, fair and bounded (issue 45): whose check runs next, and when.

A login's password is checked (scrypt: tens of milliseconds and 16 MB, ``at_once`` at a
time) only when its turn comes:

- addresses take turns (round robin), so one address's many connections never push
  another address's check back by more than one turn each;
- the checks of one name, and of one address, run one at a time, and each starts only
  when ``LoginThrottle`` says both may: after ``free`` failures, ``first`` seconds after
  the last check ended, doubling with each failure;
- a check whose client has gone is dropped before it runs: it is neither run nor
  logged, and takes no one's turn;
- the answer comes as soon as the check has run, right or wrong: the whole wait is
  before the check and depends only on failures already counted, so a client that
  gives up early learns nothing from how long it waited.

``CheckQueue`` is the rule (pure: no I/O, time passed in); ``PasswordChecks`` runs it on
the event loop (``turn``). Neither ``limits`` nor ``aiolimiter`` fits the rule: both
are fixed rates (a moving window, a leaky bucket), and this schedule is a backoff that
grows with each failure, per name and per address at once, with turns shared fairly
among addresses and checks dropped when their client leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from engine.telnet.admission import LoginThrottle


class Dropped(Exception):
    """The check was dropped: its client had gone before its turn came."""


@dataclass(eq=False)
class Pending:
    """A check waiting for its turn."""

    address: str
    name: str
    """The name typed (an account's or not: both wait alike)."""
    wanted: Callable[[], bool]
    """False once its client has gone."""


@dataclass
class Turn:
    """A check that is running: its body says whether the login failed."""

    failed: bool = False


@dataclass
class CheckQueue:
    """The checks waiting and running (see the module)."""

    throttle: LoginThrottle
    at_once: int = 2
    _waiting: OrderedDict[str, list[Pending]] = field(default_factory=OrderedDict)
    """Address -> its checks, first come first; the next address to serve first."""
    _running: list[Pending] = field(default_factory=list)

    def __len__(self) -> int:
        return sum(len(checks) for checks in self._waiting.values())

    def add(self, check: Pending) -> None:
        self._waiting.setdefault(check.address, []).append(check)

    def remove(self, check: Pending) -> None:
        """Forget ``check``, waiting or running (its client's task was cancelled)."""
        if check in self._running:
            self._running.remove(check)
            return
        checks = self._waiting.get(check.address, [])
        if check in checks:
            checks.remove(check)
            if not checks:
                del self._waiting[check.address]

    def done(self, check: Pending, *, failed: bool) -> None:
        """``check`` ran: the throttle counts it."""
        self.remove(check)
        self.throttle.checked(check.address, check.name, failed=failed)

    def next(self) -> tuple[list[Pending], list[Pending], float | None]:
        """(the checks dropped, those whose turn it is now, and when one that must wait
        for its time may start: None when none waits for time)."""
        dropped = self._drop_unwanted()
        started: list[Pending] = []
        while len(self._running) < self.at_once:
            check, wake = self._first_ready()
            if check is None:
                return dropped, started, wake
            self.remove(check)
            if check.address in self._waiting:  # its address goes to the back
                self._waiting.move_to_end(check.address)
            self._running.append(check)
            started.append(check)
        return dropped, started, None

    def _drop_unwanted(self) -> list[Pending]:
        dropped = []
        for address, checks in list(self._waiting.items()):
            kept = [check for check in checks if check.wanted()]
            dropped += [check for check in checks if check not in kept]
            if kept:
                self._waiting[address] = kept
            else:
                del self._waiting[address]
        return dropped

    def _first_ready(self) -> tuple[Pending | None, float | None]:
        """The first check, address by address in turn, that may start now; else None and
        the earliest time one that is not kept back by a running check may start."""
        now, wake = self.throttle.clock(), None
        busy = {c.address for c in self._running}, {c.name.casefold() for c in self._running}
        for checks in self._waiting.values():
            for check in checks:
                if check.address in busy[0] or check.name.casefold() in busy[1]:
                    continue
                ready = self.throttle.ready_at(check.address, check.name)
                if ready <= now:
                    return check, None
                wake = ready if wake is None else min(wake, ready)
        return None, wake


class PasswordChecks:
    """``CheckQueue`` on the event loop: ``async with checks.turn(...)`` waits for the
    check's turn (raising ``Dropped`` if its client leaves first), and the block runs
    the check."""

    def __init__(self, throttle: LoginThrottle, at_once: int = 2) -> None:
        self.queue = CheckQueue(throttle, at_once)
        self._turns: dict[Pending, asyncio.Future[bool]] = {}
        self._timer: asyncio.TimerHandle | None = None

    @contextlib.asynccontextmanager
    async def turn(self, address: str, name: str,
                   wanted: Callable[[], bool]) -> AsyncIterator[Turn]:  # fmt: skip
        check = Pending(address, name, wanted)
        started = asyncio.get_running_loop().create_future()
        self._turns[check] = started
        self.queue.add(check)
        self.wake()
        try:
            if not await started:
                raise Dropped
        except BaseException:
            self._turns.pop(check, None)
            self.queue.remove(check)
            self.wake()
            raise
        outcome = Turn()
        try:
            yield outcome
        finally:
            self.queue.done(check, failed=outcome.failed)
            self.wake()

    def close(self) -> None:
        """Stop the timer (the server is closing)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def wake(self) -> None:
        """Drop the checks whose clients have gone, start those whose turn it is, and set
        the timer for the next one kept waiting for its time."""
        dropped, started, wake = self.queue.next()
        for check, began in [(c, False) for c in dropped] + [(c, True) for c in started]:
            future = self._turns.pop(check, None)
            if future is not None and not future.done():
                future.set_result(began)
        self.close()
        if wake is not None:
            delay = max(0.0, wake - self.queue.throttle.clock())
            self._timer = asyncio.get_running_loop().call_later(delay, self.wake)
