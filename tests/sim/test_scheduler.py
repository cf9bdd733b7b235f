"""The scheduler drives thinkers over the fixture world with the scripted backend or
the loopback stub: turns, order, pause/step/resume, real time, shutdown."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.llm.ollama import OllamaBackend
from engine.llm.stub_server import StubOllama
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation
from engine.world.events import Event, EventKind


def _scheduler(
    sim: Simulation, llm: ScriptedBackend | Dispatcher, seed: int | None = None
) -> Scheduler:
    models = {c.id: "tiny" for c in sim.world.characters.values() if c.type == "agent"}
    return Scheduler(sim, llm, make_thinkers(sim, models, seed), seed=seed)


async def test_every_agent_takes_exactly_n_turns(sim: Simulation) -> None:
    llm = ScriptedBackend(["look", "say Hello", "think Quiet here."])
    scheduler = _scheduler(sim, llm)
    heard: list[Happening] = []
    scheduler.listen(heard.append)
    await scheduler.run(turns=4)
    assert scheduler.turns_taken == {"ada": 4, "bo": 4}
    turns = [h for h in heard if isinstance(h, Turn)]
    assert sorted(t.agent for t in turns) == ["Ada"] * 4 + ["Bo"] * 4
    events = [h for h in heard if isinstance(h, Event)]
    assert any(
        e.kind is EventKind.AMBIENT and e.text == "Ada pauses, deep in thought..." for e in events
    )
    # one memory per executed command, and the ambient pause is never remembered
    ada = sim.minds["ada"]
    assert sum(1 for m in ada.tail if m.command is not None) == 4
    assert not any("deep in thought" in m.text for m in ada.tail)


async def test_failed_calls_count_as_turns_and_the_run_still_ends(sim: Simulation) -> None:
    llm = ScriptedBackend(["look"], fail_first=3)
    dispatcher = Dispatcher([Endpoint("fake:", llm)], retry=RetryPolicy(attempts=1))
    scheduler = _scheduler(sim, dispatcher)
    await scheduler.run(turns=2)
    assert scheduler.turns_taken == {"ada": 2, "bo": 2}
    assert sum(t.skipped for t in scheduler.thinkers.values()) == 3
    assert dispatcher.metrics.failures == 3


async def _agent_order(vault_dir: Path, world_file: Path, seed: int) -> list[str]:
    sim = Simulation.open(vault_dir, world_file)
    try:
        llm = ScriptedBackend(["look", "say Hi"])
        await _scheduler(sim, llm, seed=seed).run(turns=6)
        return [str(r.agent) for r in llm.requests]
    finally:
        sim.close()


async def test_a_seed_fixes_the_order(tmp_path: Path, world_file: Path) -> None:
    first = await _agent_order(tmp_path / "a", world_file, 3)
    assert first == await _agent_order(tmp_path / "b", world_file, 3)
    others = [await _agent_order(tmp_path / f"v{s}", world_file, s) for s in range(4, 12)]
    assert any(order != first for order in others)


async def test_pause_step_resume(sim: Simulation) -> None:
    scheduler = _scheduler(sim, ScriptedBackend(["look", "say Hi"]))
    scheduler.pause()
    running = asyncio.create_task(scheduler.run(turns=3))
    await asyncio.sleep(0.05)
    assert scheduler.turns_taken == {"ada": 0, "bo": 0}
    await scheduler.step()
    assert scheduler.turns_taken == {"ada": 1, "bo": 1}
    scheduler.resume()
    await asyncio.wait_for(running, 5)
    assert scheduler.turns_taken == {"ada": 3, "bo": 3}


async def test_real_time_turns_follow_the_interval_and_speed(sim: Simulation) -> None:
    scheduler = _scheduler(sim, ScriptedBackend(["look", "say Hi"]))
    scheduler.speed = 60.0  # the default 6 s interval becomes 0.1 s
    assert scheduler.interval(sim.character("Ada")) == 0.1
    running = asyncio.create_task(scheduler.run())
    await asyncio.sleep(0.55)
    scheduler.stop()
    await asyncio.wait_for(running, 5)
    await scheduler.finish()
    for taken in scheduler.turns_taken.values():
        assert 3 <= taken <= 6


async def test_shutdown_waits_a_bounded_time_for_a_hung_call(sim: Simulation) -> None:
    with StubOllama(models=["tiny"]) as stub:
        stub.hang_next(times=2)
        backend = OllamaBackend(stub.url, timeout=httpx.Timeout(30.0))
        dispatcher = Dispatcher([Endpoint(stub.url, backend, slots=2)])
        scheduler = _scheduler(sim, dispatcher)
        running = asyncio.create_task(scheduler.run(turns=1))
        await asyncio.sleep(0.2)
        assert dispatcher.in_flight == 2
        scheduler.stop()
        await asyncio.wait_for(scheduler.finish(grace=0.2), 5)
        await asyncio.wait_for(running, 5)
        await dispatcher.aclose(grace=0.1)
    assert dispatcher.in_flight == 0
    assert sum(1 for m in sim.minds["ada"].tail if m.command) == 0  # nothing half-done ran


def test_a_new_run_remembers_the_last_command_so_it_is_not_repeated(sim: Simulation) -> None:
    sim.execute(sim.character("Ada"), "Say  Hello | first words")
    sim.execute(sim.character("Pat"), "look")  # another's command is not Ada's
    thinkers = make_thinkers(sim, {"ada": "tiny", "bo": "tiny"})
    assert thinkers["ada"].last_key == "say hello"
    assert thinkers["bo"].last_key is None
