"""``mudsim replay VAULT|RUN-DIR --vault NEW``: a recorded run again, exactly, with no LLM
server (a vault's latest run, or ``--run ID``'s: ``engine.lab.run_records.run_source``).

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

A fork (``engine.lab.fork``) follows the record up to a turn, then goes live. A fork's
own record replays like any run's: at its ``branch`` event the replay makes the fork's
change (``engine.lab.branch``) and goes on following the record.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from engine import wallclock
from engine.errors import UsageError, VaultError
from engine.lab.branch import Branch, go_live, settings_with
from engine.lab.replay_tape import (
    WAITED_GATES,
    ReplayDiverged,
    ReplaySequencer,
    TapeBackend,
    recorded_results,
)
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.local import embedded_tokens
from engine.memory.tokens import ESTIMATE, TokenCounter
from engine.sim.do import SETTLE_TIMEOUT
from engine.sim.recorder import TAPE
from engine.sim.run import configure_memory, start_agents
from engine.sim.run_ending import SHUTDOWN_GRACE
from engine.sim.scheduler import Scheduler
from engine.sim.sequencer import quiet
from engine.sim.simulation import Simulation
from engine.vault.run_store import CALLS, CREDENTIALS, DRAWS, EVENTS, RunFolder, manifest
from engine.world.model import Role, character_from_fields

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
    meta: dict[str, Any]
    """The followed run's ``run.json``."""

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
            actor = sim.world.characters.get(str(event["actor"]))
            if actor is None:  # made during the run, outside its record (a telnet login)
                raise ReplayDiverged(f"the replay diverged: event {event['n']} (input) is by "
                                     f"{event['actor']!r}, who is not in the replayed world")  # fmt: skip
            sim.execute(actor, str(event["line"]))
            recorder = sim.recorder
            assert recorder is not None
            following = self.sequencer.events[recorder.count : recorder.count + 1]
            if following and following[0]["kind"] == "save":  # play saves in the same step
                sim.save_now()
        elif kind == "join":  # a character made mid-run (a new name at a telnet login)
            fields = event.get("character")
            try:
                if not isinstance(fields, dict):
                    raise TypeError("no character")
                character = character_from_fields(fields)
            except (TypeError, ValueError) as exc:
                raise ReplayDiverged(f"the recording's event {event['n']} (join) does not "
                                     f"name a character this mudsim can make: {exc}") from exc  # fmt: skip
            sim.add_character(character)
        elif kind == "role":  # its telnet account's role, given at a login
            actor = sim.world.characters.get(str(event["actor"]))
            if actor is None:
                raise ReplayDiverged(f"the replay diverged: event {event['n']} (role) is for "
                                     f"{event['actor']!r}, who is not in the replayed world")  # fmt: skip
            sim.set_role(actor, Role(str(event["role"])))
        elif kind == "presence":  # a player who left the served world, or came back
            actor = sim.world.characters.get(str(event["actor"]))
            if actor is None:
                raise ReplayDiverged(f"the replay diverged: event {event['n']} (presence) is "
                                     f"for {event['actor']!r}, who is not in the replayed world")  # fmt: skip
            sim.set_asleep(actor, bool(event["asleep"]))
        elif kind == "wind-down":
            passes = event.get("passes") is not False  # (a stopped run's: no passes)
            self.spawn(sim.wind_down_memory(SHUTDOWN_GRACE, passes=passes), "wind-down")
        elif kind == "leave-memory-work":  # a stop's first press
            sim.leave_memory_work()
        elif kind == "settle":
            self.spawn(sim.settle_memory(SETTLE_TIMEOUT), "settle")
        elif kind == "save":
            sim.save_now()
        elif kind == "branch":  # a fork's record: its change, made again at the same place
            self._branch(event)
        elif kind in WAITED_GATES:
            key = str(event["key"])
            if kind == "send":  # each attempt of a call has its own
                key = f"{key}#{event.get('attempt', 0)}"
            deadline = time.monotonic() + STALL_SECONDS
            while not self.sequencer.open(kind, key):
                self.check()
                if time.monotonic() > deadline:
                    raise ReplayDiverged(f"the replay diverged: event {event['n']} ({kind} "
                                         f"{key}) never came")  # fmt: skip
                await quiet()
                await asyncio.sleep(0.001)
        else:  # an event the engine writes by itself did not come
            raise ReplayDiverged(f"the replay diverged: event {event['n']} ({kind}) did not happen")

    def _branch(self, event: Mapping[str, Any]) -> None:
        recorder = self.sim.recorder
        assert recorder is not None
        branch = Branch.of(self.meta)
        try:
            settings = settings_with(self.sim.settings, branch.sets)
        except UsageError as exc:
            raise ReplayDiverged(f"the replay diverged: the fork's change at event "
                                 f"{event['n']} cannot be made again: {exc}") from exc  # fmt: skip
        recorder.event("branch", **{k: v for k, v in event.items() if k not in ("n", "kind", "at")})
        go_live(self.sim, self.scheduler, branch, settings)

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.scheduler is not None:
            await self.scheduler.finish(0)
        await self.sim.supervisor.aclose()
        await self.dispatcher.aclose(grace=0)


