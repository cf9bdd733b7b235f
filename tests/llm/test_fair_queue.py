"""The dispatcher's waiting line: priority with aging, as properties over random
sequences of arrivals, grants and cancellations."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.llm.fair_queue import FairnessStats, FairQueue, Waiting

PRIORITIES = st.integers(0, 2)
# An operation: ("push", priority), ("pop", _) or ("cancel", index among the waiting)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("push"), PRIORITIES),
        st.tuples(st.just("pop"), st.just(0)),
        st.tuples(st.just("cancel"), st.integers(0, 50)),
    ),
    max_size=120,
)
LIMITS = st.integers(1, 6)


@dataclass
class Replay:
    """What happened, seen from outside: each request's grants by a better priority."""

    popped: list[Waiting[int]] = field(default_factory=list)
    waiting: list[Waiting[int]] = field(default_factory=list)
    seen_bypasses: dict[int, int] = field(default_factory=dict)


def _replay(queue: FairQueue[int], operations: list[tuple[str, int]]) -> Replay:
    replay = Replay()
    for number, (kind, value) in enumerate(operations):
        if kind == "push":
            replay.waiting.append(queue.push(number, value))
            replay.seen_bypasses[number] = 0
        elif kind == "pop" and replay.waiting:
            head = queue.pop()
            replay.waiting.remove(head)
            for entry in replay.waiting:
                if entry.priority > head.priority:
                    replay.seen_bypasses[entry.item] += 1
            replay.popped.append(head)
        elif kind == "cancel" and replay.waiting:
            entry = replay.waiting.pop(value % len(replay.waiting))
            queue.remove(entry)
        assert len(queue) == len(replay.waiting)
    return replay


@given(OPERATIONS, LIMITS)
def test_no_request_is_bypassed_more_than_the_limit(
    operations: list[tuple[str, int]], limit: int
) -> None:
    replay = _replay(FairQueue[int](bypass_limit=limit), operations)
    for entry in replay.popped + replay.waiting:
        assert entry.bypassed == replay.seen_bypasses[entry.item]
        assert entry.bypassed <= limit


@given(OPERATIONS, LIMITS)
def test_first_come_first_served_within_a_priority(
    operations: list[tuple[str, int]], limit: int
) -> None:
    replay = _replay(FairQueue[int](bypass_limit=limit), operations)
    for priority in range(3):
        served = [e.order for e in replay.popped if e.priority == priority]
        assert served == sorted(served)


@given(OPERATIONS, LIMITS)
def test_while_nothing_is_overdue_the_best_priority_goes_first(
    operations: list[tuple[str, int]], limit: int
) -> None:
    queue = FairQueue[int](bypass_limit=limit)
    waiting: list[Waiting[int]] = []
    for number, (kind, value) in enumerate(operations):
        if kind == "push":
            waiting.append(queue.push(number, value))
        elif kind == "pop" and waiting:
            anyone_overdue = any(queue.overdue(entry) for entry in waiting)
            best = min(waiting, key=lambda entry: (entry.priority, entry.order))
            head = queue.pop()
            waiting.remove(head)
            if not anyone_overdue:
                assert head is best
            else:
                assert queue.overdue(head)


@given(st.lists(st.tuples(st.just("push"), PRIORITIES) | st.tuples(st.just("pop"), st.just(0)),
                max_size=120))  # fmt: skip
def test_without_a_limit_it_is_strict_priority(operations: list[tuple[str, int]]) -> None:
    queue = FairQueue[int](bypass_limit=None)
    waiting: list[Waiting[int]] = []
    for number, (kind, value) in enumerate(operations):
        if kind == "push":
            waiting.append(queue.push(number, value))
        elif waiting:
            best = min(waiting, key=lambda entry: (entry.priority, entry.order))
            assert queue.pop() is best
            waiting.remove(best)


def test_a_summary_goes_first_after_four_turns_bypassed_it() -> None:
    queue = FairQueue[str](bypass_limit=4)
    queue.push("summary", 1)
    for n in range(10):
        queue.push(f"turn {n}", 0)
    served = [queue.pop().item for _ in range(6)]
    assert served == ["turn 0", "turn 1", "turn 2", "turn 3", "summary", "turn 4"]


