"""``mudsim replay RUN-DIR --vault NEW`` and ``mudsim fork RUN-DIR --at TURN --vault NEW``.

A replay makes ``NEW`` the vault as the run found it (``RunFolder.restore_start``),
opens it with the run's own world file, and runs the same engine with no LLM server:

- the LLM is a ``TapeBackend`` serving each call its recorded reply by key, after
  building the prompt and checking it is the text the run sent;
- the wall clock and the random tokens are the recorded draws (``engine.wallclock``);
- the run's gates (``engine.sim.sequencer``) pass in the recorded order: the replay
  follows ``events.jsonl`` and, at each gate, performs it (a turn starts, a player's
  input runs, the run winds down, the world is saved) or opens it (a prompt is built, a
  reply lands); everything between two gates follows by itself.

Every event the replay writes is compared with the recorded one as it is written; the
first difference stops the replay and is said. At the end every state file of ``NEW``
is compared with the run's ``end.json``, byte for byte (by hash).

A fork follows the record up to its ``--at``-th committed turn, then goes live: the
draws are the clock's again, new LLM calls go to the live LLM (another model, other
settings), and the run goes on like ``run --headless --turns N``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import ValidationError

from engine import wallclock
from engine.config import Settings
from engine.errors import UsageError, VaultError
from engine.lab.replay_tape import ReplayDiverged, ReplaySequencer, TapeBackend
from engine.llm.connect import build_dispatcher, check_endpoints, choose_llm, settle_default
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.sim.do import SETTLE_TIMEOUT
from engine.sim.run import (
    SHUTDOWN_GRACE,
    Narrator,
    configure_memory,
    start_agents,
    wind_down,
)
from engine.sim.scheduler import Scheduler
from engine.sim.sequencer import quiet
from engine.sim.simulation import Simulation
from engine.vault.run_store import CALLS, DRAWS, EVENTS, RunFolder, manifest

STALL_SECONDS = 5.0
"""How long a replay waits for a gate the tape says comes next before it calls the
replay diverged (everything a replay runs is on this machine: it is never slow)."""


@dataclass
class Replayed:
    events: int
    calls: int
    files: int


@dataclass
class Replay:
    """A run's record being followed in a new vault."""

    run: RunFolder
    sim: Simulation
    sequencer: ReplaySequencer
    tape: TapeBackend
    dispatcher: Dispatcher
    scheduler: Scheduler | None
    script: wallclock.Script
    tasks: list[asyncio.Task[Any]]

    def spawn(self, work: Coroutine[Any, Any, Any], name: str) -> None:
        self.tasks.append(asyncio.get_running_loop().create_task(work, name=name))

    def check(self) -> None:
        if self.script.failure is not None:
            raise ReplayDiverged(f"the replay diverged: {self.script.failure}")
        if self.sequencer.failure is not None:
            raise ReplayDiverged(f"the replay diverged: {self.sequencer.failure}")

    async def follow(self, until: int | None = None) -> int:
        """Follow the recorded events (up to event ``until``); how many were followed."""
        recorder = self.sim.recorder
        assert recorder is not None
        last = 0
        for event in self.sequencer.events:
            number, kind = int(event["n"]), str(event["kind"])
            if until is not None and number > until:
                break
            if kind == "end":
                break
            await quiet()
            self.check()
            if recorder.count < number:
                if recorder.count != number - 1:
                    missing = self.sequencer.events[recorder.count]
                    raise ReplayDiverged(
                        f"the replay diverged: event {recorder.count + 1} "
                        f"({missing['kind']}) did not happen"
                    )
                await self._perform(event)
                await quiet()
                self.check()
                if recorder.count < number:
                    raise ReplayDiverged(f"the replay diverged: event {number} ({kind}) did not "
                                         "happen")  # fmt: skip
            last = number
        return last

    async def _perform(self, event: Mapping[str, Any]) -> None:
        kind, sim = str(event["kind"]), self.sim
        if kind == "turn-start":
            if self.scheduler is None:
                raise ReplayDiverged("the recording has a turn but the replay has no agents")
            self.spawn(self.scheduler.take_turn(str(event["agent"])), f"turn of {event['agent']}")
        elif kind == "input":
            sim.execute(sim.world.characters[str(event["actor"])], str(event["line"]))
        elif kind == "wind-down":
            self.spawn(sim.wind_down_memory(SHUTDOWN_GRACE), "wind-down")
        elif kind == "settle":
            self.spawn(sim.settle_memory(SETTLE_TIMEOUT), "settle")
        elif kind == "save":
            sim.note("save")
            sim.save()
        elif kind in ("send", "answer"):
            key = str(event["key"])
            deadline = time.monotonic() + STALL_SECONDS
            while not self.sequencer.open(kind, key):
                self.check()
                if time.monotonic() > deadline:
                    raise ReplayDiverged(f"the replay diverged: call {key} was never {kind}"
                                         f"{'t' if kind == 'send' else 'ed'} (event "
                                         f"{event['n']})")  # fmt: skip
                await quiet()
                await asyncio.sleep(0.001)
        else:  # an event the engine writes by itself did not come
            raise ReplayDiverged(f"the replay diverged: event {event['n']} ({kind}) did not happen")

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.scheduler is not None:
            await self.scheduler.finish(0)
        await self.sim.supervisor.aclose()
        await self.dispatcher.aclose(grace=0)


