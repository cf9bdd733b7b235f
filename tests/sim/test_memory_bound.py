"""The memory bound holds whatever arrives: a player typing fast beside a crowd, a slow
summarizer, a failing one. Five agents and a player in one room (windows 4/4: an agent's
bound is I + 2R = 12, within I + 2R + S; a player's I + 4R = 20), one model slot, the
real Scheduler, Thinkers, Compactor and memory gate, the model the loopback stub server
over HTTP."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.ollama import OllamaBackend
from engine.llm.request import Generation
from engine.llm.stub_server import RELATED, StubOllama
from engine.memory.backpressure import bound
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation
from engine.world.events import Event

AGENTS = 5
SLOTS = 1


def crowd_world(agents: int = AGENTS, window: int = 4) -> str:
    lines = ["name: Crowd", "rooms:", "  - id: hall", "    name: The Hall",
             "    description: A hall full of talk.", "characters:"]  # fmt: skip
    for n in range(agents):
        lines += [f"  - name: Agent{n}", "    type: agent", "    location: hall",
                  "    profile: A talker.", f"    immediate_window: {window}",
                  f"    recent_window: {window}"]  # fmt: skip
    lines += ["  - name: Pat", "    type: player", "    location: hall",
              f"    immediate_window: {window}", f"    recent_window: {window}"]  # fmt: skip
    return "\n".join(lines) + "\n"


@dataclass
class Watch:
    """The largest M - b of every character, looked at after every event and turn."""

    sim: Simulation
    peaks: dict[str, int] = field(default_factory=dict)
    over: list[str] = field(default_factory=list)
    turns: dict[str, list[float]] = field(default_factory=dict)

    def look(self) -> None:
        for mind in self.sim.minds.values():
            name, behind = mind.character.name, mind.count - mind.boundary
            self.peaks[name] = max(self.peaks.get(name, 0), behind)
            if behind > bound(mind.windows, mind.character.type):
                self.over.append(f"{name}: M - b = {behind}")

    def __call__(self, happening: Happening | Event) -> None:
        self.look()
        if isinstance(happening, Turn):
            self.turns.setdefault(happening.agent, []).append(time.monotonic())


@asynccontextmanager
async def crowd(
    tmp_path: Path, stub: StubOllama
) -> AsyncIterator[tuple[Simulation, Scheduler, Watch]]:
    world = tmp_path / "crowd.yaml"
    world.write_text(crowd_world(), encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world, notice=None)
    sim.knowledge.enabled = False  # turns and summaries share the slot here
    backend = OllamaBackend(stub.url)
    dispatcher = Dispatcher([Endpoint(stub.url, backend, slots=SLOTS)],
                            retry=RetryPolicy(attempts=2, base_delay=0.05, max_delay=0.1))  # fmt: skip
    sim.start_compaction(dispatcher, dict.fromkeys(sim.minds, "tiny"))
    agents = [c.id for c in sim.world.characters.values() if c.type == "agent"]
    scheduler = Scheduler(sim, dispatcher, make_thinkers(sim, dict.fromkeys(agents, "tiny")),
                          seed=3, speed=60.0)  # fmt: skip
    watch = Watch(sim)
    scheduler.listen(watch)
    sim.listeners.append(watch)
    try:
        yield sim, scheduler, watch
    finally:
        await sim.supervisor.aclose()
        await dispatcher.aclose(grace=1.0)  # (its HTTP connections closed, none leaked)
        sim.close()


async def _type(sim: Simulation, watch: Watch, every: float, seconds: float) -> int:
    """Pat says a line every ``every`` seconds for ``seconds``; lines said."""
    pat = sim.character("Pat")
    said = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        said += 1
        sim.execute(pat, f"say Line {said} from me, and more to come.")
        watch.look()
        await asyncio.sleep(every)
    return said


async def until(check: Callable[[], bool], limit: float = 5.0) -> None:
    """Wait until ``check()`` holds (at most ``limit`` s)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while not check():
        assert loop.time() < end, "the condition never held"
        await asyncio.sleep(0.01)


def _replies() -> list[str]:
    return [f"say I hear you, and here is my word number {n}." for n in range(1, 200)]


