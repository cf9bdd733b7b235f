"""Who may connect, and how fast failed logins are answered: pure rules, time passed in.

- ``ConnectionGate``: connections by address. At most ``per_address`` open at once from
  one address and ``new_per_minute`` new ones a minute from it (a token bucket), at most
  ``total`` in all. A refusal says why, in one line for the client; ``Refused.first``
  says whether the log should hear of it (once per address until it is let in again).
- ``LoginThrottle``: failed logins by address and by name typed, and when the next
  password check of each may start. After ``free`` failures a check starts ``first``
  seconds after the last one ended, doubling with each failure (at most ``longest``),
  however many connections ask; the address and the name each keep their own schedule
  and a check waits for both. A success resets nothing (issue 45: logging in as one's
  own account between guesses at another's kept an address unslowed): failures are
  forgotten only with time. ``most_failed_checks`` is the schedule's bound, as
  ``docs/how-to/serve.md`` states it. Who is checked next, and when, is
  ``engine.telnet.password_checks``.

Both forget what they count ``forget_after`` seconds after the last event and keep at
most ``remember`` addresses (the oldest go first), so a flood of addresses costs
bounded memory.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

Clock = Callable[[], float]
V = TypeVar("V")


class _Recent(Generic[V]):
    """Values by key, oldest first, forgotten ``forget_after`` seconds after they were
    last set, at most ``remember`` of them."""

    def __init__(self, clock: Clock, forget_after: float, remember: int) -> None:
        self.clock, self.forget_after, self.remember = clock, forget_after, remember
        self._items: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def get(self, key: str) -> V | None:
        self._forget_old()
        found = self._items.get(key)
        return found[1] if found else None

    def set(self, key: str, value: V) -> None:
        self._items.pop(key, None)
        self._items[key] = (self.clock(), value)
        while len(self._items) > self.remember:
            self._items.popitem(last=False)
        self._forget_old()

    def drop(self, key: str) -> None:
        self._items.pop(key, None)

    def _forget_old(self) -> None:
        horizon = self.clock() - self.forget_after
        while self._items:
            key, (when, _value) = next(iter(self._items.items()))
            if when > horizon:
                return
            del self._items[key]


@dataclass(frozen=True, slots=True)
class Refused:
    text: str
    """What the client is told before it is closed."""
    first: bool
    """The first refusal of this address since it was last let in (the log says it)."""


class ConnectionGate:
    """Open connections by address (see the module)."""

    def __init__(self, clock: Clock = time.monotonic, *, total: int = 50, per_address: int = 5,
                 new_per_minute: float = 20.0, remember: int = 10_000) -> None:  # fmt: skip
        self.clock = clock
        self.total, self.per_address, self.new_per_minute = total, per_address, new_per_minute
        self._open: dict[str, int] = {}
        self._tokens: _Recent[tuple[float, float]] = _Recent(clock, 600.0, remember)
        """address -> (tokens left, when counted)."""
        self._refused: _Recent[bool] = _Recent(clock, 600.0, remember)

    @property
    def open(self) -> int:
        return sum(self._open.values())

    def open_from(self, address: str) -> int:
        return self._open.get(address, 0)

    def admit(self, address: str) -> Refused | None:
        """None: ``address`` may connect (counted until ``left``); else why not."""
        if self.open >= self.total:
            return self._refuse(address, f"The world is full ({self.total} connections); "
                                          "try again later.")  # fmt: skip
        if self.open_from(address) >= self.per_address:
            return self._refuse(address, f"Too many connections from your address (at most "
                                          f"{self.per_address} at once); close one first.")  # fmt: skip
        if not self._take_token(address):
            return self._refuse(address, "Too many new connections from your address (at most "
                                         f"{self.new_per_minute:g} a minute); wait a little.")  # fmt: skip
        self._open[address] = self.open_from(address) + 1
        self._refused.drop(address)
        return None

    def left(self, address: str) -> None:
        count = self.open_from(address) - 1
        if count > 0:
            self._open[address] = count
        else:
            self._open.pop(address, None)

    def _take_token(self, address: str) -> bool:
        now, burst = self.clock(), max(1.0, self.new_per_minute)
        tokens, then = self._tokens.get(address) or (burst, now)
        tokens = min(burst, tokens + (now - then) * self.new_per_minute / 60.0)
        if tokens < 1.0:
            self._tokens.set(address, (tokens, now))
            return False
        self._tokens.set(address, (tokens - 1.0, now))
        return True

    def _refuse(self, address: str, text: str) -> Refused:
        first = self._refused.get(address) is None
        self._refused.set(address, True)
        return Refused(text, first)


class LoginThrottle:
    """Failed logins by address and by name, and when each may next have a password
    checked (see the module). ``engine.telnet.password_checks`` asks it."""

    def __init__(self, clock: Clock = time.monotonic, *, free: int = 5, first: float = 2.0,
                 longest: float = 60.0, forget_after: float = 900.0,
                 remember: int = 10_000) -> None:  # fmt: skip
        self.clock = clock
        self.free, self.first, self.longest = free, first, longest
        self._by_address: _Recent[int] = _Recent(clock, forget_after, remember)
        self._by_name: _Recent[int] = _Recent(clock, forget_after, remember)
        self._address_next: _Recent[float] = _Recent(clock, forget_after, remember)
        self._name_next: _Recent[float] = _Recent(clock, forget_after, remember)
        """address or name -> when its next check may start."""

    def failures(self, address: str) -> int:
        return self._by_address.get(address) or 0

    def name_failures(self, name: str) -> int:
        return self._by_name.get(name.casefold()) or 0

    def interval(self, failures: int) -> float:
        """Seconds from one check's end to the next one's start after ``failures``
        failures (0 before ``free``; then ``first``, doubling, at most ``longest``)."""
        over = failures - self.free
        return 0.0 if over < 0 else min(self.longest, self.first * 2.0**over)

    def ready_at(self, address: str, name: str) -> float:
        """When a check of a password typed for ``name`` from ``address`` may start
        (-inf: at once)."""
        slots = (self._address_next.get(address), self._name_next.get(name.casefold()))
        return max((slot for slot in slots if slot is not None), default=-math.inf)

    def checked(self, address: str, name: str, *, failed: bool) -> None:
        """A check from ``address`` for ``name`` ended (``failed``: it was refused): the
        failures grow, and the next check of each waits its interval from now. A success
        resets nothing."""
        key, now = name.casefold(), self.clock()
        if failed:
            self._by_address.set(address, self.failures(address) + 1)
            self._by_name.set(key, self.name_failures(key) + 1)
        self._address_next.set(address, now + self.interval(self.failures(address)))
        self._name_next.set(key, now + self.interval(self.name_failures(key)))


def most_failed_checks(seconds: float, throttle: LoginThrottle) -> int:
    """The most failed checks against one name (or from one address) ``throttle`` lets
    run in any ``seconds`` (up to its ``forget_after``): the first ``free`` (at least
    one) at once, then one after each wait that fits: ``first``, ``2 * first``, ``4 *
    first`` ... (each at most ``longest``). Checks that succeed only wait too."""
    count = max(1, throttle.free)
    spent = throttle.interval(count)
    if spent <= 0.0:
        raise ValueError("with no delay the checks are not bounded")
    while spent <= seconds:
        count += 1
        spent += throttle.interval(count)
    return count
