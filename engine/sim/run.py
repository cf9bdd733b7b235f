"""``mudsim run --headless``: the world runs with thinking agents, and the narrative
goes to stdout, one event a line with its room, then a run summary.

    [The Garden] Eliza says, "Good morning."
    [The Library] (Moss tried "fly": There is no command 'fly'.)
    Run summary: 2 agents, 10 turns (0 skipped), 10 LLM calls (0 failed, 0 retries), ...

Ctrl-C (or the end of ``--turns``) stops dispatching, lets turns in progress finish
(bounded wait), saves and exits 0; a second Ctrl-C stops at once, still saving. At the
end of ``--turns`` the run also waits for the memory work its end starts (``RunEnding``).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine.agents.reply import RECENT_COMMANDS
from engine.agents.thinker import Generator, Thinker, Turn
from engine.config import embedder_model
from engine.llm.connect import (
    build_dispatcher,
    check_endpoints,
    choose_llm,
    choose_model,
    named_model,
    settle_default,
)
from engine.llm.dispatcher import Dispatcher, RetryPolicy
from engine.llm.embedding import choose_embedder
from engine.llm.local import MODEL_NAME as LOCAL_MODEL
from engine.llm.metrics import seconds
from engine.sim.do import summarizer_models
from engine.sim.prompting import command_constraint, recent_commands, turn_prompt
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import LLMLink, Simulation
from engine.vault.journal import EVERY_100_MS
from engine.world.events import Event, EventKind

SHUTDOWN_GRACE = 30.0
"""Seconds turns in progress may take to finish once a run ends."""


@dataclass(frozen=True)
class RunOptions:
    world: Path
    vault: Path
    llm: str | None = None
    model: str | None = None
    turns: int | None = None
    seed: int | None = None
    as_name: str | None = None
    """The player character the TUI's input line acts as (default: the first player)."""


