"""Summaries keep up with turns (issue 13, item 10): agents act back to back through the
real Scheduler, Thinkers and Compactor, and the Dispatcher serves them from one slot
(or four). With windows 4/4 no agent may ever have more than one due chunk waiting
(M - b never past I + 2R = 12), and no summary request may wait through more than
``bypass_limit`` turn dispatches."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.request import Generation, LLMRequest, Priority
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation

IMMEDIATE = RECENT = 4
BYPASS_LIMIT = 4


def _world(agents: int) -> str:
    """``agents`` agents, each alone in a room (a thought is then one memory, its own)."""
    lines = ["name: Fairness", "rooms:"]
    for n in range(agents):
        lines += [f"  - id: r{n}", f"    name: Room {n}", "    description: A bare room."]
    lines.append("characters:")
    for n in range(agents):
        lines += [f"  - name: Agent{n}", "    type: agent", f"    location: r{n}",
                  "    profile: A thinker.", f"    immediate_window: {IMMEDIATE}",
                  f"    recent_window: {RECENT}"]  # fmt: skip
    return "\n".join(lines) + "\n"


class InstantModel:
    """Answers at once: a new thought for every turn, one fixed summary otherwise."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {"actor": 0, "summarizer": 0}

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        request.prompt()
        self.calls[request.role] = self.calls.get(request.role, 0) + 1
        if request.role == "actor":
            text = f"think Thought number {self.calls['actor']}."
        else:
            text = "I sat alone and thought about many things."
        return Generation(text=text, prompt_tokens=10, completion_tokens=5)

    async def aclose(self) -> None:
        return None


async def _live_run(tmp_path: Path, agents: int, slots: int, turns: int) -> tuple[int, Dispatcher]:
    """Run until ``turns`` turns are taken; the largest M - b any agent reached, and the
    dispatcher (for its fairness figures)."""
    world = tmp_path / "fair.yaml"
    world.write_text(_world(agents), encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world)
    model = InstantModel()
    dispatcher = Dispatcher([Endpoint("instant", model, slots=slots)], bypass_limit=BYPASS_LIMIT)
    sim.compactor.first_delay = sim.compactor.max_delay = 0.001
    ids = list(sim.minds)
    sim.start_compaction(dispatcher, dict.fromkeys(ids, "tiny"))
    thinkers = make_thinkers(sim, dict.fromkeys(ids, "tiny"))
    # speed 1e6: the 6 s think interval becomes 6 us, so every agent acts back to back
    scheduler = Scheduler(sim, dispatcher, thinkers, seed=1, speed=1e6)
    peak = 0

    def watch(happening: Happening) -> None:
        nonlocal peak
        if isinstance(happening, Turn):
            peak = max(peak, *(m.count - m.boundary for m in sim.minds.values()))
            if sum(scheduler.turns_taken.values()) >= turns:
                scheduler.stop()

    scheduler.listen(watch)
    try:
        await scheduler.run()
        await scheduler.finish(5)
        await sim.compactor.drain(5)
        await dispatcher.aclose()
        assert model.calls["summarizer"] > 0
        assert all(m.boundary > 0 for m in sim.minds.values())
    finally:
        sim.close()
    return peak, dispatcher


@pytest.mark.parametrize(("agents", "slots"), [(5, 1), (3, 4)], ids=["5-on-1", "3-on-4"])
async def test_summaries_keep_up_with_agents_acting_back_to_back(
    tmp_path: Path, agents: int, slots: int
) -> None:
    peak, dispatcher = await _live_run(tmp_path, agents, slots, turns=40 * agents)
    assert peak <= IMMEDIATE + 2 * RECENT, "more than one due chunk waited"
    assert dispatcher.fairness.granted[Priority.SUMMARY] > 0
    assert dispatcher.fairness.most_bypassed[Priority.SUMMARY] <= BYPASS_LIMIT


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
        await dispatcher.aclose()
    finally:
        sim.close()

    llm_md.write_text(default.replace("bypass_limit: 4", "bypass_limit: 0"), encoding="utf-8")
    with pytest.raises(VaultError, match=r"llm\.md"):
        Simulation.open(tmp_path / "vault", world)
    assert "bypass_limit: 0" in llm_md.read_text(encoding="utf-8")  # never overwritten
