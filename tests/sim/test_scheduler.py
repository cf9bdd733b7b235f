"""The scheduler drives thinkers over the fixture world with the scripted backend or
the loopback stub: turns, order, pause/step/resume, real time, shutdown."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import pytest

from engine.agents.thinker import Turn
from engine.cli import main
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.llm.ollama import OllamaBackend
from engine.llm.request import Generation, LLMRequest
from engine.llm.stub_server import StubOllama
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import LLMLink, Simulation
from engine.world.events import Event, EventKind
from engine.world.model import Character


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


# --- one agent's problem costs its turn, nothing else ----------------------------------

BROKEN_NOTE = "---\ntitle: [never closed\n---\nThe quinces ripen after the frost.\n"


def _break_a_note(vault_dir: Path, folder: str) -> Path:
    notes = vault_dir / "agents" / folder / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    path = notes / "quinces.md"
    path.write_text(BROKEN_NOTE, encoding="utf-8")
    return path


async def test_a_broken_note_costs_its_agent_the_turn_and_the_others_go_on(
    sim: Simulation, vault_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _break_a_note(vault_dir, "Ada")
    backend = ScriptedBackend(["look", "say Hello", "think Quiet here."])
    dispatcher = Dispatcher([Endpoint("fake:", backend)])
    scheduler = _scheduler(sim, dispatcher)
    heard: list[Happening] = []
    scheduler.listen(heard.append)
    with caplog.at_level(logging.ERROR, logger="mudsim"):
        await scheduler.run(turns=3)
    assert scheduler.turns_taken == {"ada": 3, "bo": 3}
    ada, bo = scheduler.thinkers["ada"], scheduler.thinkers["bo"]
    assert (ada.skipped, bo.skipped) == (3, 0)
    assert ada.last_error is not None
    assert "could not build the prompt" in ada.last_error
    assert "quinces.md" in ada.last_error
    skips = [h for h in heard if isinstance(h, Turn) and h.error is not None]
    assert [t.agent for t in skips] == ["Ada"] * 3
    assert sum(1 for m in sim.minds["bo"].tail if m.command) == 3  # Bo acted every turn
    assert not any(m.command for m in sim.minds["ada"].tail)
    assert all(p.endswith("~Bo>") for p in backend.prompts)
    # not the LLM's fault: no failure, no retry on the endpoint
    assert (dispatcher.metrics.failures, dispatcher.metrics.retries) == (0, 0)
    assert dispatcher.endpoints[0].metrics.last_error is None
    logged = [r for r in caplog.records if r.name == "mudsim" and r.exc_info]
    assert len(logged) == 3
    # @llm-status shows it
    sim.llm = LLMLink(dispatcher, {"Ada": "tiny", "Bo": "tiny"}, scheduler.thinkers)
    status = sim.execute(sim.character("Pat"), "@llm-status").text
    assert "Turns: 6 (3 skipped)" in status
    assert "- Ada skipped 3 of 3 turns; last: could not build the prompt: " in status
    assert "Calls: 3 (0 failed, 0 retries)" in status


async def test_in_real_time_a_broken_note_does_not_stop_the_run(
    sim: Simulation, vault_dir: Path
) -> None:
    _break_a_note(vault_dir, "Ada")
    scheduler = _scheduler(sim, ScriptedBackend(["look", "say Hi"]))
    scheduler.speed = 600.0  # the default 6 s interval becomes 0.01 s
    running = asyncio.create_task(scheduler.run())
    for _ in range(500):
        if scheduler.turns_taken["bo"] >= 3 and scheduler.turns_taken["ada"] >= 3:
            break
        await asyncio.sleep(0.01)
    assert not running.done()
    scheduler.stop()
    await asyncio.wait_for(running, 5)
    await scheduler.finish()
    assert scheduler.thinkers["ada"].skipped == scheduler.turns_taken["ada"] >= 3
    assert scheduler.thinkers["bo"].skipped == 0


async def test_a_listener_that_raises_is_logged_and_the_run_goes_on(
    sim: Simulation, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = _scheduler(sim, ScriptedBackend(["look", "say Hi"]))
    heard: list[Happening] = []

    def broken(happening: Happening) -> None:
        raise RuntimeError("a listener bug")

    scheduler.listen(broken)
    scheduler.listen(heard.append)  # later listeners still hear everything
    with caplog.at_level(logging.ERROR, logger="mudsim"):
        await scheduler.run(turns=2)
    assert scheduler.turns_taken == {"ada": 2, "bo": 2}
    assert sum(1 for h in heard if isinstance(h, Turn)) == 4
    assert sum(1 for m in sim.minds["ada"].tail if m.command) == 2
    assert any("a listener bug" in r.getMessage() or r.exc_info for r in caplog.records)


async def test_cancelling_a_run_cancels_every_turn_and_is_not_swallowed(sim: Simulation) -> None:
    class Hung(ScriptedBackend):
        async def generate(self, request: LLMRequest) -> Generation:
            request.prompt()
            await asyncio.Event().wait()
            raise AssertionError

    for turns in (None, 1):
        scheduler = _scheduler(sim, Hung())
        if turns is None:
            scheduler.speed = 600.0
        running = asyncio.create_task(scheduler.run(turns))
        for _ in range(200):
            if all(t.thinking for t in scheduler.thinkers.values()):
                break
            await asyncio.sleep(0.01)
        assert all(t.thinking for t in scheduler.thinkers.values())
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        await asyncio.sleep(0)
        if turns is None:  # live turns are left to finish(); it cancels them at the grace
            await asyncio.wait_for(scheduler.finish(grace=0.05), 5)
        assert not any(t.thinking for t in scheduler.thinkers.values())


async def test_finish_does_not_swallow_its_own_cancellation(sim: Simulation) -> None:
    class Stubborn(ScriptedBackend):
        """A call that ignores the first cancellation (a backend tidying up slowly)."""

        async def generate(self, request: LLMRequest) -> Generation:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                await asyncio.sleep(0.2)
                raise
            raise AssertionError

    scheduler = _scheduler(sim, Stubborn())
    running = asyncio.create_task(scheduler.run(turns=1))
    await asyncio.sleep(0.05)
    finishing = asyncio.create_task(scheduler.finish(grace=0.01))
    await asyncio.sleep(0.05)  # finish has cancelled the turns and waits for them
    finishing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await finishing
    await asyncio.wait_for(running, 5)


def test_a_headless_run_shows_the_skips_and_counts_them(
    vault_dir: Path, world_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Simulation.open(vault_dir, world_file).close()  # seed the vault
    note = _break_a_note(vault_dir, "Ada")
    code = main(["run", str(world_file), "--vault", str(vault_dir), "--headless",
                 "--turns", "2", "--llm", "fake:look;say Hi", "--seed", "1"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    skips = [line for line in out.splitlines() if "Ada's turn was skipped" in line]
    assert len(skips) == 2
    assert f"could not build the prompt: {note} has invalid front matter" in skips[0]
    assert 'Bo says, "Hi."' in out or "The Yard" in out  # Bo acted
    assert "Traceback" not in out + err
    summary, cost = out.splitlines()[-2:]
    assert summary.startswith("Run summary: 2 agents, 4 turns (2 skipped), ")
    assert cost.startswith("Cost per agent: Ada 0+0 tokens, 0.0 s LLM, 2 calls; Bo ")


async def test_a_timer_that_fails_is_shown_and_the_other_agents_go_on(
    sim: Simulation, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = _scheduler(sim, ScriptedBackend(["look", "say Hi"]))
    scheduler.speed = 600.0
    interval = scheduler.interval

    def broken_for_ada(character: Character) -> float:
        if character.name == "Ada":
            raise ArithmeticError("a bad think_interval")
        return interval(character)

    monkeypatch.setattr(scheduler, "interval", broken_for_ada)  # a fault injected
    heard: list[Happening] = []
    scheduler.listen(heard.append)
    with caplog.at_level(logging.ERROR, logger="mudsim"):
        running = asyncio.create_task(scheduler.run())
        for _ in range(500):
            if scheduler.turns_taken["bo"] >= 3:
                break
            await asyncio.sleep(0.01)
        scheduler.stop()
        await asyncio.wait_for(running, 5)
        await scheduler.finish()
    assert scheduler.turns_taken["bo"] >= 3
    errors = [h.error for h in heard if isinstance(h, Turn) and h.agent == "Ada" and h.error]
    assert errors == [
        "its timer failed (ArithmeticError: a bad think_interval); no more turns this run"
    ]
    assert any(r.exc_info for r in caplog.records if r.name == "mudsim")
