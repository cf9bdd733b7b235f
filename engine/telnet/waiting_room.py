"""Connections that have not logged in yet (issue 45): cheap, capped, and never able to
keep an account out.

A connection holds a place in the waiting room from the moment it is let in (a telnet
connection still negotiating its options included) until it logs in or goes; one closed
to make room gives its place up at once, before its socket is gone. There are at most ``most`` places (``max_logging_in``: a quarter of
``max_connections`` unless set), at most ``per_address`` of them from one address
(``max_logging_in_per_address``), and each is held ``login_seconds`` at most. When every
place is taken, a new connection is not turned away: the connection that has waited
longest, from the address holding the most places (of those, the one with the most
failed logins), is closed to make room (``admit``). So ten addresses that open connections and never log in, retrying as
soon as they are closed, only ever push each other out; a player connecting among them
has the seconds it takes the attackers to fill the room again to type a name and a
password (a connection is let in within one retry).

Logged-in players count apart, against ``max_connections``, with one place more kept
for an admin (``MudServer`` checks it as a login completes).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Final, Generic, TypeVar

EVICTED: Final = "Too many connections are logging in; yours waited longest. Try again."


C = TypeVar("C")


class WaitingRoom(Generic[C]):
    """The connections logging in, with when each came (``C``: a client with an
    ``address``)."""

    def __init__(self, most: int, per_address: int,
                 clock: Callable[[], float] = time.monotonic,
                 failures: Callable[[str], int] = lambda _address: 0) -> None:  # fmt: skip
        self.most, self.per_address, self.clock = most, per_address, clock
        self.failures = failures
        """An address's failed logins (``LoginThrottle.failures``): among addresses
        holding as many places, the one that failed most makes room first."""
        self._since: dict[C, float] = {}
        self._address: dict[C, str] = {}

    def __len__(self) -> int:
        return len(self._since)

    def enter(self, client: C, address: str) -> None:
        self._since.setdefault(client, self.clock())
        self._address[client] = address

    def leave(self, client: C) -> None:
        self._since.pop(client, None)
        self._address.pop(client, None)

    def __contains__(self, client: object) -> bool:
        return client in self._since

    def __iter__(self) -> Iterator[C]:
        return iter(list(self._since))

    def from_address(self, address: str) -> int:
        """The places ``address`` holds."""
        return sum(1 for a in self._address.values() if a == address)

    def replace(self, old: C, new: C) -> bool:
        """``new`` takes ``old``'s place, and the time it came (a telnet connection whose
        negotiation is done becomes its client); False when ``old`` holds none."""
        if old not in self._since:
            return False
        self._since[new] = self._since.pop(old)
        self._address[new] = self._address.pop(old)
        return True

    def admit(self, address: str, *, logging_in: int, mine: int) -> tuple[str | None, C | None]:
        """Whether a new connection from ``address`` may start logging in, when
        ``logging_in`` connections are (``mine`` of them from ``address``, those still
        negotiating counted): (why not, None), or (None, who to close to make room, or
        None when there is room)."""
        if mine >= self.per_address:
            return (f"Too many connections from your address are logging in (at most "
                    f"{self.per_address} at once); finish one first.", None)  # fmt: skip
        if logging_in < self.most:
            return None, None
        victim = self.victim()
        if victim is None:
            return "Too many connections are logging in; try again in a moment.", None
        self.leave(victim)
        return None, victim

    def victim(self) -> C | None:
        """Who makes room: the longest waiting connection of the address holding the most
        places, and of those the one with the most failed logins (None: nobody waits)."""
        if not self._since:
            return None
        counts = Counter(self._address.values())
        failures = {address: self.failures(address) for address in counts}
        worst = max((counts[a], failures[a]) for a in counts)
        return min(
            (c for c, a in self._address.items() if (counts[a], failures[a]) == worst),
            key=lambda c: self._since[c],
        )
