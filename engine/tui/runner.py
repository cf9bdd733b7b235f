"""Starting and ending the terminal UI around one simulation.

The world and the LLM are checked before the app takes the terminal, so a bad world
file or an unreachable LLM is one line and an exit code, as for ``--headless``. When
the app closes, compactions in progress get their bounded wait and the vault is saved.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.sim.run import SHUTDOWN_GRACE, RunOptions, connect, make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import LLMLink, Simulation
from engine.tui.app import MudsimApp


async def build_app(sim: Simulation, options: RunOptions, environ: Mapping[str, str]) -> MudsimApp:
    player = (
        next(iter(sim.world.players()), None)
        if options.as_name is None
        else sim.character(options.as_name)
    )
    dispatcher, models = await connect(sim, options, environ)
    names = {sim.world.characters[a].name: m for a, m in models.items()}
    thinkers = make_thinkers(sim, models, options.seed)
    sim.llm = LLMLink(dispatcher, names, thinkers)
    scheduler = Scheduler(sim, sim.recorded(dispatcher), thinkers, seed=options.seed)
    return MudsimApp(sim, scheduler, dispatcher, names, player=player, turns=options.turns)


async def close_app(app: MudsimApp) -> None:
    """After the app: turns and compactions in progress get their bounded wait, then save."""
    await app.scheduler.finish(SHUTDOWN_GRACE)
    await app.sim.wind_down_memory(SHUTDOWN_GRACE)
    await app.sim.supervisor.aclose()
    if app.dispatcher is not None:
        await app.dispatcher.aclose(grace=1.0)
    await app.sim.checkpoint()
    app.sim.end_record("stopped")


async def run_tui(options: RunOptions, environ: Mapping[str, str]) -> None:
    sim = Simulation.open(options.vault, options.world)
    try:
        app = await build_app(sim, options, environ)
        try:
            await app.run_async()
        finally:
            await close_app(app)
    finally:
        sim.close()
