"""``mudsim fork RUN-DIR --at TURN --vault NEW``: the counterfactual run.

A fork follows a run's record (``engine.lab.replay``) through its ``--at``-th committed
turn, exactly, then goes live from there: the draws are the clock's again, new LLM
calls go to the live LLM (``--llm``, ``--model``), ``--set section.key=value`` changes
settings (memory windows, knowledge passes, dreams, the handbook's method, training
capture), and the run goes on like ``run``: headless with ``--turns N``, or in the
terminal UI. Its ``run.json`` names its parent and branch point, and its own record
holds the parent's events up to there, then a ``branch`` event.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml
from pydantic import ValidationError

from engine import wallclock
from engine.config import Settings
from engine.errors import UsageError
from engine.lab.replay import Replay, open_replay
from engine.llm.connect import build_dispatcher, check_endpoints, choose_llm, settle_default
from engine.llm.dispatcher import Dispatcher, RetryPolicy
from engine.sim.run import (
    Narrator,
    RunEnding,
    end_reason,
    graceful_interrupts,
    summary,
    wind_down,
)
from engine.sim.scheduler import Scheduler
from engine.sim.sequencer import quiet
from engine.sim.simulation import Simulation
from engine.vault.run_store import RunFolder

if TYPE_CHECKING:
    from engine.tui.app import MudsimApp


def turn_event(events: list[Mapping[str, Any]], at: int) -> int:
    """The number of the event that committed the ``at``-th turn of the run."""
    seen = 0
    for event in events:
        if event.get("kind") == "turn":
            seen += 1
            if seen == at:
                return int(event["n"])
    raise UsageError(f"the run has {seen} committed turns: --at must be between 1 and {seen}")


async def follow_to_branch(replay: Replay, at: int) -> None:
    """Follow the record through its ``at``-th committed turn, then go live."""
    events = list(replay.sequencer.events)
    branch = turn_event(events, at)
    with wallclock.scripted(replay.script):
        await replay.follow(until=branch)
        await quiet()
        replay.check()
    replay.sequencer.go_live()
    recorder = replay.sim.recorder
    if recorder is not None:
        recorder.on_event = None
        recorder.event("branch", at=at)


@dataclass(frozen=True)
class ForkOptions:
    at: int
    turns: int | None = None
    llm: str | None = None
    model: str | None = None
    sets: tuple[str, ...] = ()
    headless: bool = True


def settings_with(settings: Settings, sets: tuple[str, ...]) -> Settings:
    """``settings`` with each ``section.key=value`` of ``sets``, checked as the config
    file's would be (a bad one is a ``UsageError``)."""
    data = settings.model_dump(mode="json")
    for item in sets:
        path, sep, raw = item.partition("=")
        parts = path.strip().split(".")
        if not sep or len(parts) != 2 or parts[0] not in data or parts[1] not in data[parts[0]]:
            raise UsageError(f"--set {item!r}: expected section.key=value, e.g. "
                             "memory_compaction.recent_window=32")  # fmt: skip
        data[parts[0]][parts[1]] = yaml.safe_load(raw) if raw.strip() else raw
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UsageError(f"--set {where}: {first['msg']}") from exc


def apply_settings(sim: Simulation, settings: Settings) -> None:
    """A fork's settings from its branch point on: the memory windows, how often
    knowledge passes run, dreams, the handbook's method, training capture, and whatever
    is read as it is used (the retrieval budget, the profiles' options)."""
    sim.settings = settings
    sim.actor_options = settings.llm.options_for("actor")
    memory = settings.memory_compaction
    for mind in sim.minds.values():
        mind.windows = sim.windows_for(mind.character)
    sim.knowledge.every = memory.consolidate_every
    sim.knowledge.enabled = memory.knowledge
    sim.dreams.interval = memory.dream_interval
    if sim.knowledge.handbook is not None:
        sim.knowledge.handbook.method = memory.handbook
    if sim.recorder is not None:
        sim.recorder.training = settings.record.training


RunApp = Callable[["MudsimApp"], Awaitable[None]]
"""How a fork without ``--headless`` runs its terminal UI (a test drives it)."""


