"""``mudsim fork VAULT|RUN-DIR --at TURN --vault NEW``: the counterfactual run.

A fork follows a run's record (``engine.lab.replay``) through its ``--at``-th committed
turn, exactly, then goes live from there: the draws are the clock's again, new LLM
calls go to the live LLM (``--llm``, ``--model``), ``--set section.key=value`` changes
settings (memory windows, knowledge passes, dreams, the handbook's method, training
capture), and the run goes on like ``run``: headless with ``--turns N``, or in the
terminal UI. Its ``run.json`` names its parent and branch point (and the change made
there: ``engine.lab.branch``), and, from the branch on, the settings in force and the
endpoints its live calls went to; its own record holds the parent's events up to there,
then a ``branch`` event, and replays like any run's. The calls served from the tape
are marked ``replayed`` (``mudsim cost`` leaves them out); the live ones name their
endpoint and model and are priced at the endpoint's price.
"""

from __future__ import annotations

import asyncio
import copy
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from engine import wallclock
from engine.config import Settings
from engine.errors import MudsimError, UsageError
from engine.lab.branch import (
    Branch,
    apply_settings,
    go_live,
    kept_notice,
    kept_windows,
    settings_meta,
    settings_with,
)
from engine.lab.replay import Replay, open_replay
from engine.llm.connect import (
    build_dispatcher,
    check_endpoints,
    choose_llm,
    named_model,
    settle_default,
)
from engine.llm.dispatcher import Dispatcher, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.llm.metrics import LLMMetrics
from engine.llm.model_identity import FAKE_MODEL, model_digests
from engine.memory.secrets import redact
from engine.sim.run import Narrator, cost_line, summary
from engine.sim.run_ending import RunEnding, end_reason, graceful_interrupts, wind_down
from engine.sim.scheduler import Scheduler
from engine.sim.sequencer import quiet
from engine.sim.simulation import Simulation
from engine.vault.run_store import RunFolder

__all__ = ["ForkOptions", "apply_settings", "fork_run", "settings_with", "turn_event"]


def turn_event(events: list[Mapping[str, Any]], at: int) -> int:
    """The number of the event that committed the ``at``-th turn of the run."""
    seen = 0
    for event in events:
        if event.get("kind") == "turn":
            seen += 1
            if seen == at:
                return int(event["n"])
    raise UsageError(f"the run has {seen} committed turns: --at must be between 1 and {seen}")


async def follow_to_branch(replay: Replay, at: int,
                           on_branch: Callable[[int], None] | None = None) -> None:  # fmt: skip
    """Follow the record through its ``at``-th committed turn, then go live: the
    ``branch`` event, then ``on_branch`` (told its number), with nothing else run between
    them (a replay of the fork makes the same change at the same place)."""
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
        number = recorder.event("branch", branch_at=at)
        if on_branch is not None:
            on_branch(number)


@dataclass(frozen=True)
class ForkOptions:
    at: int
    turns: int | None = None
    llm: str | None = None
    model: str | None = None
    sets: tuple[str, ...] = ()
    headless: bool = True
    override_characters: bool = False
    """A ``--set`` of a window applies to characters whose world file sets their own."""

    @property
    def branch(self) -> Branch:
        return Branch(self.at, self.sets, self.model, self.override_characters)


ShowLive = Callable[[Simulation, Scheduler, Dispatcher], Awaitable[None]]
"""How a fork without ``--headless`` shows its live part: the terminal UI, which the
CLI's verb hands in (``engine.tui.fork_view``), so this driver never imports the UI."""