def open_replay(run_dir: Path, vault: Path, kind: str, extra: dict[str, Any],
                *, whole: bool = True) -> Replay:  # fmt: skip
    """Restore the run's start in ``vault`` and open it to follow the run's record
    (``whole``: to its end, which the record must then have)."""
    run = RunFolder(run_dir)
    meta = run.meta()
    if meta.get("incomplete"):
        raise VaultError(f"{run_dir}'s record is incomplete ({meta['incomplete']}): it "
                         "cannot be replayed")  # fmt: skip
    if whole and run.end() is None:
        raise VaultError(f"{run_dir} has no end.json (the run never ended: killed?); a "
                         "replay needs the end to compare with, a fork does not")  # fmt: skip
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
        repeated = {k: meta[k] for k in _REPEATED if k in meta}  # absent stays absent
        sim.begin_record(kind, world, {**repeated, **extra})
        recorder = sim.recorder
        if recorder is None:
            raise UsageError(f"{vault}/config/record.md has record: false")
        sim.wait_for = _no_wait
        sequencer = ReplaySequencer(events)
        recorder.sequencer, recorder.on_event = sequencer, sequencer.compare
        sim.recorded_result = recorded_results(sequencer, lambda: recorder.count)
        tape = TapeBackend(calls, sequencer, recorded_counter(meta))
        recorder.replaying = True
        dispatcher = Dispatcher([Endpoint(TAPE, tape, slots=1_000_000)],
                                retry=RetryPolicy(attempts=1_000, deadline=3600.0),
                                sleep=_no_wait, cooloff=0.0)  # fmt: skip
        summarizers = dict(meta.get("summarizers") or {})
        consolidators = dict(meta.get("consolidators") or {})
        embedded = bool(meta.get("embedded", meta.get("local")))
        sim.embedded = embedded  # (its thinkers check speech for noise, as the run's did)
        if meta.get("compaction", True):
            configure_memory(sim, dispatcher, summarizers, consolidators, local=embedded)
        if meta.get("retry") is False:
            sim.compactor.retry = sim.knowledge.retry = False
        sim.memory_gate.enabled = meta.get("memory_gate") is True  # (not before it existed)
        sim.compactor.bounded = meta.get("memory_bound") is True  # (nor this)
        sim.compactor.players = "extractive" if meta.get("players") == "extractive" else "llm"
        models = dict(meta.get("models") or {})
        scheduler = start_agents(sim, dispatcher, models, meta.get("seed")) if models else None
    except BaseException:
        sim.close()
        raise
    return Replay(run, sim, sequencer, tape, dispatcher, scheduler,
                  wallclock.Script(draws), [], meta)  # fmt: skip


async def _no_wait(seconds: float) -> None:
    """A replay's backoff: the tape decides when a retry is sent, not a timer."""
    await asyncio.sleep(0)


def recorded_counter(meta: Mapping[str, Any]) -> TokenCounter:
    """How the recorded run counted its prompts' tokens, so its prompts are fitted alike:
    the embedded model's tokenizer for a run with it in-process (when it is installed
    here; without it a prompt the run cut may come out otherwise), else the estimate."""
    if not meta.get("local"):
        return ESTIMATE
    names = [
        *dict(meta.get("models") or {}).values(),
        *dict(meta.get("summarizers") or {}).values(),
    ]
    return embedded_tokens(names[0] if names else None) or ESTIMATE


_REPEATED = (
    "models",
    "summarizers",
    "consolidators",
    "local",
    "embedded",
    "seed",
    "retry",
    "compaction",
    "turn_slots",
    "memory_gate",
    "memory_bound",
    "players",
)
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
    # records made before the accounts were left out of them still name the file
    recorded = {name: sha for name, sha in recorded.items() if name not in CREDENTIALS}
    replayed = manifest(vault)
    for name in sorted(set(recorded) | set(replayed)):
        if recorded.get(name) != replayed.get(name):
            what = ("missing in the replay" if name not in replayed else "not in the recording"
                    if name not in recorded else "different")  # fmt: skip
            raise ReplayDiverged(f"the replayed vault differs from the recorded end: {name} is "
                                 f"{what}")  # fmt: skip
    return len(recorded)