async def test_a_player_typing_every_0_3_s_keeps_everyone_in_bound_and_agents_turning(
    tmp_path: Path,
) -> None:
    with StubOllama(replies=_replies(), models=["tiny"], summary=RELATED, seed=5) as stub:
        stub.summary_delay, stub.summary_jitter = 0.5, 1.5  # a 0.5-2 s summarizer
        async with crowd(tmp_path, stub) as (sim, scheduler, watch):
            running = asyncio.create_task(scheduler.run())
            started = time.monotonic()
            typing = 6.0
            lines = await _type(sim, watch, 0.3, typing)
            scheduler.stop()
            await asyncio.wait_for(running, 10)
            await scheduler.finish(5)
            await sim.compactor.drain(1)
    assert lines >= 15
    assert watch.over == [], watch.over[:5]
    assert watch.peaks["Pat"] <= 20
    assert all(watch.peaks[f"Agent{n}"] <= 4 + 2 * 4 + SLOTS for n in range(AGENTS))
    last_third = started + typing * 2 / 3
    for n in range(AGENTS):
        times = watch.turns.get(f"Agent{n}", [])
        assert len(times) >= 3, (n, len(times))
        assert any(t >= last_third for t in times), n


async def test_a_summarizer_answering_500_never_stops_the_world_and_is_said_at_once(
    tmp_path: Path,
) -> None:
    said: list[tuple[float, str]] = []
    with StubOllama(replies=_replies(), models=["tiny"], summary=RELATED) as stub:
        stub.summary_status = 500
        async with crowd(tmp_path, stub) as (sim, scheduler, watch):
            sim.compactor.notice = lambda line: said.append((time.monotonic(), line))
            sim.compactor.first_delay = 0.2
            first: list[float] = []
            backend = sim.compactor.llm
            assert backend is not None

            class Timed:  # when the first summary request was made
                async def generate(self, request):  # type: ignore[no-untyped-def]
                    first.append(time.monotonic())
                    return await backend.generate(request)

            sim.compactor.llm = Timed()
            running = asyncio.create_task(scheduler.run(turns=12))
            await asyncio.wait_for(running, 60)
            await scheduler.finish(5)
            await sim.compactor.drain(1)
            history = [s for mind in sim.minds.values() for _, s in mind.store.history()]
    assert first, "summaries were asked for"
    assert said, "nothing was said of the failing summarizer"
    assert said[0][0] - first[0] <= 10.0
    assert said[0][1].startswith("summaries failing: ")
    assert any("writing extractive summaries" in line for _, line in said)
    assert sum(scheduler.turns_taken.values()) == 12 * AGENTS  # the world kept running
    assert watch.over == []
    assert history
    assert all(summary.method == "extractive" for summary in history)


async def test_a_turn_held_for_memory_is_cut_at_once_when_the_run_stops(
    tmp_path: Path,
) -> None:
    with StubOllama(replies=_replies(), models=["tiny"], summary=RELATED) as stub:
        stub.hang_next(times=50)  # nothing answers: memory falls behind, turns are held
        async with crowd(tmp_path, stub) as (sim, scheduler, _):
            pat = sim.character("Pat")
            for n in range(12):  # every agent at its limit (12): agents wait
                sim.execute(pat, f"say Line {n} from me.")
            assert sim.memory_gate.anyone_behind()
            running = asyncio.create_task(scheduler.run())
            await until(lambda: sim.memory_gate.waiting == AGENTS)
            started = time.monotonic()
            scheduler.stop()
            await asyncio.wait_for(running, 5)
            await scheduler.finish(30)
            stopped_in = time.monotonic() - started
            await sim.compactor.drain(0)
    assert stopped_in < 2.0
    assert sum(scheduler.turns_taken.values()) == 0  # each held turn cut short, none run


async def test_a_hold_lasts_at_most_its_limit_when_a_summary_never_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.sim import memory_gate

    monkeypatch.setattr(memory_gate, "HOLD_LIMIT", 0.3)
    with StubOllama(replies=_replies(), models=["tiny"], summary=RELATED) as stub:
        stub.hang_next(times=50)
        async with crowd(tmp_path, stub) as (sim, _, _):
            mind = sim.minds["agent0"]
            pat = sim.character("Pat")
            for n in range(12):
                sim.execute(pat, f"say Line {n} from me.")
            started = time.monotonic()
            async with sim.memory_gate.turn(mind) as hold:
                await hold()
            assert 0.25 <= time.monotonic() - started < 5
            assert mind.held_turns == 1
            await sim.compactor.drain(0)


