"""Starting and ending the terminal UI around one simulation.

The world and the LLM are checked before the app takes the terminal, so a bad world
file or an unreachable LLM is one line and an exit code, as for ``--headless``. When
the app closes, compactions in progress get their bounded wait and the vault is saved.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager

from engine.sim.run import RunOptions, connect, make_thinkers
from engine.sim.run_ending import SHUTDOWN_GRACE
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import LLMLink, Simulation
from engine.tui.app import MudsimApp

Beside = Callable[[Simulation], AbstractAsyncContextManager[object]]


async def build_app(sim: Simulation, options: RunOptions, environ: Mapping[str, str]) -> MudsimApp:
    player = (
        next(iter(sim.world.players()), None)
        if options.as_name is None
        else sim.character(options.as_name)
    )
    notices: list[str] = []

    def notice(line: str) -> None:  # on stderr as before, and in the app (its screen hides stderr)
        print(f"mudsim: {line}", file=sys.stderr, flush=True)
        notices.append(line)

    dispatcher, models = await connect(sim, options, environ, notice=notice)
    names = {sim.world.characters[a].name: m for a, m in models.items()}
    thinkers = make_thinkers(sim, models, options.seed)
    sim.llm = LLMLink(dispatcher, names, thinkers)
    scheduler = Scheduler(sim, sim.recorded(dispatcher), thinkers, seed=options.seed)
    return MudsimApp(sim, scheduler, dispatcher, names, player=player, turns=options.turns,
                     notices=notices)  # fmt: skip


async def close_app(app: MudsimApp) -> None:
    """After the app: turns and compactions in progress get their bounded wait (unless the
    app's stop gave them theirs), then save."""
    if not app.wound_down:  # the app ended otherwise than by q (an error, a test's exit)
        await app.scheduler.finish(SHUTDOWN_GRACE)
        await app.sim.wind_down_memory(SHUTDOWN_GRACE, passes=False)
    await app.sim.supervisor.aclose()
    if app.dispatcher is not None:  # a second q waits for no call
        await app.dispatcher.aclose(grace=0.0 if app.stop_presses > 1 else 1.0)
    await app.sim.checkpoint()
    app.sim.end_record("stopped")


async def run_tui(
    options: RunOptions, environ: Mapping[str, str], *, beside: Beside | None = None
) -> None:
    """``beside``: what runs while the app does (``run --telnet``: the world served),
    ended before the app's work is wound down and saved."""
    sim = Simulation.open(options.vault, options.world)
    try:
        app = await build_app(sim, options, environ)
        try:
            async with beside(sim) if beside is not None else contextlib.nullcontext():
                await app.run_async()
        finally:
            await close_app(app)
    finally:
        sim.close()
