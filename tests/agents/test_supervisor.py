"""Structured concurrency for background work: the Supervisor, and the compactor's
workers under it (every error reported with its traceback, cancellation reaching
every task, never swallowed)."""

from __future__ import annotations

import asyncio
import logging
import traceback
from pathlib import Path

import pytest
from helpers import run

from engine.agents.supervisor import Supervisor, one_line
from engine.llm.request import Generation, LLMRequest
from engine.sim.simulation import Simulation


class Reports:
    def __init__(self) -> None:
        self.seen: list[tuple[str, BaseException]] = []

    def __call__(self, message: str, exc: BaseException) -> None:
        self.seen.append((message, exc))


async def _boom() -> None:
    await asyncio.sleep(0)
    raise ValueError("something\nbroke")


async def _forever(cancelled: list[str], name: str) -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.append(name)
        raise


async def test_an_error_is_reported_once_with_its_traceback_and_others_go_on() -> None:
    reports = Reports()
    supervisor = Supervisor(reports)
    cancelled: list[str] = []
    supervisor.spawn(_boom(), name="the boom task")
    other = supervisor.spawn(_forever(cancelled, "other"), name="the other task")
    assert not await supervisor.wait(0.05)  # the other one is still running
    ((message, exc),) = reports.seen
    assert message == "the boom task failed: something broke"
    assert "\n" not in message
    assert isinstance(exc, ValueError)
    assert "_boom" in "".join(traceback.format_exception(exc))
    assert not other.done()  # one task's error never cancels another
    assert supervisor.tasks == [other]
    await supervisor.aclose()
    assert cancelled == ["other"]
    assert supervisor.tasks == []
    assert len(reports.seen) == 1  # a cancellation is not an error


async def test_aclose_cancels_every_task_even_unstarted_ones() -> None:
    supervisor = Supervisor(Reports())
    cancelled: list[str] = []
    tasks = [supervisor.spawn(_forever(cancelled, str(i)), name=f"t{i}") for i in range(3)]
    await asyncio.sleep(0)
    late = supervisor.spawn(_forever(cancelled, "late"), name="late")  # never started
    await supervisor.aclose()
    assert all(task.cancelled() for task in [*tasks, late])
    assert sorted(cancelled) == ["0", "1", "2"]


async def test_a_cancelled_waiter_is_cancelled_and_passes_it_on() -> None:
    supervisor = Supervisor(Reports())
    cancelled: list[str] = []
    child = supervisor.spawn(_forever(cancelled, "child"), name="child")
    waiter = asyncio.create_task(supervisor.wait())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert waiter.cancelled()
    await asyncio.sleep(0)
    assert child.cancelled()
    assert cancelled == ["child"]


def test_one_line() -> None:
    assert one_line(OSError(28, "No space\nleft")) == "[Errno 28] No space left"
    assert one_line(ValueError()) == "ValueError"


# --- the compactor under supervision ----------------------------------------------------


class Stuck:
    """A summarizer whose calls never end; a cancellation takes ``linger`` s to finish."""

    def __init__(self, linger: float = 0.0) -> None:
        self.linger = linger
        self.calls = 0
        self.cancelled = 0

    async def generate(self, request: LLMRequest) -> Generation:
        self.calls += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            await asyncio.sleep(self.linger)
            raise
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        return None


class Broken:
    async def generate(self, request: LLMRequest) -> Generation:
        raise ZeroDivisionError("a bug in a backend")

    async def aclose(self) -> None:
        return None


def _bo_does(sim: Simulation, count: int) -> None:
    for index in range(count):
        run(sim, "Bo", f"think Thought number {index}.")


async def test_drain_does_not_swallow_a_cancellation_of_its_caller(sim: Simulation) -> None:
    llm = Stuck(linger=0.2)
    sim.start_compaction(llm, {"bo": "tiny"})
    _bo_does(sim, 9)
    await asyncio.sleep(0.01)
    assert llm.calls == 1
    drain = asyncio.create_task(sim.compactor.drain(0))
    await asyncio.sleep(0.05)  # the worker is cancelled, and lingers
    drain.cancel()
    with pytest.raises(asyncio.CancelledError):
        await drain
    assert drain.cancelled()
    await asyncio.sleep(0.3)
    assert llm.cancelled == 1
    assert not sim.minds["bo"].in_flight
    assert sim.compactor.workers == {}


async def test_shutdown_cancels_every_worker_mid_call(sim: Simulation) -> None:
    llm = Stuck()
    sim.start_compaction(llm, {c.id: "tiny" for c in sim.world.characters.values()})
    _bo_does(sim, 9)
    for index in range(129):  # Ada (and Pat and Pip, who see her) are due at 129
        run(sim, "Ada", f"think Idea {index}.")
    await asyncio.sleep(0.01)
    assert llm.calls == 4
    await sim.compactor.drain(0)
    assert llm.cancelled == 4
    assert not any(mind.in_flight for mind in sim.minds.values())
    assert sim.compactor.supervisor.tasks == []


async def test_an_unexpected_error_is_logged_with_its_traceback(
    sim: Simulation, caplog: pytest.LogCaptureFixture
) -> None:
    reports = Reports()
    sim.compactor.supervisor = Supervisor(reports)
    sim.compactor.retry = False
    sim.start_compaction(Broken(), {"bo": "tiny"})
    _bo_does(sim, 9)
    await sim.compactor.settle(5)
    ((message, exc),) = reports.seen
    assert message == "memory compaction of Bo failed: ZeroDivisionError: a bug in a backend"
    assert exc.__traceback__ is not None
    bo = sim.minds["bo"]
    assert (bo.failures, bo.last_error) == (1, "ZeroDivisionError: a bug in a backend")


async def test_the_simulation_logs_the_traceback_and_shows_one_line(
    vault_dir: Path, world_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    sim = Simulation.open(vault_dir, world_file, warn=shown.append)
    try:
        sim.compactor.retry = False
        sim.start_compaction(Broken(), {"bo": "tiny"})
        with caplog.at_level(logging.ERROR, logger="mudsim"):
            _bo_does(sim, 9)
            await sim.compactor.settle(5)
    finally:
        sim.close()
    (record,) = [r for r in caplog.records if r.name.startswith("mudsim")]
    assert record.getMessage() == (
        "memory compaction of Bo failed: ZeroDivisionError: a bug in a backend"
    )
    assert record.exc_info is not None  # the run log gets the traceback
    assert shown == [record.getMessage()]  # the user one line