@pytest.mark.parametrize(("kind", "players"), [("serve", "extractive"), ("run", "llm")])
async def test_a_served_worlds_players_summaries_are_extractive_by_default(
    tmp_path: Path, kind: str, players: str
) -> None:
    from engine.sim.run import RunOptions, connect

    world = tmp_path / "crowd.yaml"
    world.write_text(crowd_world(), encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world, notice=None)
    try:
        with StubOllama(models=["tiny"], summary=RELATED) as stub:
            options = RunOptions(world, tmp_path / "vault", stub.url, "tiny")
            dispatcher, _ = await connect(sim, options, {}, kind=kind, notice=lambda _: None)
            assert sim.compactor.players == players
            await sim.supervisor.aclose()
            await dispatcher.aclose(grace=1.0)
    finally:
        sim.close()


async def test_150_players_who_chat_cost_no_summary_calls(tmp_path: Path) -> None:
    """What ``mudsim serve`` sets (``players: extractive``): 150 players chatting in the
    hall with the agents; every player's memory stays in bound without one call."""
    from engine.world.model import Character

    world = tmp_path / "crowd.yaml"
    world.write_text(crowd_world(), encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world, notice=None)
    asked: list[str] = []

    class Counting:
        async def generate(self, request):  # type: ignore[no-untyped-def]
            asked.append(str(request.agent))
            from engine.llm.fake import fake_summary

            return Generation(fake_summary(request.prompt()), done_reason="stop")

        async def aclose(self) -> None:
            return None

    try:
        sim.knowledge.enabled = False
        sim.start_compaction(Counting(), dict.fromkeys(sim.minds, "tiny"))
        sim.compactor.players = "extractive"
        for n in range(150):
            sim.add_character(Character(f"guest{n}", f"Guest{n}", "player", "hall"))
        guests = [c for c in sim.world.characters.values() if c.name.startswith("Guest")]
        watch = Watch(sim)
        for n, guest in enumerate(guests):  # 150 lines: a chunk falls due for every guest
            sim.execute(guest, f"say Hello from {guest.name}.")
            watch.look()
            if n % 10 == 0:
                await asyncio.sleep(0)
        await sim.compactor.settle(60)  # (150 guests' commits, each written to disk)
        players = {c.name for c in sim.world.characters.values() if c.type == "player"}
        assert not players & set(asked), "a player's summary asked the model"
        assert watch.over == []
        guest = sim.minds[guests[0].id]
        assert guest.boundary > 0  # its memory was summarized, extractively
        assert guest.summaries.recent is not None
        assert guest.summaries.recent.method == "extractive"
    finally:
        sim.close()


def test_a_headless_run_says_within_10_s_that_summaries_fail_and_keeps_running(
    tmp_path: Path,
) -> None:
    """``mudsim run --headless`` against a server that answers HTTP 500 to every summary:
    a line on stderr names the failing summaries within 10 s of the first summary request,
    every turn is taken, the summaries are extractive, the run ends (exit 0)."""
    import subprocess
    import threading

    from helpers import mudsim_command, mudsim_env

    world = tmp_path / "crowd.yaml"
    world.write_text(crowd_world(agents=3), encoding="utf-8")
    heard: list[tuple[float, str]] = []
    with StubOllama(replies=_replies(), models=["tiny"], summary=RELATED) as stub:
        stub.summary_status = 500
        argv = mudsim_command("run", world, "--vault", tmp_path / "vault", "--headless",
                              "--llm", stub.url, "--model", "tiny", "--turns", "12")  # fmt: skip
        with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, env=mudsim_env()) as process:  # fmt: skip

            def read() -> None:
                assert process.stderr is not None
                for line in process.stderr:
                    heard.append((time.monotonic(), line.rstrip("\n")))

            reader = threading.Thread(target=read)
            reader.start()
            code = process.wait(timeout=120)
            reader.join(5)
        first = stub.first_summary_at
    assert code == 0, heard
    assert first is not None
    failing = [(t, line) for t, line in heard if "memory: summaries failing" in line]
    assert failing, heard
    assert failing[0][0] - first <= 10.0
    summaries = sorted((tmp_path / "vault" / "agents").glob("*/summaries/recent-*.md"))
    assert summaries
    from engine.vault.files import read_front_matter

    assert all(read_front_matter(path)[0]["method"] == "extractive" for path in summaries)
