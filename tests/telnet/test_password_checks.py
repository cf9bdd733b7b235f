"""Whose password check runs next, and when (``engine.telnet.password_checks``): the
rule with a clock the test moves, and the event loop's side of it."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.telnet.admission import LoginThrottle, most_failed_checks
from engine.telnet.password_checks import CheckQueue, Dropped, PasswordChecks, Pending

Arrival = tuple[float, int, str, float]
"""When a check is asked for, from which address, for which name, and when its client
gives up (seconds after asking)."""


def run_queue(arrivals: list[Arrival], duration: float, throttle: LoginThrottle,
              at_once: int = 2, right: str = "") -> list[tuple[float, Pending]]:  # fmt: skip
    """Play ``arrivals`` through a ``CheckQueue``, every check taking ``duration`` s and
    failing (but those for the name ``right``): when each check started, in order."""
    now = [0.0]
    throttle.clock = lambda: now[0]
    queue = CheckQueue(throttle, at_once)
    waiting = sorted(arrivals)
    running: list[tuple[float, Pending]] = []
    started: list[tuple[float, Pending]] = []
    wake: float | None = None
    for _ in range(100_000):
        times = [t for t in (waiting[0][0] if waiting else None, wake) if t is not None]
        times += [end for end, _check in running]
        if not times:
            break
        now[0] = max(now[0], min(times))
        for end, check in [r for r in running if r[0] <= now[0]]:
            running.remove((end, check))
            queue.done(check, failed=check.name != right)
        while waiting and waiting[0][0] <= now[0]:
            asked, address, name, patience = waiting.pop(0)
            queue.add(Pending(f"10.0.0.{address}", name,
                              lambda until=asked + patience: now[0] < until))  # fmt: skip
        _dropped, begun, wake = queue.next()
        for check in begun:
            running.append((now[0] + duration, check))
            started.append((now[0], check))
    assert not running
    assert not len(queue), "a check was left waiting forever"
    return started


NAMES = st.sampled_from(["Victim", "victim", "Bo"])
ARRIVALS = st.lists(
    st.tuples(st.floats(0, 200), st.integers(0, 39), NAMES, st.floats(0.5, 30)), max_size=300
)


@settings(max_examples=60, deadline=None)
@given(ARRIVALS, st.floats(0.01, 1.0), st.integers(0, 6))
def test_failed_checks_against_a_name_or_from_an_address_keep_to_the_documented_bound(
    arrivals: list[Arrival], duration: float, free: int
) -> None:
    """However many addresses guess, however they time it and give up: in any window of
    T seconds, at most ``most_failed_checks(T)`` checks of one name, and of one address."""
    throttle = LoginThrottle(free=free, first=2.0, longest=60.0)
    started = run_queue(arrivals, duration, throttle)
    for key in (lambda c: c.name.casefold(), lambda c: c.address):
        by_key: dict[str, list[float]] = {}
        for when, check in started:
            by_key.setdefault(key(check), []).append(when)
        for times in by_key.values():
            for window in (1.0, 10.0, 60.0, 150.0):
                most = most_failed_checks(window, throttle)
                for i, first in enumerate(times):
                    inside = sum(1 for t in times[i:] if t <= first + window)
                    assert inside <= most, (window, times)


def test_addresses_take_turns_and_one_name_is_checked_one_at_a_time() -> None:
    """Three checks from one busy address and one each from three others, all asked at
    once, every name its own: the busy address's second check waits for the others."""
    arrivals = [(0.0, 1, f"Busy{n}", 30.0) for n in range(3)]
    arrivals += [(0.0, n, f"Other{n}", 30.0) for n in (2, 3, 4)]
    started = run_queue(arrivals, 0.1, LoginThrottle(), at_once=1)
    assert [check.address for _t, check in started] == [
        "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.1", "10.0.0.1",
    ]  # fmt: skip
    same_name = run_queue([(0.0, n, "Pat", 30.0) for n in range(4)], 0.1, LoginThrottle())
    assert [round(t, 6) for t, _check in same_name] == [0.0, 0.1, 0.2, 0.3]


