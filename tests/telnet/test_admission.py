"""Who may connect and how fast failed logins are answered (``engine.telnet.admission``),
as pure rules: a clock the test moves, no sockets."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from engine.telnet.admission import ConnectionGate, LoginThrottle

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


def test_after_five_failures_an_address_is_answered_every_two_seconds_doubling() -> None:
    throttle = LoginThrottle(lambda: 0.0)
    waits = []
    for _ in range(9):
        waits.append(throttle.answer_wait("10.0.0.1"))
        throttle.failed("10.0.0.1")
    # the slots follow one another: 2, then 2 + 4, then 2 + 4 + 8 ...
    assert waits == [0, 0, 0, 0, 0, 2, 6, 14, 30]
    assert throttle.answer_wait("10.0.0.2") == 0


@given(st.integers(1, 40), st.floats(0.0, 5.0))
def test_parallel_attempts_from_one_address_are_answered_one_slot_apart(
    attempts: int, gap: float
) -> None:
    """However many connections one address opens, its answers come at least
    ``first`` seconds apart once it has failed ``free`` times."""
    now = [0.0]
    throttle = LoginThrottle(lambda: now[0], free=5, first=2.0, longest=60.0)
    for _ in range(5):
        throttle.failed("10.0.0.1")
    answers = []
    for _ in range(attempts):  # all in flight at once, a little apart
        answers.append(now[0] + throttle.answer_wait("10.0.0.1"))
        now[0] += gap / attempts
    assert all(b - a >= 2.0 - 1e-9 for a, b in itertools.pairwise(answers))


def test_guesses_against_an_account_slow_its_guessers_never_its_owner() -> None:
    throttle = LoginThrottle(lambda: 0.0)
    for n in range(7):  # seven wrong guesses, each from its own address
        assert throttle.failure_wait("Pat") == (0 if n < 5 else 2.0 * 2 ** (n - 5))
        throttle.failed(f"10.0.1.{n}", "Pat")
    assert throttle.failure_wait("pat") == 8.0  # names are counted without their case
    assert throttle.answer_wait("10.0.2.1") == 0.0  # the owner, from elsewhere, at once


def test_failures_are_forgotten_after_a_while_and_few_addresses_are_kept() -> None:
    now = [0.0]
    throttle = LoginThrottle(lambda: now[0], free=3, forget_after=60, remember=2)
    for _ in range(4):
        throttle.failed("a")
    assert throttle.interval(throttle.failures("a")) == 4.0
    now[0] = 61.0
    assert throttle.failures("a") == 0
    for address in ("b", "c", "d"):  # at most two remembered: the oldest goes
        throttle.failed(address)
    assert throttle.failures("b") == 0
    assert throttle.failures("d") == 1