def open_replay(run_dir: Path, vault: Path, kind: str, extra: dict[str, Any]) -> Replay:
    """Restore the run's start in ``vault`` and open it to follow the run's record."""
    run = RunFolder(run_dir)
    meta = run.meta()
    if meta.get("embedder"):
        raise UsageError(f"{run_dir} used an embedder for retrieval: it cannot be replayed yet")
    world = run_dir / "world.yaml"
    if not world.is_file():
        raise VaultError(f"{run_dir} has no world.yaml: it cannot be replayed")
    if vault.exists() and any(vault.iterdir()):
        raise UsageError(f"{vault} is not empty: a replay needs a new vault")
    run.restore_start(run_dir.parent.parent, vault)
    events = run.read(EVENTS)
    calls = {str(c.get("key")): c for c in run.read(CALLS)}
    draws: list[wallclock.Draw] = [(d["kind"], str(d["value"])) for d in run.read(DRAWS)]
    sim = Simulation.open(vault, world, notice=None)
    try:
        sim.begin_record(kind, world, {**{k: meta.get(k) for k in _REPEATED}, **extra})
        recorder = sim.recorder
        if recorder is None:
            raise UsageError(f"{vault}/config/record.md has record: false")
        sequencer = ReplaySequencer(events)
        recorder.sequencer, recorder.on_event = sequencer, sequencer.compare
        tape = TapeBackend(calls, sequencer)
        dispatcher = Dispatcher([Endpoint("tape:", tape, slots=1_000_000)],
                                retry=RetryPolicy(attempts=1, deadline=3600.0))  # fmt: skip
        summarizers = dict(meta.get("summarizers") or {})
        consolidators = dict(meta.get("consolidators") or {})
        if meta.get("compaction", True):
            configure_memory(sim, dispatcher, summarizers, consolidators,
                             local=bool(meta.get("local")))  # fmt: skip
        if meta.get("retry") is False:
            sim.compactor.retry = sim.knowledge.retry = False
        models = dict(meta.get("models") or {})
        scheduler = start_agents(sim, dispatcher, models, meta.get("seed")) if models else None
    except BaseException:
        sim.close()
        raise
    return Replay(run, sim, sequencer, tape, dispatcher, scheduler,
                  wallclock.Script(draws), [])  # fmt: skip


_REPEATED = ("models", "summarizers", "consolidators", "local", "seed", "retry", "compaction")
"""What a replay takes from the recorded ``run.json``."""


async def replay_run(run_dir: Path, vault: Path, out: TextIO | None = None) -> Replayed:
    """Replay the run recorded in ``run_dir`` into the new vault ``vault``."""
    out = out or sys.stdout
    run_id = RunFolder(run_dir).id
    replay = open_replay(run_dir, vault, "replay", {"replay_of": run_id})
    sim = replay.sim
    try:
        try:
            with wallclock.scripted(replay.script):
                followed = await replay.follow()
        finally:
            await replay.close()
        recorder = sim.recorder
        assert recorder is not None
        recorder.on_event = None
        sim.end_record("replayed")
        files = _compare_end(replay.run, vault)
        result = Replayed(followed, replay.tape.served, files)
        print(f"Replayed {run_id}: {followed} events, {result.calls} LLM calls from the tape; "
              f"all {files} state files are byte-identical to the recorded end.",
              file=out, flush=True)  # fmt: skip
        return result
    finally:
        sim.close()


