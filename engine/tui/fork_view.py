"""A fork's live part in the terminal UI (``mudsim fork`` without ``--headless``): the
app over the fork's simulation, handed to ``engine.lab.fork.fork_run`` as its ``show``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from engine.lab.fork import ShowLive
from engine.llm.dispatcher import Dispatcher
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp

RunApp = Callable[[MudsimApp], Awaitable[None]]
"""How the app runs (``App.run_async``; a test drives it instead)."""


def in_the_tui(turns: int | None, model: str | None, run_app: RunApp | None = None) -> ShowLive:
    """Show a fork's live part in the app: each agent under ``model`` (or its own), the
    first player at the keyboard, ``turns`` turns each."""

    async def show(sim: Simulation, scheduler: Scheduler, dispatcher: Dispatcher) -> None:
        names = {t.name: model or t.model for t in scheduler.thinkers.values()}
        player = next(iter(sim.world.players()), None)
        app = MudsimApp(sim, scheduler, dispatcher, names, player=player, turns=turns)
        await (run_app(app) if run_app is not None else app.run_async())

    return show
