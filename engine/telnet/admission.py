"""Who may connect, and how fast failed logins are answered: pure rules, time passed in.

- ``ConnectionGate``: connections by address. At most ``per_address`` open at once from
  one address and ``new_per_minute`` new ones a minute from it (a token bucket), at most
  ``total`` in all. A refusal says why, in one line for the client; ``Refused.first``
  says whether the log should hear of it (once per address until it is let in again).
- ``LoginThrottle``: failed logins by address and by account. From an address's
  ``free``-th failure on, its answers come at most one every ``first`` seconds, doubling
  with each failure (at most ``longest``), however many connections it opens: each
  attempt takes the address's next free slot. A failed guess against an account that
  has failed ``free`` times is answered after the same delay; a right password is never
  held for the account's sake, so guesses elsewhere never slow its owner down. A
  success resets nothing (issue 45: logging in as one's own account between guesses at
  another's kept an address unslowed): failures are forgotten only with time.

Both forget what they count ``forget_after`` seconds after the last event and keep at
most ``remember`` addresses (the oldest go first), so a flood of addresses costs
bounded memory.
"""

from __future__ import annotations

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
    """Failed logins by address and by account (see the module)."""

    def __init__(self, clock: Clock = time.monotonic, *, free: int = 5, first: float = 2.0,
                 longest: float = 60.0, forget_after: float = 900.0,
                 remember: int = 10_000) -> None:  # fmt: skip
        self.clock = clock
        self.free, self.first, self.longest = free, first, longest
        self._by_address: _Recent[int] = _Recent(clock, forget_after, remember)
        self._by_account: _Recent[int] = _Recent(clock, forget_after, remember)
        self._next_answer: _Recent[float] = _Recent(clock, forget_after, remember)
        """address -> when its next answer may come (the slot the last attempt took)."""

    def failures(self, address: str) -> int:
        return self._by_address.get(address) or 0

    def account_failures(self, account: str) -> int:
        return self._by_account.get(account.casefold()) or 0

    def interval(self, failures: int) -> float:
        """Seconds between answers after ``failures`` failures (0 before ``free``)."""
        over = failures - self.free
        return 0.0 if over < 0 else min(self.longest, self.first * 2.0**over)

    def answer_wait(self, address: str) -> float:
        """Seconds this attempt from ``address`` waits before it is answered: it takes
        the address's next free slot, so parallel attempts are answered one by one."""
        interval = self.interval(self.failures(address))
        if interval == 0.0:
            return 0.0
        now = self.clock()
        answer_at = max(now, self._next_answer.get(address) or now) + interval
        self._next_answer.set(address, answer_at)
        return answer_at - now

    def failure_wait(self, account: str | None) -> float:
        """Seconds a failed guess against ``account`` waits before its answer."""
        return 0.0 if account is None else self.interval(self.account_failures(account))

    def failed(self, address: str, account: str | None = None) -> None:
        self._by_address.set(address, self.failures(address) + 1)
        if account is not None:
            self._by_account.set(account.casefold(), self.account_failures(account) + 1)