def _compare_end(run: RunFolder, vault: Path) -> int:
    recorded = run.end()
    if recorded is None:
        raise VaultError(f"{run.folder} has no end.json (the run did not end): nothing to "
                         "compare the replay with")  # fmt: skip
    replayed = manifest(vault)
    for name in sorted(set(recorded) | set(replayed)):
        if recorded.get(name) != replayed.get(name):
            what = ("missing in the replay" if name not in replayed else "not in the recording"
                    if name not in recorded else "different")  # fmt: skip
            raise ReplayDiverged(f"the replayed vault differs from the recorded end: {name} is "
                                 f"{what}")  # fmt: skip
    return len(recorded)


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


def apply_sets(sim: Simulation, sets: tuple[str, ...]) -> list[str]:
    """``--set section.key=value`` on the fork's settings from its branch point on (a
    memory window, how often knowledge passes run, dreams, the handbook's method,
    training capture); each checked as the config file's would be. What was set."""
    data = sim.settings.model_dump(mode="json")
    done = []
    for item in sets:
        path, sep, raw = item.partition("=")
        parts = path.strip().split(".")
        if not sep or len(parts) != 2 or parts[0] not in data or parts[1] not in data[parts[0]]:
            raise UsageError(f"--set {item!r}: expected section.key=value, e.g. "
                             "memory_compaction.recent_window=32")  # fmt: skip
        data[parts[0]][parts[1]] = yaml.safe_load(raw) if raw.strip() else raw
        done.append(f"{path.strip()}={raw}")
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"--set: {exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}") from exc
    sim.settings = settings
    memory = settings.memory_compaction
    for mind in sim.minds.values():
        mind.windows = sim.windows_for(mind.character)
    sim.knowledge.every = memory.consolidate_every
    sim.dreams.interval = memory.dream_interval
    if sim.knowledge.handbook is not None:
        sim.knowledge.handbook.method = memory.handbook
    if sim.recorder is not None:
        sim.recorder.training = settings.record.training
    return done


async def fork_run(run_dir: Path, vault: Path, options: ForkOptions,
                   environ: Mapping[str, str], out: TextIO | None = None) -> Scheduler:  # fmt: skip
    """Replay ``run_dir`` into ``vault`` through turn ``options.at``, then run live."""
    out = out or sys.stdout
    parent = RunFolder(run_dir)
    extra = {"parent": parent.id, "parent_folder": str(run_dir), "branch_at": options.at,
             "turns": options.turns, "sets": list(options.sets)}  # fmt: skip
    replay = open_replay(run_dir, vault, "fork", extra)
    sim, live = replay.sim, None
    scheduler = replay.scheduler
    try:
        if scheduler is None:
            raise UsageError(f"{run_dir} ran no agents: there is no turn to fork at")
        turn_event(list(replay.sequencer.events), options.at)  # a bad --at before any work
        try:
            await follow_to_branch(replay, options.at)
            live = await live_llm(sim, options, environ)
            replay.tape.live = live
            apply_sets(sim, options.sets)
            if options.model is not None:
                for thinker in scheduler.thinkers.values():
                    thinker.model = options.model
                sim.compactor.models = dict.fromkeys(sim.compactor.models, options.model)
                sim.knowledge.models = dict.fromkeys(sim.knowledge.models, options.model)
            started = [t for t in replay.tasks if t.get_name().startswith("turn of")]
            if started:  # turns begun before the branch end first, as they would have
                await asyncio.wait(started)
            scheduler.turns_taken = dict.fromkeys(scheduler.thinkers, 0)
            scheduler.listen(Narrator(sim, out))
            print(f"mudsim: forked {parent.id} after turn {options.at}; live from here",
                  file=sys.stderr, flush=True)  # fmt: skip
            await scheduler.run(options.turns)
        finally:
            await wind_down(sim, scheduler, replay.dispatcher)
            await replay.close()
            await sim.checkpoint()
            sim.end_record("turns done")
        return scheduler
    finally:
        if live is not None:
            await live.aclose()
        sim.close()


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
