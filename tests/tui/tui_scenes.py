"""Scenes for the TUI tests: a model that answers only when the test lets it, and an
app around a small world whose turns and summaries can be held in flight."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from engine.llm.request import Generation, LLMRequest, Role
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp

HALL_WORLD = """\
name: Hall
rooms:
  - id: hall
    name: The Hall
    description: A long hall with a stone floor.
characters:
  - name: Ada
    type: agent
    location: hall
    profile: A careful gardener.
    description: A woman with soil on her boots.
  - name: Bo
    type: agent
    location: hall
    profile: A quiet smith.
    description: Broad shoulders, a leather apron.
    immediate_window: 1
    recent_window: 2
  - name: Pat
    type: player
    location: hall
    description: A traveller in a grey cloak.
"""
"""Bo's windows are 1 and 2: his fourth memory makes a compaction due (and his fifth
would be one too many for the memory gate: turns would wait)."""


class GatedModel:
    """A language model (the backend, not our code) that answers a call only when the
    test releases it; turns ("actor") and summaries ("summarizer") queue apart."""

    def __init__(self) -> None:
        self.waiting: dict[Role, list[asyncio.Future[str]]] = {
            "actor": [],
            "summarizer": [],
            "consolidator": [],
        }

    async def generate(self, request: LLMRequest) -> Generation:
        request.prompt()  # built at dispatch, as a real backend's dispatcher does
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiting[request.role].append(answer)
        return Generation(text=await answer)

    def held(self, role: Role) -> int:
        return sum(1 for answer in self.waiting[role] if not answer.done())

    def release(self, role: Role, reply: str) -> None:
        """Answer the oldest call of ``role`` still waiting."""
        next(answer for answer in self.waiting[role] if not answer.done()).set_result(reply)


def hall_app(
    tmp_path: Path, model: GatedModel, *, grace: float = 30.0, knowledge: bool = False
) -> MudsimApp:
    """The hall world on a fresh vault, paused, every call going to ``model``; with
    ``knowledge``, the stop starts knowledge passes too."""
    world = tmp_path / "hall.yaml"
    world.write_text(HALL_WORLD, encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world)
    models = {c.id: "gated" for c in sim.world.characters.values() if c.type == "agent"}
    sim.start_compaction(model, {c.id: "gated" for c in sim.world.characters.values()})
    if not knowledge:
        sim.knowledge.llm = None  # no knowledge pass at the stop (test_stopping has one)
    scheduler = Scheduler(sim, model, make_thinkers(sim, models), seed=1)
    return MudsimApp(
        sim,
        scheduler,
        None,
        {"Ada": "gated", "Bo": "gated"},
        player=sim.character("Pat"),
        start_paused=True,
        grace=grace,
    )


async def until(check: Callable[[], bool], limit: float = 10.0) -> None:
    """Wait (polling the running loop) until ``check()`` holds, at most ``limit`` s."""
    for _ in range(int(limit / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition never held")


async def hold_work(app: MudsimApp, model: GatedModel, pilot: Pilot[None]) -> None:
    """Two turns and one summary in flight, held by ``model``: Pat speaks four times
    (Bo's fourth memory makes his compaction due), then n starts a round."""
    pat = app.sim.character("Pat")
    for word in ("one", "two", "three", "four"):
        app.sim.execute(pat, f"say Hello {word}.")
    await until(lambda: model.held("summarizer") == 1)
    await pilot.press("n")
    await until(lambda: model.held("actor") == 2)
    await pilot.pause()


def status_text(app: MudsimApp) -> str:
    """The status line under the panels, as shown ("" while it is hidden)."""
    status = app.query_one("#status", Static)
    return " ".join(str(status.render()).split()) if status.display else ""