async def fork_run(run_dir: Path, vault: Path, options: ForkOptions,
                   environ: Mapping[str, str], out: TextIO | None = None,
                   run_app: RunApp | None = None) -> Scheduler:  # fmt: skip
    """Replay ``run_dir`` into ``vault`` through turn ``options.at``, then run live:
    headless (the narrative to ``out``), or in the terminal UI."""
    out = out or sys.stdout
    parent = RunFolder(run_dir)
    extra = {"parent": parent.id, "parent_folder": str(run_dir), "branch_at": options.at,
             "turns": options.turns, "sets": list(options.sets)}  # fmt: skip
    replay = open_replay(run_dir, vault, "fork", extra, whole=False)
    sim, live = replay.sim, None
    scheduler = replay.scheduler
    reason = "error"
    try:
        if scheduler is None:
            raise UsageError(f"{run_dir} ran no agents: there is no turn to fork at")
        turn_event(list(replay.sequencer.events), options.at)  # bad input before any work
        settings = settings_with(sim.settings, options.sets)
        ending = RunEnding(sim, scheduler)
        try:
            await follow_to_branch(replay, options.at)
            live = await live_llm(sim, options, environ)
            replay.tape.live = live
            apply_settings(sim, settings)
            if options.model is not None:
                for thinker in scheduler.thinkers.values():
                    thinker.model = options.model
                sim.compactor.models = dict.fromkeys(sim.compactor.models, options.model)
                sim.knowledge.models = dict.fromkeys(sim.knowledge.models, options.model)
            started = [t for t in replay.tasks if t.get_name().startswith("turn of")]
            if started:  # turns begun before the branch end first, as they would have
                await asyncio.wait(started)
            scheduler.turns_taken = dict.fromkeys(scheduler.thinkers, 0)
            print(f"mudsim: forked {parent.id} after turn {options.at}; live from here",
                  file=sys.stderr, flush=True)  # fmt: skip
            if options.headless:
                scheduler.listen(Narrator(sim, out))
                with graceful_interrupts(ending.press, ending.press, say=None):
                    await scheduler.run(options.turns)
            else:
                await _in_the_tui(sim, scheduler, replay.dispatcher, options, run_app)
            reason = end_reason(scheduler, options.turns)
            ending.patient = options.headless and reason == "turns done"
        finally:
            with graceful_interrupts(ending.press, ending.press, say=None):
                await wind_down(sim, scheduler, replay.dispatcher, ending)
            await replay.close()
            await sim.checkpoint()
            sim.end_record(reason)
        if options.headless:
            print(summary(scheduler, replay.dispatcher, 0.0), file=out, flush=True)
        return scheduler
    finally:
        if live is not None:
            await live.aclose()
        sim.close()


async def _in_the_tui(sim: Simulation, scheduler: Scheduler, dispatcher: Dispatcher,
                      options: ForkOptions, run_app: RunApp | None) -> None:  # fmt: skip
    from engine.tui.app import MudsimApp

    names = {t.name: options.model or t.model for t in scheduler.thinkers.values()}
    player = next(iter(sim.world.players()), None)
    app = MudsimApp(sim, scheduler, dispatcher, names, player=player, turns=options.turns)
    await (run_app(app) if run_app is not None else app.run_async())


async def live_llm(sim: Simulation, options: ForkOptions, environ: Mapping[str, str]) -> Dispatcher:
    """The LLM a fork goes on with (``--llm``, else as ``run`` chooses), checked."""

    def notice(line: str) -> None:
        print(f"mudsim: {line}", file=sys.stderr, flush=True)

    choice = await settle_default(choose_llm(options.llm, environ, sim.settings.llm), notice)
    dispatcher = build_dispatcher(choice, retry=RetryPolicy(deadline=sim.settings.llm.timeout),
                                  bypass_limit=sim.settings.llm.bypass_limit)  # fmt: skip
    if options.model is not None:
        try:
            await check_endpoints(dispatcher, [options.model], int(sim.actor_options["num_ctx"]))
        except BaseException:
            await dispatcher.aclose()
            raise
    return dispatcher