def agent_models(sim: Simulation, flag: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """Agent id -> the model its turns use."""
    config = sim.settings.llm
    return {
        c.id: choose_model(flag, environ, config, character_model=c.model)
        for c in sim.world.characters.values()
        if c.type == "agent"
    }


def make_thinkers(
    sim: Simulation, models: Mapping[str, str], seed: int | None = None
) -> dict[str, Thinker]:
    options = sim.actor_options
    profile = sim.settings.llm.profiles.get("actor")
    constrain = profile.constrain if profile else None
    thinkers = {}
    for agent_id, model in models.items():
        character = sim.world.characters[agent_id]
        # the agent's last commands before this run, so a restart cannot sneak in a repeat
        recent = recent_commands(sim, character, RECENT_COMMANDS)
        thinkers[agent_id] = Thinker(
            name=character.name,
            model=model,
            options=options,
            build_prompt=lambda c=character: turn_prompt(sim, c),  # type: ignore[misc]
            announce=lambda c=character: sim.announce_thinking(c),  # type: ignore[misc]
            execute=lambda line, c=character: sim.execute(c, line),  # type: ignore[misc]
            seed=seed,
            constraint=lambda c=character: command_constraint(sim, c),  # type: ignore[misc]
            constrain=constrain,
            last_key=recent[-1] if recent else None,
            recent_keys=recent,
            observe=sim.token_rate.observe,
            prepare=lambda c=character: sim.recollection.prepare(c),  # type: ignore[misc]
        )
    return thinkers


async def connect(
    sim: Simulation, options: RunOptions, environ: Mapping[str, str], *, kind: str = "run"
) -> tuple[Dispatcher, dict[str, str]]:
    """Pick the LLM and models, and check the server has them (exit 3 if not); the run's
    record (``kind``: run, play) begins here."""

    def notice(line: str) -> None:
        print(f"mudsim: {line}", file=sys.stderr, flush=True)

    named = named_model(options.model, environ, sim.settings.llm,
                        [c.model for c in sim.world.characters.values() if c.type == "agent"])  # fmt: skip
    choice = await settle_default(choose_llm(options.llm, environ, sim.settings.llm), notice,
                                  named=named)  # fmt: skip
    models = agent_models(sim, options.model, environ)
    summarizers = summarizer_models(sim, options.model, environ)
    if choice.local:  # it has one model, whatever the world or llm.md name
        models = dict.fromkeys(models, LOCAL_MODEL)
        summarizers = dict.fromkeys(summarizers, LOCAL_MODEL)
    config = sim.settings.llm
    retry = RetryPolicy(deadline=config.timeout)
    dispatcher = build_dispatcher(choice, retry=retry, bypass_limit=config.bypass_limit)
    try:
        wanted = [*models.values(), *summarizers.values()]
        await check_endpoints(dispatcher, wanted, int(sim.actor_options["num_ctx"]))
    except BaseException:
        await dispatcher.aclose()
        raise
    consolidators = summarizer_models(sim, options.model, environ, role="consolidator")
    if choice.local:
        consolidators = dict.fromkeys(consolidators, LOCAL_MODEL)
    embedder = choose_embedder(
        [e.backend for e in dispatcher.endpoints], embedder_model(sim.settings)
    )
    sim.begin_record(kind, options.world, {
        "models": models, "summarizers": summarizers, "consolidators": consolidators,
        "local": choice.local, "seed": options.seed, "turns": options.turns,
        "endpoints": [e.name for e in dispatcher.endpoints], "embedder": embedder is not None,
        "memory_gate": True,
    })  # fmt: skip
    configure_memory(sim, dispatcher, summarizers, consolidators, local=choice.local)
    sim.recollection.embedder = embedder
    return dispatcher, models


def configure_memory(sim: Simulation, llm: Generator, summarizers: dict[str, str],
                     consolidators: dict[str, str], *, local: bool) -> None:  # fmt: skip
    """Compactions, knowledge passes, handbooks and dreams think with ``llm`` from now on
    (through the run's record, when it is recorded)."""
    sim.start_compaction(sim.recorded(llm), summarizers, consolidators)
    if local:  # its prefix cache keeps an agent's prompt evaluated after a compaction
        sim.compactor.warm = sim.warm_prompt
    sim.embedded = local  # its handbook is written by rules, its retrieval smaller
    if sim.knowledge.handbook is not None:
        sim.knowledge.handbook.embedded = local


class Narrator:
    """Prints what happens, one line each, with the room it happened in."""

    def __init__(self, sim: Simulation, out: TextIO) -> None:
        self.sim, self.out = sim, out

    def __call__(self, happening: Happening) -> None:
        if isinstance(happening, Event):
            if happening.kind is not EventKind.AMBIENT:
                self._line(happening.room_id, happening.text)
            return
        line = _turn_note(happening)
        if line is not None:
            agent = self.sim.world.find_characters(happening.agent)
            self._line(agent[0].location if agent else "", line)

    def _line(self, room_id: str, text: str) -> None:
        room = self.sim.world.rooms.get(room_id)
        label = room.name if room else room_id
        flat = " / ".join(part for part in text.splitlines() if part.strip())
        print(f"[{label}] {flat}", file=self.out, flush=True)


def _turn_note(turn: Turn) -> str | None:
    """A line for a turn the room did not see: a skip, an empty reply, a failed command."""
    if turn.error is not None:
        return f"({turn.agent}'s turn was skipped: {turn.error})"
    if turn.command is None:
        return f"({turn.agent} did nothing: the reply was empty)"
    if turn.result is not None and not turn.result.ok:
        return f'({turn.agent} tried "{turn.command}": {turn.result.text})'
    return None


def summary(scheduler: Scheduler, dispatcher: Dispatcher, wall: float) -> str:
    turns = sum(scheduler.turns_taken.values())
    skipped = sum(t.skipped for t in scheduler.thinkers.values())
    m = dispatcher.metrics
    c = scheduler.sim.compactor.tally
    extractive = f", {c.extractive} extractive" if c.extractive else ""
    failed_syncs = EVERY_100_MS.failures - scheduler.sim.fsync_failures_before
    durability = (
        f"journal fsync FAILED {failed_syncs} time{'' if failed_syncs == 1 else 's'} "
        f"(last: {EVERY_100_MS.error}), "
        if failed_syncs
        else ""
    )
    k = scheduler.sim.knowledge.tally
    fell_back = f", {k.fallbacks} added every candidate" if k.fallbacks else ""
    knowledge = (
        f"{k.passes} knowledge pass{'' if k.passes == 1 else 'es'} ({k.changed} changed a "
        f"bank, {k.failed} failed{fell_back}), "
        if k.passes or k.failed
        else ""
    )
    h = scheduler.sim.knowledge.handbook
    handbooks = ""
    if h is not None and (h.tally.written or h.tally.failed):
        by = f"{h.tally.by_llm} by the model, {h.tally.written - h.tally.by_llm} by the rules"
        failed = f", {h.tally.failed} failed" if h.tally.failed else ""
        handbooks = (
            f"{h.tally.written} handbook{'' if h.tally.written == 1 else 's'} ({by}{failed}), "
        )
    return (
        f"Run summary: {len(scheduler.thinkers)} agents, {turns} turns ({skipped} skipped), "
        f"{m.calls} LLM calls ({m.failures} failed, {m.retries} retries), "
        f"{c.committed} compaction{'' if c.committed == 1 else 's'} "
        f"({c.failed} failed attempt{'' if c.failed == 1 else 's'}{extractive}), "
        f"{knowledge}{handbooks}{durability}{m.prompt_tokens} prompt + {m.completion_tokens} completion tokens, "
        f"mean latency {seconds(m.mean_latency)}, {wall:.1f} s in all."
    )


def start_agents(
    sim: Simulation, dispatcher: Dispatcher, models: Mapping[str, str], seed: int | None
) -> Scheduler:
    """Each agent's thinker, and the scheduler that runs them (not started yet)."""
    thinkers = make_thinkers(sim, models, seed)
    names = {sim.world.characters[a].name: m for a, m in models.items()}
    sim.llm = LLMLink(dispatcher, names, thinkers)
    return Scheduler(sim, sim.recorded(dispatcher), thinkers, seed=seed)


async def wind_down(sim: Simulation, scheduler: Scheduler | None, dispatcher: Dispatcher,
                    ending: RunEnding | None = None) -> None:  # fmt: skip
    """Turns and compactions in progress get their bounded wait (with an ``ending`` whose
    turns are done, the memory work the run's end starts gets as long as it takes, or
    until a Ctrl-C); every task ends."""
    if scheduler is not None:
        await scheduler.finish(SHUTDOWN_GRACE)
    if ending is not None:
        ending.memory_phase = True
    patient = ending is not None and ending.patient
    await sim.wind_down_memory(None if patient else SHUTDOWN_GRACE,
                               say=ending.waiting if ending is not None else None)  # fmt: skip
    await sim.supervisor.aclose()
    await dispatcher.aclose(grace=1.0)


class RunEnding:
    """How a headless run ends, and what Ctrl-C (or SIGTERM) does meanwhile. While turns
    run, a first press lets those in progress finish (at most ``SHUTDOWN_GRACE`` s) and a
    second cuts them short. A run whose turns are all done (``--turns``: a batch) then
    waits for the memory work its end starts (the last summaries and knowledge passes,
    which a small local model can take minutes over) as long as it takes; a stopped run
    gives it ``SHUTDOWN_GRACE`` s. Once that wait has begun, a press cuts it short: what
    is not committed is left for the next run."""

    def __init__(self, sim: Simulation, scheduler: Scheduler, err: TextIO | None = None) -> None:
        self.sim, self.scheduler, self.err = sim, scheduler, err or sys.stderr
        self.patient = False
        """The turns are done: the memory work gets as long as it takes."""
        self.memory_phase = False
        self.presses = 0

    def press(self) -> None:
        self.presses += 1
        if self.memory_phase or self.presses > 1:
            if self.memory_phase and (work := self.sim.memory_in_progress()):
                self._say(f"leaving {work} for the next run")
            self.scheduler.abort()
            self.sim.cut_memory_short()
        else:
            self._say(STOPPING)
            self.scheduler.stop()

    def waiting(self, work: str) -> None:
        self._say(f"the turns are done; finishing {work} before saving (Ctrl-C leaves what "
                  "is unfinished for the next run)")  # fmt: skip

    def _say(self, line: str) -> None:
        print(f"mudsim: {line}", file=self.err, flush=True)


def end_reason(scheduler: Scheduler, turns: int | None) -> str:
    """Why a run ended, as its record says."""
    if turns is not None and all(n >= turns for n in scheduler.turns_taken.values()):
        return "turns done"
    return "stopped"


async def run_headless(
    options: RunOptions, environ: Mapping[str, str], out: TextIO | None = None
) -> Scheduler:
    out = out or sys.stdout
    sim = Simulation.open(options.vault, options.world)
    try:
        if options.as_name is not None:
            sim.character(options.as_name)  # an unknown --as is exit 2, as in `do`
        dispatcher, models = await connect(sim, options, environ)
        scheduler = start_agents(sim, dispatcher, models, options.seed)
        scheduler.listen(Narrator(sim, out))
        started = time.perf_counter()
        reason = "error"
        ending = RunEnding(sim, scheduler)
        with graceful_interrupts(ending.press, ending.press, say=None):
            try:
                await scheduler.run(options.turns)
                reason = end_reason(scheduler, options.turns)
                ending.patient = reason == "turns done"
            except asyncio.CancelledError:
                reason = "interrupted"
                raise
            finally:
                await wind_down(sim, scheduler, dispatcher, ending)
                await sim.checkpoint()
                sim.end_record(reason)
        print(summary(scheduler, dispatcher, time.perf_counter() - started), file=out, flush=True)
        print(cost_line(sim), file=out, flush=True)
        return scheduler
    finally:
        sim.end_record("error")  # only if it was not closed above
        sim.close()


def cost_line(sim: Simulation) -> str:
    """The headless summary's cost per agent (from the run's record)."""
    costs = sim.last_costs
    if not costs:
        return "Cost: not recorded (record: false)."
    parts = [f"{name} {c.tokens_in}+{c.tokens_out} tokens, {c.llm_s:.1f} s LLM, "
             f"{sum(c.calls.values())} calls" + (f", {c.money:.4f}" if c.money else "")
             for name, c in sorted(costs.items())]  # fmt: skip
    return "Cost per agent: " + "; ".join(parts) + "."


STOPPING = "stopping: letting turns in progress finish (Ctrl-C again to cut short)"


@contextlib.contextmanager
def graceful_interrupts(
    stop: Callable[[], None], abort: Callable[[], None], *, say: str | None = STOPPING
) -> Iterator[None]:
    """The first Ctrl-C (or SIGTERM) calls ``stop`` (saying ``say``), a second ``abort``."""
    loop = asyncio.get_running_loop()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            if say is not None:
                print(f"mudsim: {say}", file=sys.stderr, flush=True)
            stop()
        else:
            abort()

    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Not on Windows' loop, nor off the main thread: Ctrl-C then stays Python's
        # KeyboardInterrupt, which the CLI turns into one line.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