def test_a_check_whose_client_has_gone_is_dropped_and_never_run() -> None:
    throttle = LoginThrottle(free=1, first=10.0)
    # the first fails; the next three wait 10 s for the name, but give up after 1 s
    started = run_queue([(0.0, 1, "Pat", 5.0)] + [(0.5, n, "Pat", 1.0) for n in (2, 3, 4)],
                        0.1, throttle)  # fmt: skip
    assert [check.address for _t, check in started] == ["10.0.0.1"]
    assert throttle.name_failures("Pat") == 1


def test_the_bound_holds_for_forty_addresses_guessing_one_name_for_ten_minutes() -> None:
    """The issue's attack, at the rule: 40 addresses, a guess each a second, each giving
    up after 1 s; a right password for another name is checked at once throughout."""
    arrivals = [(s + n / 40, n, "Victim", 1.0) for s in range(600) for n in range(1, 41)]
    arrivals += [(s + 0.5, 200, "Owner", 1.0) for s in range(0, 600, 7)]
    throttle = LoginThrottle()
    started = run_queue(arrivals, 0.05, throttle, right="Owner")
    victim = [t for t, check in started if check.name == "Victim"]
    assert len(victim) == most_failed_checks(600, throttle) == 18
    owner = [t for t, check in started if check.name == "Owner"]
    assert len(owner) == len(range(0, 600, 7))
    assert all(t - (s + 0.5) <= 0.05 for t, s in zip(owner, range(0, 600, 7), strict=True))


async def test_a_turn_runs_its_block_and_counts_a_failure_once_it_ends() -> None:
    checks = PasswordChecks(LoginThrottle(free=0, first=0.05))
    async with checks.turn("10.0.0.1", "Pat", lambda: True) as turn:
        assert len(checks.queue) == 0
        turn.failed = True
    throttle = checks.queue.throttle
    assert (throttle.failures("10.0.0.1"), throttle.name_failures("pat")) == (1, 1)
    loop = asyncio.get_running_loop()
    asked = loop.time()
    async with checks.turn("10.0.0.2", "PAT", lambda: True):  # waits Pat's slot
        assert loop.time() - asked >= 0.09  # 0.05 doubled: the second failure's wait
    checks.close()


async def test_a_waiting_turn_is_dropped_when_its_client_goes_or_is_cancelled() -> None:
    checks = PasswordChecks(LoginThrottle(free=0, first=30.0))
    async with checks.turn("10.0.0.1", "Pat", lambda: True) as turn:
        turn.failed = True
    here = [True]
    gone = asyncio.ensure_future(_enter(checks, "10.0.0.2", lambda: here[0]))
    cancelled = asyncio.ensure_future(_enter(checks, "10.0.0.3", lambda: True))
    await asyncio.sleep(0.05)
    assert len(checks.queue) == 2
    here[0] = False
    checks.wake()  # as the server does when a connection ends
    with pytest.raises(Dropped):
        await gone
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert len(checks.queue) == 0
    assert checks.queue.throttle.name_failures("Pat") == 1
    checks.close()


async def _enter(checks: PasswordChecks, address: str, wanted: object) -> None:
    assert callable(wanted)
    async with checks.turn(address, "Pat", wanted):
        raise AssertionError("this check should never run")


def test_at_once_bounds_the_checks_running_together() -> None:
    arrivals = [(0.0, n, f"N{n}", 30.0) for n in range(10)]
    started = run_queue(arrivals, 1.0, LoginThrottle(), at_once=2)
    per_second = [sum(1 for t, _c in g) for _k, g in itertools.groupby(started, lambda s: s[0])]
    assert per_second == [2, 2, 2, 2, 2]