async def fork_run(run_dir: Path, vault: Path, options: ForkOptions,
                   environ: Mapping[str, str], out: TextIO | None = None,
                   show: ShowLive | None = None) -> Scheduler:  # fmt: skip
    """Replay ``run_dir`` into ``vault`` through turn ``options.at``, then run live:
    headless (the narrative to ``out``), or shown by ``show`` (the terminal UI)."""
    if not options.headless and show is None:
        raise UsageError("a fork without --headless needs the terminal UI to show it")
    out = out or sys.stdout
    parent = RunFolder(run_dir)
    branch = options.branch
    extra = {"parent": parent.id, "parent_folder": str(run_dir), "turns": options.turns,
             **branch.meta()}  # fmt: skip
    existed = await asyncio.to_thread(vault.exists)
    replay = open_replay(run_dir, vault, "fork", extra, whole=False)
    sim, live = replay.sim, None
    scheduler = replay.scheduler
    reason = "error"
    noted: dict[str, Any] = {}
    adopted: list[Dispatcher] = []  # the live LLM, once the fork's dispatcher sends to it
    try:
        if scheduler is None:
            raise UsageError(f"{run_dir} ran no agents: there is no turn to fork at")
        turn_event(list(replay.sequencer.events), options.at)  # bad input before any work
        settings = settings_with(sim.settings, options.sets)
        kept = kept_windows(sim, options.sets)
        if kept and not options.override_characters:
            print(f"mudsim: {kept_notice(kept, settings)}", file=sys.stderr, flush=True)
        try:  # the live LLM answers before any work
            live = await live_llm(settings, options, environ)
        except BaseException:
            await replay.close()
            sim.close()
            if not existed:  # nothing was forked: no half-made vault left behind
                shutil.rmtree(vault, ignore_errors=True)
            raise
        ending = RunEnding(sim, scheduler)
        live_from: LLMMetrics | None = None
        live_started = 0.0

        def on_branch(number: int) -> None:  # the change, before anything else runs
            assert live is not None
            replay.tape.live, replay.tape.live_model = live.endpoints[0], branch.model
            sim.recorded_result = None  # from here on commands run as in any run
            replay.dispatcher.adopt(live)
            adopted.append(live)
            go_live(sim, scheduler, branch, settings)
            after = _models_after(sim, scheduler, live, kept, options.override_characters)
            noted.update(_noted(sim, settings, live, number, after))

        try:
            await follow_to_branch(replay, options.at, on_branch)
            started = [t for t in replay.tasks if t.get_name().startswith("turn of")]
            if started:  # turns begun before the branch end first, as they would have
                await asyncio.wait(started)
            scheduler.turns_taken = dict.fromkeys(scheduler.thinkers, 0)
            live_from = copy.copy(replay.dispatcher.metrics)  # the summary counts from here
            live_started = time.perf_counter()
            print(f"mudsim: forked {parent.id} after turn {options.at}; live from here",
                  file=sys.stderr, flush=True)  # fmt: skip
            if options.headless:
                scheduler.listen(Narrator(sim, out))
                with graceful_interrupts(ending.press, ending.press, say=None):
                    await scheduler.run(options.turns)
            else:
                assert show is not None
                await show(sim, scheduler, replay.dispatcher)
            reason = end_reason(scheduler, options.turns)
            ending.patient = options.headless and reason == "turns done"
        finally:
            with graceful_interrupts(ending.press, ending.press, say=None):
                await wind_down(sim, scheduler, replay.dispatcher, ending)
            await replay.close()
            await sim.checkpoint()
            sim.end_record(reason, **noted)
        if options.headless:
            live_metrics = replay.dispatcher.metrics.since(live_from) if live_from else None
            wall = time.perf_counter() - live_started if live_started else 0.0
            print(summary(scheduler, replay.dispatcher, wall, live_metrics), file=out, flush=True)
            print(cost_line(sim), file=out, flush=True)
        return scheduler
    finally:
        if live is not None and not adopted:  # else closed with the fork's dispatcher
            await live.aclose()
        sim.close()


def _models_after(sim: Simulation, scheduler: Scheduler, live: Dispatcher,
                  kept: Mapping[str, Any], override: bool) -> dict[str, Any]:  # fmt: skip
    """What ``run.json`` says of the models after the branch point, per character (each
    kind of call: turns, summaries, knowledge passes; ``fake`` for a script) and their
    digests, and which characters kept their own windows (``--set`` without
    ``--override-characters``: setting -> their names)."""
    scripted = all(isinstance(e.backend, ScriptedBackend) for e in live.endpoints)

    def named(model: str) -> str:
        return FAKE_MODEL if scripted else model

    models = {key: named(t.model) for key, t in scheduler.thinkers.items()}
    summarizers = {key: named(m) for key, m in sim.compactor.models.items()}
    consolidators = {key: named(m) for key, m in sim.knowledge.models.items()}
    used = {*models.values(), *summarizers.values(), *consolidators.values()}
    return {"models": models, "summarizers": summarizers, "consolidators": consolidators,
            "model_digests": model_digests(live.endpoints, used),
            "kept_own_settings": {} if override else {key: sorted(names) for key, names
                                                      in sorted(kept.items())}}  # fmt: skip


def _noted(
    sim: Simulation,
    settings: Settings,
    live: Dispatcher,
    branch_event: int,
    models: Mapping[str, Any],
) -> dict[str, Any]:
    """What the fork's ``run.json`` says from its branch point on (written now, so a
    killed fork says it too): the settings in force, the ``branch`` event's number, the
    endpoints its live calls go to. Its calls record is then its own: calls no longer
    come from the tape, and each is priced at its endpoint's price."""
    recorder = sim.recorder
    noted = {"settings": settings_meta(settings), "branch_event": branch_event,
             "endpoints": [redact(e.name) for e in live.endpoints], **models}  # fmt: skip
    if recorder is not None:
        recorder.replaying = False
        try:
            recorder.run.write_meta({**recorder.run.meta(), **noted})
        except MudsimError as exc:  # the fork goes on; its end writes run.json again
            sim.warn(f"cannot note the branch in {recorder.run.folder}: {exc}")
    return noted


async def live_llm(settings: Settings, options: ForkOptions,
                   environ: Mapping[str, str]) -> Dispatcher:  # fmt: skip
    """The LLM a fork goes on with (``--llm``, else as ``run`` chooses from the fork's
    settings), checked."""

    def notice(line: str) -> None:
        print(f"mudsim: {line}", file=sys.stderr, flush=True)

    named = named_model(options.model, environ, settings.llm)  # never swapped for another
    choice = await settle_default(choose_llm(options.llm, environ, settings.llm), notice,
                                  named=named)  # fmt: skip
    dispatcher = build_dispatcher(choice, retry=RetryPolicy(deadline=settings.llm.timeout),
                                  bypass_limit=settings.llm.bypass_limit)  # fmt: skip
    if options.model is not None:
        try:
            num_ctx = int(settings.llm.options_for("actor")["num_ctx"])
            await check_endpoints(dispatcher, [options.model], num_ctx)
        except BaseException:
            await dispatcher.aclose()
            raise
    return dispatcher
