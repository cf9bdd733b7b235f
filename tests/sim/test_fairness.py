"""Summaries keep up with turns: agents act back to back through the real Scheduler,
Thinkers, Compactor, memory gate and Dispatcher.

- Alone (one agent a room, issue 13): with windows 4/4 no agent may ever have more than
  one due chunk waiting (M - b never past I + 2R = 12), and no summary request may wait
  through more than ``bypass_limit`` turn dispatches.
- In a crowd (issue 29): every agent in one room, saying things, so every line one of
  them says is a memory for all of them; with a player beside them who speaks after
  every turn. Back-pressure holds the bound at every moment: an agent's M - b never
  passes I + 2R (I + 2R + 1 with the player's line: within the issue's I + 2R + S), a
  player's never passes I + 4R; turns that waited say so (``held_for_memory``, kept in
  the vault). Without the gate the bound still holds (a memory that would pass it
  commits the due chunk extractively at once), but most summaries are then extractive:
  the gate is what keeps them the model's.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.agents.memory import MemoryStream
from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.request import Generation, LLMRequest, Priority
from engine.memory.backpressure import bound, limit
from engine.memory.waterfall import Windows
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation
from engine.world.events import Event

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

IMMEDIATE = RECENT = 4
BYPASS_LIMIT = 4
SUMMARY = "I listened to everyone in the room say something, and I said something too."


def _world(agents: int, *, crowd: bool = False, player: bool = False, window: int = 4) -> str:
    """``agents`` agents, each alone in a room, or all in one room (``crowd``), and a
    player among them."""
    rooms = 1 if crowd else agents
    lines = ["name: Fairness", "rooms:"]
    for n in range(rooms):
        lines += [f"  - id: r{n}", f"    name: Room {n}", "    description: A bare room."]
    lines.append("characters:")
    for n in range(agents):
        lines += [f"  - name: Agent{n}", "    type: agent", f"    location: r{0 if crowd else n}",
                  "    profile: A talker.", f"    immediate_window: {window}",
                  f"    recent_window: {window}"]  # fmt: skip
    if player:
        lines += ["  - name: Pat", "    type: player", "    location: r0",
                  f"    immediate_window: {window}", f"    recent_window: {window}"]  # fmt: skip
    return "\n".join(lines) + "\n"


class InstantModel:
    """Answers at once (summaries after ``summary_delay`` s): a new line for every turn
    (``say`` in a crowd, so the whole room remembers it), one fixed summary otherwise."""

    def __init__(self, verb: str = "think", summary_delay: float = 0.0) -> None:
        self.verb = verb
        self.summary_delay = summary_delay
        self.calls: dict[str, int] = {"actor": 0, "summarizer": 0}

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(self.summary_delay if request.role == "summarizer" else 0)
        request.prompt()
        self.calls[request.role] = self.calls.get(request.role, 0) + 1
        if request.role == "actor":
            text = f"{self.verb} Something number {self.calls['actor']}."
        else:
            text = SUMMARY
        return Generation(text=text, prompt_tokens=10, completion_tokens=5, done_reason="stop")

    async def aclose(self) -> None:
        return None


@dataclass
class Peaks:
    agents: int = 0
    """The largest M - b any agent reached, looked at after every event and turn."""
    players: int = 0


async def _live_run(
    tmp_path: Path, world_text: str, slots: int, turns: int, *, verb: str = "think",
    player_speaks: bool = False, summary_delay: float = 0.0,
) -> tuple[Peaks, Dispatcher, Simulation]:  # fmt: skip
    """Run until ``turns`` turns are taken (the vault is saved and closed); the peaks of
    M - b, the dispatcher (for its fairness figures) and the simulation."""
    world = tmp_path / "fair.yaml"
    world.write_text(world_text, encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world)
    model = InstantModel(verb, summary_delay)
    dispatcher = Dispatcher([Endpoint("instant", model, slots=slots)], bypass_limit=BYPASS_LIMIT)
    sim.compactor.first_delay = sim.compactor.max_delay = 0.001
    sim.knowledge.enabled = False  # only summaries and turns share the slots here
    agents = [c.id for c in sim.world.characters.values() if c.type == "agent"]
    sim.start_compaction(dispatcher, dict.fromkeys(sim.minds, "tiny"))
    thinkers = make_thinkers(sim, dict.fromkeys(agents, "tiny"))
    # speed 1e6: the 6 s think interval becomes 6 us, so every agent acts back to back
    scheduler = Scheduler(sim, dispatcher, thinkers, seed=1, speed=1e6)
    player = next((c for c in sim.world.characters.values() if c.type == "player"), None)
    peaks = Peaks()
    spoken = 0

    def watch(happening: Happening) -> None:
        nonlocal spoken
        for mind in sim.minds.values():
            unsummarized = mind.count - mind.boundary
            if mind.character.type == "agent":
                peaks.agents = max(peaks.agents, unsummarized)
            else:
                peaks.players = max(peaks.players, unsummarized)
        if isinstance(happening, Turn):
            if player is not None and player_speaks:
                spoken += 1
                sim.execute(player, f"say I am still here, number {spoken}.")
            if sum(scheduler.turns_taken.values()) >= turns:
                scheduler.stop()
        else:
            assert isinstance(happening, Event)

    scheduler.listen(watch)
    try:
        await scheduler.run()
        await scheduler.finish(5)
        await sim.compactor.drain(5)
        await dispatcher.aclose()
        assert model.calls["summarizer"] > 0
        assert all(m.boundary > 0 for m in sim.minds.values())
        sim.save()
    finally:
        sim.close()
    return peaks, dispatcher, sim


@pytest.mark.parametrize(("agents", "slots"), [(5, 1), (3, 4)], ids=["5-on-1", "3-on-4"])
async def test_summaries_keep_up_with_agents_acting_back_to_back(
    tmp_path: Path, agents: int, slots: int
) -> None:
    peaks, dispatcher, _ = await _live_run(tmp_path, _world(agents), slots, turns=40 * agents)
    assert peaks.agents <= IMMEDIATE + 2 * RECENT, "more than one due chunk waited"
    assert dispatcher.fairness.granted[Priority.SUMMARY] > 0
    assert dispatcher.fairness.most_bypassed[Priority.SUMMARY] <= BYPASS_LIMIT


@pytest.mark.parametrize(
    ("agents", "window", "slots", "slow"),
    [(5, 4, 1, 0.0), (5, 8, 1, 0.0), (10, 16, 1, 0.0), (5, 4, 3, 0.01)],
    ids=["5in1-w4", "5in1-w8", "10in1-w16", "5in1-w4-3slots-slow-summaries"],
)
async def test_a_crowded_room_keeps_every_agent_within_the_bound(
    tmp_path: Path, agents: int, window: int, slots: int, slow: float
) -> None:
    world = _world(agents, crowd=True, window=window)
    turns = {4: 150, 8: 200, 16: 300}[window]
    peaks, _, sim = await _live_run(tmp_path, world, slots, turns=turns, verb="say",
                                    summary_delay=slow)  # fmt: skip
    assert peaks.agents <= limit(Windows(window, window), "agent") == 3 * window
    held = {mind.character.name: mind.held_turns for mind in sim.minds.values()}
    if slow:  # turns ran in the other slots while summaries took their time: they waited
        assert sum(held.values()) > 0
    states = [json.loads((tmp_path / "vault" / "agents" / name / "memory-state.json")
                         .read_text(encoding="utf-8")) for name in held]  # fmt: skip
    assert [s["held_for_memory"]["turns"] for s in states] == list(held.values())
    assert all(s["held_for_memory"]["seconds"] >= 0 for s in states)


async def test_a_player_who_speaks_every_turn_gets_summaries_and_a_bound_too(
    tmp_path: Path,
) -> None:
    world = _world(5, crowd=True, player=True)
    peaks, _, sim = await _live_run(tmp_path, world, 1, turns=150, verb="say",
                                    player_speaks=True)  # fmt: skip
    windows = Windows(IMMEDIATE, RECENT)
    assert peaks.agents <= limit(windows, "agent") + 1 <= IMMEDIATE + 2 * RECENT + 1  # S = 1
    assert peaks.players <= limit(windows, "player") + 1 <= IMMEDIATE + 4 * RECENT
    pat = next(m for m in sim.minds.values() if m.character.name == "Pat")
    assert pat.boundary > 0  # the player's summaries came
    assert pat.count > 150  # every turn was a memory of Pat's (and Pat's own lines)


async def _crowd_with_gate(tmp_path: Path, gate: bool) -> tuple[int, list[str]]:
    """5 agents saying things in one room, 150 turns, the memory gate on or off: the
    largest M - b any agent reached, and how each committed chunk summary was made."""
    world = tmp_path / f"fair-{'gated' if gate else 'open'}.yaml"
    world.write_text(_world(5, crowd=True), encoding="utf-8")
    sim = Simulation.open(tmp_path / world.stem, world)
    model = InstantModel("say")
    dispatcher = Dispatcher([Endpoint("instant", model, slots=1)], bypass_limit=BYPASS_LIMIT)
    sim.knowledge.enabled = False
    sim.memory_gate.enabled = gate
    methods: list[str] = []
    told = sim.compactor.committed

    def committed(mind: MemoryStream) -> None:
        assert mind.summaries.recent is not None
        methods.append(mind.summaries.recent.method)
        if told is not None:
            told(mind)

    sim.compactor.committed = committed
    sim.start_compaction(dispatcher, dict.fromkeys(sim.minds, "tiny"))
    thinkers = make_thinkers(sim, dict.fromkeys(sim.minds, "tiny"))
    scheduler = Scheduler(sim, dispatcher, thinkers, seed=1, speed=1e6)
    peak = 0

    def watch(happening: Happening) -> None:
        nonlocal peak
        peak = max(peak, *(m.count - m.boundary for m in sim.minds.values()))
        if isinstance(happening, Turn) and sum(scheduler.turns_taken.values()) >= 150:
            scheduler.stop()

    scheduler.listen(watch)
    try:
        await scheduler.run()
        await scheduler.finish(5)
        await sim.compactor.drain(5)
        await dispatcher.aclose()
    finally:
        sim.close()
    return peak, methods


async def test_without_the_gate_the_bound_holds_but_summaries_go_extractive(
    tmp_path: Path,
) -> None:
    """The bound never needs the gate: with it left open (what main did before
    back-pressure) the same crowd stays within I + 2R, because a memory that would pass
    it commits the due chunk extractively at once. The gate is what keeps the summaries
    the model's: without it most are extractive, with it most are model-written."""
    gated, gated_methods = await _crowd_with_gate(tmp_path, gate=True)
    open_, open_methods = await _crowd_with_gate(tmp_path, gate=False)
    windows = Windows(IMMEDIATE, RECENT)
    assert gated <= bound(windows, "agent") == IMMEDIATE + 2 * RECENT
    assert open_ <= bound(windows, "agent")

    def extractive(methods: list[str]) -> float:
        assert methods, "nothing was committed"
        return methods.count("extractive") / len(methods)

    assert extractive(open_methods) > 0.5  # the bound, not the model, made them
    assert extractive(gated_methods) < 0.5  # the gate let the model keep up
    assert extractive(gated_methods) < extractive(open_methods)


async def test_the_vault_sets_how_many_turns_a_summary_lets_pass(tmp_path: Path) -> None:
    from engine.errors import VaultError
    from engine.sim.run import RunOptions, connect

    world = tmp_path / "world.yaml"
    world.write_text(_world(1), encoding="utf-8")
    Simulation.open(tmp_path / "vault", world).close()
    llm_md = tmp_path / "vault" / "config" / "llm.md"
    default = llm_md.read_text(encoding="utf-8")
    assert "bypass_limit: 4" in default

    llm_md.write_text(default.replace("bypass_limit: 4", "bypass_limit: 2"), encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world)
    try:
        dispatcher, _models = await connect(sim, RunOptions(world, tmp_path / "vault", "fake:"), {})
        assert dispatcher.bypass_limit == 2
        assert sim.memory_gate.enabled
        await dispatcher.aclose()
    finally:
        sim.close()

    llm_md.write_text(default.replace("bypass_limit: 4", "bypass_limit: 0"), encoding="utf-8")
    with pytest.raises(VaultError, match=r"llm\.md"):
        Simulation.open(tmp_path / "vault", world)
    assert "bypass_limit: 0" in llm_md.read_text(encoding="utf-8")  # never overwritten
