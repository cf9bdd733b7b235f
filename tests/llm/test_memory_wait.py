"""What a turn's call waited in the dispatcher's queue while urgent compactions went
first (issue 42, A): the queue counts who an urgent request passed, and the dispatcher
says how long a passed turn's call queued (``Generation.memory_wait``,
``LLMError.memory_wait``), on its own clock; the memory gate counts it on the agent's
``held_for_memory``."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from engine.errors import LLMResponseError
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fair_queue import FairQueue
from engine.llm.request import Generation, LLMRequest, Priority
from engine.sim.memory_gate import MemoryGate
from engine.sim.simulation import Simulation


class Held:
    """A backend that answers a prompt once the test lets it (``answer``), or fails it."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self._go: dict[str, asyncio.Future[str | None]] = {}

    def _future(self, name: str) -> asyncio.Future[str | None]:
        return self._go.setdefault(name, asyncio.get_running_loop().create_future())

    async def generate(self, request: LLMRequest) -> Generation:
        name = request.prompt()
        self.sent.append(name)
        failure = await self._future(name)
        if failure is not None:
            raise LLMResponseError(failure, status=404)
        return Generation(name, done_reason="stop")

    def answer(self, name: str, failure: str | None = None) -> None:
        self._future(name).set_result(failure)

    async def aclose(self) -> None:
        return None


def _request(name: str, priority: Priority = Priority.TURN, *, urgent: bool = False) -> LLMRequest:
    request = LLMRequest(prompt=lambda: name, model="m", agent=name, priority=priority,
                         role="actor" if priority == Priority.TURN else "summarizer")  # fmt: skip
    return replace(request, urgent=(lambda: True)) if urgent else request


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_the_queue_counts_the_urgent_requests_that_passed_a_waiting_one() -> None:
    queue = FairQueue[str](bypass_limit=4)
    turn = queue.push("turn", 0)
    calm = queue.push("summary", 1)
    urgent = queue.push("urgent summary", 1, urgent=lambda: True)
    assert queue.pop() is urgent  # before the turn and the older summary, for its urgency
    assert (turn.passed_by_urgent, calm.passed_by_urgent) == (1, 1)
    assert queue.pop() is turn  # by priority: it passes nobody for urgency
    assert calm.passed_by_urgent == 1


def test_an_urgent_request_passes_a_turn_that_came_later_and_turns_pass_nobody() -> None:
    queue = FairQueue[str](bypass_limit=4)
    urgent = queue.push("urgent summary", 1, urgent=lambda: True)
    turn = queue.push("turn", 0)  # later, but by priority it would have gone first
    assert queue.pop() is urgent
    assert turn.passed_by_urgent == 1
    queue.push("turn 2", 0)
    later = queue.push("turn 3", 0)
    assert queue.pop() is turn
    queue.pop()
    assert later.passed_by_urgent == 0  # only turns went before it


async def test_a_turn_queued_behind_an_urgent_summary_says_all_it_queued() -> None:
    now = [100.0]
    backend = Held()
    dispatcher = Dispatcher([Endpoint("held", backend, slots=1)], clock=lambda: now[0])
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await _settle()
    turn = asyncio.create_task(dispatcher.generate(_request("turn")))
    await _settle()
    summary = asyncio.create_task(
        dispatcher.generate(_request("summary", Priority.SUMMARY, urgent=True))
    )
    await _settle()
    now[0] += 2.0
    backend.answer("busy")
    await _settle()
    assert backend.sent == ["busy", "summary"]  # the urgent summary went first
    now[0] += 3.5
    backend.answer("summary")
    await _settle()
    backend.answer("turn")
    done = await turn
    assert done.memory_wait == 5.5  # from its push to its grant, on the dispatcher's clock
    assert (await summary).memory_wait == 0.0  # a compaction's own wait is not a turn's
    assert (await busy).memory_wait == 0.0  # it never queued
    await dispatcher.aclose()


async def test_a_turn_queued_behind_other_turns_only_waited_for_no_memory() -> None:
    now = [0.0]
    backend = Held()
    dispatcher = Dispatcher([Endpoint("held", backend, slots=1)], clock=lambda: now[0])
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await _settle()
    summary = asyncio.create_task(dispatcher.generate(_request("summary", Priority.SUMMARY)))
    turn = asyncio.create_task(dispatcher.generate(_request("turn")))
    await _settle()
    now[0] += 4.0
    backend.answer("busy")
    await _settle()
    assert backend.sent == ["busy", "turn"]
    backend.answer("turn")
    assert (await turn).memory_wait == 0.0  # it queued 4 s, behind a turn: not memory's
    backend.answer("summary")
    await asyncio.gather(busy, summary)
    await dispatcher.aclose()


async def test_a_failed_turn_call_says_what_it_queued_behind_compactions_too() -> None:
    now = [0.0]
    backend = Held()
    dispatcher = Dispatcher([Endpoint("held", backend, slots=1)], clock=lambda: now[0],
                            retry=RetryPolicy(attempts=1))  # fmt: skip
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await _settle()
    turn = asyncio.create_task(dispatcher.generate(_request("turn")))
    summary = asyncio.create_task(
        dispatcher.generate(_request("summary", Priority.SUMMARY, urgent=True))
    )
    await _settle()
    now[0] += 1.25
    backend.answer("busy")
    await _settle()
    backend.answer("summary")
    await _settle()
    backend.answer("turn", "no such model")
    failed = (await asyncio.gather(turn, return_exceptions=True))[0]
    assert isinstance(failed, LLMResponseError)
    assert failed.memory_wait == 1.25
    await asyncio.gather(busy, summary)
    await dispatcher.aclose()


class Says:
    """A backend that says what a call waited for memory (as a replay's tape does)."""

    def __init__(self, waits: list[float], fail: bool = False) -> None:
        self.waits, self.fail = waits, fail

    async def generate(self, request: LLMRequest) -> Generation:
        wait = self.waits.pop(0)
        if self.fail:
            error = LLMResponseError("gone", status=404)
            error.memory_wait = wait
            raise error
        return Generation("look", memory_wait=wait)


async def test_the_gate_counts_a_turn_once_and_every_calls_seconds(sim: Simulation) -> None:
    bo = sim.minds["bo"]
    gate = MemoryGate(sim.minds)
    llm = gate.counting(Says([0.0, 1.5, 0.25]), bo)  # one turn, three asks
    for _ in range(3):
        await llm.generate(_request("turn"))
    assert (bo.queued_turns, bo.queued_seconds) == (1, 1.75)
    failing = gate.counting(Says([2.0], fail=True), bo)  # the next turn's failed call
    with pytest.raises(LLMResponseError):
        await failing.generate(_request("turn"))
    assert (bo.queued_turns, bo.queued_seconds) == (2, 3.75)
    assert (bo.held_turns, bo.held_seconds) == (0, 0.0)  # never held at the gate
    bo.held_turns, bo.held_seconds = 1, 0.5
    state = bo.state().held_for_memory
    assert (state.queued_turns, state.queued_seconds, state.total_seconds) == (2, 3.75, 4.25)
    assert ("held for memory: 4.2 s in all for summaries (1 turn held at the gate 0.5 s; "
            "2 turns queued behind urgent summaries 3.8 s)") in bo.status().render()  # fmt: skip