def test_overdue_requests_go_worst_priority_first() -> None:
    queue = FairQueue[str](bypass_limit=1)
    queue.push("summary", 1)
    queue.push("consolidation", 2)
    queue.push("turn a", 0)
    queue.push("turn b", 0)
    assert queue.pop().item == "turn a"  # both bypassed once: overdue
    assert [queue.pop().item for _ in range(3)] == ["consolidation", "summary", "turn b"]


def test_the_limit_must_allow_one_bypass() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        FairQueue[int](bypass_limit=0)
    with pytest.raises(IndexError):
        FairQueue[int]().pop()


def test_stats_keep_the_most_bypassed() -> None:
    stats = FairnessStats()
    for bypassed in (0, 3, 1):
        stats.record(1, bypassed)
    assert (stats.granted[1], stats.most_bypassed[1]) == (3, 3)


# An operation with patience: ("push", (priority, patience)), ("pop", _) or ("cancel", index)
MIXED = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.tuples(PRIORITIES, st.integers(1, 4))),
        st.tuples(st.just("pop"), st.just(0)),
        st.tuples(st.just("cancel"), st.integers(0, 50)),
    ),
    max_size=120,
)


@given(MIXED, LIMITS)
def test_a_patient_request_waits_longer_but_never_without_limit(
    operations: list[tuple[str, object]], limit: int
) -> None:
    queue = FairQueue[int](bypass_limit=limit)
    waiting: list[Waiting[int]] = []
    for number, (kind, value) in enumerate(operations):
        if kind == "push":
            assert isinstance(value, tuple)
            priority, patience = value
            waiting.append(queue.push(number, priority, patience=patience))
        elif kind == "pop" and waiting:
            head = queue.pop()
            waiting.remove(head)
            if not queue.overdue(head):  # it went by priority: nothing better waited
                assert all(entry.priority >= head.priority for entry in waiting)
        elif kind == "cancel" and waiting:
            queue.remove(waiting.pop(int(str(value)) % len(waiting)))
        for entry in waiting:  # each keeps its own bound: its patience times the limit
            assert entry.bypassed <= limit * entry.patience


def test_a_players_summary_lets_more_turns_go_first_but_not_all() -> None:
    queue = FairQueue[str](bypass_limit=4)
    queue.push("agent summary", 1)
    queue.push("player summary", 1, patience=4)
    for n in range(30):
        queue.push(f"turn {n}", 0)
    order = [queue.pop().item for _ in range(32)]
    assert order.index("agent summary") == 4
    assert order.index("player summary") == 16 + 1  # 16 turns, and the agent's summary


@given(st.lists(st.tuples(PRIORITIES, st.booleans()), min_size=1, max_size=40), LIMITS)
def test_an_urgent_request_goes_before_everything_oldest_first(
    pushes: list[tuple[int, bool]], limit: int
) -> None:
    queue = FairQueue[int](bypass_limit=limit)
    urgent = {n for n, (_, flag) in enumerate(pushes) if flag}
    for n, (priority, _) in enumerate(pushes):
        queue.push(n, priority, urgent=(lambda n=n: n in urgent))  # type: ignore[misc]
    first = min(len(urgent), limit)  # (then a request they passed that often goes first)
    served = [queue.pop().item for _ in range(first)]
    assert served == sorted(urgent)[:first]


def test_a_turn_passed_by_the_limit_of_urgent_requests_goes_before_them() -> None:
    """A crowd whose memory never catches up starves no turn: after ``bypass_limit``
    urgent compactions went first, the turn goes, then the urgent ones again."""
    queue = FairQueue[str](bypass_limit=2)
    queue.push("turn", 0)
    for n in range(4):
        queue.push(f"summary {n}", 1, urgent=lambda: True)
    order = [queue.pop().item for _ in range(5)]
    assert order == ["summary 0", "summary 1", "turn", "summary 2", "summary 3"]


def test_urgency_is_asked_each_time_the_head_is_chosen() -> None:
    queue = FairQueue[str](bypass_limit=4)
    late = {"now": False}
    queue.push("summary", 1, urgent=lambda: late["now"])
    queue.push("turn 1", 0)
    queue.push("turn 2", 0)
    assert queue.pop().item == "turn 1"
    late["now"] = True  # the character fell behind while it waited
    assert queue.pop().item == "summary"
    assert queue.pop().item == "turn 2"


def test_patience_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="patience"):
        FairQueue[str]().push("x", 1, patience=0)
