"""``mudsim run --headless``: the world runs with thinking agents, and the narrative
goes to stdout, one event a line with its room, then a run summary.

    [The Garden] Eliza says, "Good morning."
    [The Library] (Moss tried "fly": There is no command 'fly'.)
    Run summary: 2 agents, 10 turns (0 skipped), 10 LLM calls (0 failed, 0 retries), ...

The first line names the world, its agents and the backend and model that think.
Ctrl-C stops dispatching, lets turns and summary calls in progress finish (within
``SHUTDOWN_GRACE`` s, counted down), leaves knowledge passes and dreams for the next run,
saves and exits 0; a second Ctrl-C stops at once, still saving. At the end of
``--turns`` the run instead waits for the memory work its end starts (``RunEnding``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine.agents.reply import RECENT_COMMANDS
from engine.agents.thinker import Generator, Thinker, Turn
from engine.commands.helpers import counted
from engine.config import embedder_model
from engine.errors import UsageError
from engine.llm.backend_label import backend_label
from engine.llm.connect import (
    build_dispatcher,
    check_endpoints,
    choose_llm,
    choose_model,
    embedded_everywhere,
    named_model,
    settle_default,
)
from engine.llm.dispatcher import Dispatcher, RetryPolicy
from engine.llm.embedding import choose_embedder
from engine.llm.metrics import LLMMetrics, seconds
from engine.llm.model_identity import FAKE_MODEL, model_digests
from engine.sim.do import summarizer_models
from engine.sim.prompting import command_constraint, recent_commands, turn_prompt
from engine.sim.run_ending import (
    RunEnding,
    end_reason,
    graceful_interrupts,
    wind_down,
)
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import LLMLink, Simulation
from engine.vault.journal import EVERY_100_MS
from engine.world.events import Event, EventKind


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
    show_thinking: bool = False
    """``--headless``: print the "pauses, deep in thought" lines (always recorded)."""


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
            noise_check=sim.embedded,  # only the embedded model writes noise for speech
            last_key=recent[-1] if recent else None,
            recent_keys=recent,
            observe=sim.token_rate.observe,
            prepare=lambda c=character: sim.recollection.prepare(c),  # type: ignore[misc]
        )
    return thinkers


def _say(line: str) -> None:
    print(f"mudsim: {line}", file=sys.stderr, flush=True)


async def connect(
    sim: Simulation, options: RunOptions, environ: Mapping[str, str], *, kind: str = "run",
    notice: Callable[[str], None] = _say,
) -> tuple[Dispatcher, dict[str, str]]:  # fmt: skip
    """Pick the LLM and models, and check the server has them (exit 3 if not); the run's
    record (``kind``: run, play) begins here. ``notice`` hears what is said on the way
    (the embedded model chosen because no server answered; default: stderr)."""

    named = named_model(options.model, environ, sim.settings.llm,
                        [c.model for c in sim.world.characters.values() if c.type == "agent"])  # fmt: skip
    choice = await settle_default(choose_llm(options.llm, environ, sim.settings.llm), notice,
                                  named=named)  # fmt: skip
    embedded = choice.embedded_model if choice.local else ""
    if choice.local and options.model not in (None, embedded):
        raise UsageError(f"--model {options.model} is not the embedded model ({embedded}), "
                         "the only one --llm local runs: drop --model, or name a server "
                         "with --llm URL")  # fmt: skip
    models = agent_models(sim, options.model, environ)
    summarizers = summarizer_models(sim, options.model, environ)
    if choice.local:  # it has one model, whatever the world or llm.md name
        models = dict.fromkeys(models, embedded)
        summarizers = dict.fromkeys(summarizers, embedded)
    if choice.fake:  # a script, not a model: the record says so
        models, summarizers = (
            dict.fromkeys(models, FAKE_MODEL),
            dict.fromkeys(summarizers, FAKE_MODEL),
        )
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
    if choice.local or choice.fake:
        consolidators = dict.fromkeys(consolidators, embedded or FAKE_MODEL)
    embedder = choose_embedder(
        [e.backend for e in dispatcher.endpoints], embedder_model(sim.settings)
    )
    embedded_rules = embedded_everywhere(dispatcher)  # in-process, or served by serve-llm
    players = sim.settings.memory_compaction.players
    sim.compactor.players = players or ("extractive" if kind == "serve" else "llm")
    sim.begin_record(kind, options.world, {
        "models": models, "summarizers": summarizers, "consolidators": consolidators,
        "model_digests": model_digests(dispatcher.endpoints, [*models.values(), *summarizers.values(),
                                                    *consolidators.values()]),
        "local": choice.local, "embedded": embedded_rules, "seed": options.seed,
        "turns": options.turns,
        "endpoints": [e.name for e in dispatcher.endpoints], "embedder": embedder is not None,
        "memory_gate": True, "memory_bound": True, "players": sim.compactor.players,
    })  # fmt: skip
    configure_memory(sim, dispatcher, summarizers, consolidators, local=embedded_rules)
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
    """Prints what happens, one line each, with the room it happened in; an agent pausing
    to think (an ambient event) only with ``show_thinking``."""

    def __init__(self, sim: Simulation, out: TextIO, *, show_thinking: bool = False) -> None:
        self.sim, self.out, self.show_thinking = sim, out, show_thinking

    def __call__(self, happening: Happening) -> None:
        if isinstance(happening, Event):
            if happening.kind is not EventKind.AMBIENT or self.show_thinking:
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


def first_line(sim: Simulation, dispatcher: Dispatcher, models: Mapping[str, str]) -> str:
    """What a headless run says first: the world, its agents, and which backend and
    model think for them (``embedded SmolLM2-135M``, ``fake (scripted)``, a URL and a
    model)."""
    backend = backend_label([e.name for e in dispatcher.endpoints], models.values())
    agents = counted(len(models), "agent", "agents")
    return f"{sim.world.name}: {agents}, thinking with {backend}."


def _turn_note(turn: Turn) -> str | None:
    """A line for a turn the room did not see: a skip, an empty reply, a failed command."""
    if turn.error is not None:
        return f"({turn.agent}'s turn was skipped: {turn.error})"
    if turn.command is None:
        return f"({turn.agent} did nothing: the reply was empty)"
    if turn.result is not None and not turn.result.ok:
        return f'({turn.agent} tried "{turn.command}": {turn.result.text})'
    return None


def summary(scheduler: Scheduler, dispatcher: Dispatcher, wall: float,
            metrics: LLMMetrics | None = None) -> str:  # fmt: skip
    """The run summary; ``metrics``: the LLM calls to count (default: the dispatcher's)."""
    turns = sum(scheduler.turns_taken.values())
    skipped = sum(t.skipped for t in scheduler.thinkers.values())
    m = metrics if metrics is not None else dispatcher.metrics
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
        print(first_line(sim, dispatcher, models), file=out, flush=True)
        scheduler.listen(Narrator(sim, out, show_thinking=options.show_thinking))
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
             f"{counted(sum(c.calls.values()), 'call', 'calls')}"
             + (f", {c.money:.4f}" if c.money else "")
             for name, c in sorted(costs.items())]  # fmt: skip
    return "Cost per agent: " + "; ".join(parts) + "."
