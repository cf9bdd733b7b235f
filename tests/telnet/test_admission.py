"""Who may connect and how fast failed logins are answered (``engine.telnet.admission``),
as pure rules: a clock the test moves, no sockets."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.telnet.admission import ConnectionGate, LoginThrottle, most_failed_checks

ADDRESSES = st.sampled_from(["10.0.0.1", "10.0.0.2", "10.0.0.3", "::1"])


def test_one_address_cannot_fill_the_server_for_everyone_else() -> None:
    gate = ConnectionGate(lambda: 0.0, total=50, per_address=5)
    assert [gate.admit("10.0.0.1") for _ in range(5)] == [None] * 5
    refused = [gate.admit("10.0.0.1") for _ in range(45)]
    assert all(r is not None for r in refused)
    assert refused[0] is not None
    assert refused[0].text == (
        "Too many connections from your address (at most 5 at once); close one first."
    )
    assert [r.first for r in refused if r is not None] == [True] + [False] * 44  # logged once
    assert gate.admit("10.0.0.2") is None  # another address still gets in
    gate.left("10.0.0.1")
    assert gate.admit("10.0.0.1") is None


def test_new_connections_from_one_address_are_rate_limited() -> None:
    now = [0.0]
    gate = ConnectionGate(lambda: now[0], per_address=100, new_per_minute=6)
    for _ in range(6):
        assert gate.admit("10.0.0.1") is None
        gate.left("10.0.0.1")
    refused = gate.admit("10.0.0.1")
    assert refused is not None
    assert "at most 6 a minute" in refused.text
    assert gate.admit("10.0.0.2") is None
    now[0] += 10.0  # one new connection a ten seconds
    assert gate.admit("10.0.0.1") is None
    assert gate.admit("10.0.0.1") is not None


def test_the_world_full_refusal_still_comes_at_the_total() -> None:
    gate = ConnectionGate(lambda: 0.0, total=2, per_address=5)
    assert gate.admit("a") is None
    assert gate.admit("b") is None
    refused = gate.admit("c")
    assert refused is not None
    assert refused.text.startswith("The world is full (2 connections)")


@given(st.lists(st.tuples(st.booleans(), ADDRESSES), max_size=200))
def test_no_address_ever_holds_more_than_its_share(steps: list[tuple[bool, str]]) -> None:
    gate = ConnectionGate(lambda: 0.0, total=7, per_address=3, new_per_minute=1000)
    held: dict[str, int] = {}
    for opening, address in steps:
        if opening:
            if gate.admit(address) is None:
                held[address] = held.get(address, 0) + 1
        elif held.get(address):
            gate.left(address)
            held[address] -= 1
        assert all(gate.open_from(a) == n <= 3 for a, n in held.items())
        assert gate.open == sum(held.values()) <= 7


def test_after_five_failures_checks_start_two_seconds_after_the_last_doubling() -> None:
    now = [0.0]
    throttle = LoginThrottle(lambda: now[0])
    starts = []
    for _ in range(9):  # each check starts as soon as it may and takes 0.1 s
        now[0] = max(now[0], throttle.ready_at("10.0.0.1", "Pat"))
        starts.append(now[0])
        now[0] += 0.1
        throttle.checked("10.0.0.1", "Pat", failed=True)
    gaps = [round(b - a - 0.1, 6) for a, b in itertools.pairwise(starts)]
    assert gaps == [0, 0, 0, 0, 2, 4, 8, 16]
    assert throttle.ready_at("10.0.0.2", "Pip") == -math.inf  # elsewhere, another name


def test_a_names_slot_holds_its_owner_too_and_a_success_resets_nothing() -> None:
    now = [0.0]
    throttle = LoginThrottle(lambda: now[0], free=2, first=2.0)
    for n in range(3):  # three wrong guesses, each from its own address
        throttle.checked(f"10.0.1.{n}", "Pat", failed=True)
    assert throttle.ready_at("10.0.2.1", "pat") == 4.0  # names without their case
    throttle.checked("10.0.2.1", "PAT", failed=False)  # the owner, right, after the wait
    assert throttle.name_failures("Pat") == 3
    assert throttle.ready_at("10.0.2.1", "Pat") == 4.0


def test_the_documented_bound_counts_the_free_checks_then_the_waits_that_fit() -> None:
    throttle = LoginThrottle(free=5, first=2.0, longest=60.0)
    # 5 at once, then after 2, 2 + 4, 2 + 4 + 8, 2 + 4 + 8 + 16 = 30 s (the next at 62 s)
    assert [most_failed_checks(t, throttle) for t in (1, 2, 30, 61, 62)] == [5, 6, 9, 9, 10]
    assert most_failed_checks(900, throttle) == 23  # then one a minute
    with pytest.raises(ValueError, match="not bounded"):
        most_failed_checks(60, LoginThrottle(first=0.0))


def test_failures_are_forgotten_after_a_while_and_few_addresses_are_kept() -> None:
    now = [0.0]
    throttle = LoginThrottle(lambda: now[0], free=3, forget_after=60, remember=2)
    for _ in range(4):
        throttle.checked("a", "Pat", failed=True)
    assert throttle.interval(throttle.failures("a")) == 4.0
    now[0] = 61.0
    assert throttle.failures("a") == 0
    for address in ("b", "c", "d"):  # at most two remembered: the oldest goes
        throttle.checked(address, address, failed=True)
    assert throttle.failures("b") == 0
    assert throttle.failures("d") == 1
