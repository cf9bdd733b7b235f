"""``mudsim sweep SWEEP.yaml --out OUT``: every run of a sweep file, on a local process
pool (default) or Ray, resumable, into one results table.

The sweep file is read and every run checked before anything runs, its runs counted
before they are made (``engine.lab.sweep.file``; over ``--max-runs``: exit 2), and each
run's fingerprint resolved (the LLM, models, probe and mudsim version it is made with:
``engine.lab.sweep.identity``). ``--dry-run`` prints one line per run, its key first, and
writes nothing. Otherwise the sweep takes OUT (one sweep at a time), finds what an
earlier start left (``engine.lab.sweep.store.scan``: finished runs are kept, anything
else is removed; failed runs run again unless ``--skip-failed``; a finished run made
with another LLM, probe or version refuses the start, exit 2 with nothing written,
unless ``--rerun-changed`` runs it again), writes its plan, checks that the LLM answers
(exit 3 if not; with ``--ray`` each run checks on its own node), and runs the rest. As
each run ends its ``result.json`` is written, then ``results.parquet`` and
``results.csv`` are rewritten (atomically), so a sweep killed half-way leaves a table of
every run that ended; they are written once more at the end (also when stopped).

A first Ctrl-C (or SIGTERM) starts no new run and lets the runs in progress finish; a
second stops them at once (they run again next time). The exit code is 0 when every
run finished, 1 when some failed (each error is in the results), 130 when stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from engine.config import LLMConfig
from engine.errors import MudsimError
from engine.lab.sweep.digests import DIGESTS, digests_now
from engine.lab.sweep.executor import Executor, Hooks
from engine.lab.sweep.file import Sweep, load_sweep_file
from engine.lab.sweep.identity import passed_environment, run_fingerprints
from engine.lab.sweep.plan import MAX_RUNS, PlannedRun
from engine.lab.sweep.pool import PoolExecutor
from engine.lab.sweep.progress import SweepProgress
from engine.lab.sweep.results import rows_of, write_results
from engine.lab.sweep.run import RunTask
from engine.lab.sweep.settings import split
from engine.lab.sweep.store import (
    Outcome,
    Result,
    SweepFolder,
    scan,
    state_of,
    text_sha256,
)
from engine.llm.connect import (
    build_dispatcher,
    check_endpoints,
    choose_llm,
    named_model,
    settle_default,
)
from engine.provenance import CodeIdentity, code_identity

Fingerprints = Mapping[str, Mapping[str, Any]]


class RunsFailedError(MudsimError):
    """Some runs failed (each recorded with its error); the others finished."""

    exit_code = 1


class SweepStoppedError(MudsimError):
    """Stopped by a Ctrl-C before every run was done (the rest run next time)."""

    exit_code = 130


@dataclass(frozen=True)
class SweepOptions:
    sweep_file: Path
    out: Path
    workers: int | None = None
    """Runs at once (default: the pool, this machine's cores; Ray, the cluster's CPUs)."""
    ray: str | None = None
    """None: the process pool; "": a local Ray; else the address of a Ray cluster."""
    dry_run: bool = False
    retry_failed: bool = True
    rerun_changed: bool = False
    """Run again the finished runs made with another LLM, probe or mudsim version
    (otherwise they refuse the start)."""
    max_runs: int = MAX_RUNS


def run_sweep(options: SweepOptions, environ: Mapping[str, str], *, out: TextIO | None = None,
              err: TextIO | None = None, executor: Executor | None = None) -> list[Result]:  # fmt: skip
    """Run the sweep; every run's result, in the plan's order."""
    out, err = out or sys.stdout, err or sys.stderr
    sweep = load_sweep_file(options.sweep_file, max_runs=options.max_runs)
    world_sha = {name: text_sha256(text) for name, text in sweep.world_texts.items()}
    code = code_identity()
    made = run_fingerprints(sweep, environ, code.version, code.code)
    digests = asyncio.run(digests_now(sweep, environ, made))
    made = {key: {**found, DIGESTS: digests[key]} for key, found in made.items()}
    folder = SweepFolder(options.out)
    if options.dry_run:
        dry_run(sweep, folder, world_sha, made, out, err)
        return []
    folder.take()
    try:
        found = scan(folder, sweep.runs, world_sha, made, retry_failed=options.retry_failed,
                     rerun_changed=options.rerun_changed)  # fmt: skip
        folder.write_plan(options.sweep_file.read_text(encoding="utf-8"), _plan_json(sweep))
        results = {r.run.key: r for r in [*found.done, *found.kept_failures]}
        write_results(options.out, rows_of(_ordered(sweep, results), sweep.settings))
        if found.todo and options.ray is None and executor is None:
            asyncio.run(preflight(sweep, environ))
        chosen = (executor or _executor(options, sweep)) if found.todo else None
        try:
            if chosen is not None:
                made_by = Provenance(world_sha, made, code)
                _execute(sweep, found.todo, found.attempts, made_by, chosen, folder, results,
                         environ, err)  # fmt: skip
        finally:
            ordered = _ordered(sweep, results)
            written = write_results(options.out, rows_of(ordered, sweep.settings))
            _say_done(sweep, found.done, ordered, written, err)
    finally:
        folder.release()
    return ordered


def _ordered(sweep: Sweep, results: Mapping[str, Result]) -> list[Result]:
    return [results[run.key] for run in sweep.runs if run.key in results]


@dataclass(frozen=True)
class Provenance:
    """What each run of this start is made with, for its ``result.json``."""

    world_sha: Mapping[str, str]
    fingerprints: Fingerprints
    code: CodeIdentity


def _executor(options: SweepOptions, sweep: Sweep) -> Executor:
    if options.ray is None:
        return PoolExecutor(options.workers or os.cpu_count() or 1)
    from engine.lab.sweep.ray import RayExecutor

    resources = sweep.spec.resources
    return RayExecutor(options.ray or None, options.out.resolve(), cpus=resources.cpus,
                       gpus=resources.gpus, workers=options.workers)  # fmt: skip


def _execute(sweep: Sweep, todo: Sequence[PlannedRun], attempts: Mapping[str, int],
             made_by: Provenance, executor: Executor, folder: SweepFolder,
             results: dict[str, Result], environ: Mapping[str, str], err: TextIO) -> None:  # fmt: skip
    runs = {run.key: run for run in todo}
    progress = SweepProgress(len(sweep.runs), len(sweep.runs) - len(todo), err)
    stopping = False

    def stop() -> None:
        nonlocal stopping
        stopping = True
        progress.say(f"mudsim: stopping: letting {progress.running} runs in progress finish "
                     "(Ctrl-C again to stop them now; unfinished runs run again next time)")  # fmt: skip

    def finished(task: RunTask, outcome: Outcome) -> None:
        run = runs[task.key]
        result = Result(run, outcome, attempts.get(run.key, 0) + 1, made_by.world_sha[run.world],
                        made_by.fingerprints[run.key], made_by.code.commit,
                        made_by.code.dirty)  # fmt: skip
        folder.write_result(result)
        results[run.key] = result
        write_results(folder.root, rows_of(_ordered(sweep, results), sweep.settings))
        progress.finished(run.key, outcome)

    hooks = Hooks(started=lambda _task: progress.started(), finished=finished,
                  stopping=lambda: stopping)  # fmt: skip
    tasks = [task_of(sweep, run, folder.run_folder(run.key).absolute(), environ) for run in todo]
    try:
        with interrupts(stop):
            executor.run(tasks, hooks)
    finally:
        progress.close()
        close = getattr(executor, "close", None)
        if callable(close):
            close()
    if stopping:
        left = len(sweep.runs) - len(results)
        raise SweepStoppedError(f"stopped with {left} runs not done; run the same command "
                                "again to go on")  # fmt: skip


def task_of(sweep: Sweep, run: PlannedRun, folder: Path, environ: Mapping[str, str]) -> RunTask:
    passed = passed_environment(environ, endpoints_given=sweep.spec.endpoints is not None)
    probe = sweep.spec.probe
    return RunTask(run.key, folder, sweep.world_texts[run.world], dict(run.settings),
                   run.seed, run.turns, sweep.spec.llm, sweep.endpoints,
                   probe.model_dump() if probe is not None else None, passed,
                   sweep.spec.timeout)  # fmt: skip


async def preflight(sweep: Sweep, environ: Mapping[str, str]) -> None:
    """Every server the runs will use answers (an ``LLMUnavailableError``, exit 3, if
    not): one check before the runs, not one failure per run. Models are checked by each
    run (one that is missing fails its runs only)."""
    config = LLMConfig.model_validate({"endpoints": sweep.endpoints or []})
    seen: set[str] = set()
    for run in sweep.runs:
        settings = split(run.settings)["run"]
        flag = settings.get("llm") or sweep.spec.llm
        env = environ if sweep.spec.endpoints is None else {}
        named = named_model(settings.get("model"), env, config)  # then never the embedded
        choice = await settle_default(choose_llm(flag, env, config), lambda _line: None,
                                      named=named)  # fmt: skip
        if choice.fake or choice.local or choice.describe in seen:
            continue
        seen.add(choice.describe)
        dispatcher = build_dispatcher(choice)
        try:
            await check_endpoints(dispatcher, [])
        finally:
            await dispatcher.aclose()


def dry_run(sweep: Sweep, folder: SweepFolder, world_sha: Mapping[str, str],
            made: Fingerprints, out: TextIO, err: TextIO) -> None:  # fmt: skip
    """One line per run, its key first, and what OUT holds of it; nothing is written."""
    counts = {"finished": 0, "failed": 0, "changed": 0, "to run": 0}
    label = {"finished": "  (finished: kept)", "failed": "  (failed: runs again)",
             "changed": "  (finished otherwise than the file now says: --rerun-changed "
                        "runs it again)"}  # fmt: skip
    for run in sweep.runs:
        state = state_of(folder.read_result(run.key), world_sha[run.world], made[run.key])
        counts[state] += 1
        print(f"{run.key}  {run.describe()}{label.get(state, '')}", file=out)
    changed = f", {counts['changed']} finished otherwise" if counts["changed"] else ""
    print(f"mudsim: {len(sweep.runs)} runs: {counts['finished']} finished, {counts['failed']} "
          f"failed{changed}, {counts['to run']} to run (dry run: nothing was run)", file=err)  # fmt: skip


def _plan_json(sweep: Sweep) -> dict[str, object]:
    return {"sweep": str(sweep.source), "settings": sweep.settings,
            "worlds": list(sweep.worlds), "turns": sweep.spec.turns,
            "runs": [{"key": r.key, **r.identity()} for r in sweep.runs]}  # fmt: skip


def _say_done(sweep: Sweep, before: Sequence[Result], results: Sequence[Result],
              written: Sequence[str], err: TextIO) -> None:  # fmt: skip
    finished = sum(1 for r in results if r.outcome.status == "finished")
    failed = [r for r in results if r.outcome.status == "failed"]
    print(f"Sweep: {len(sweep.runs)} runs: {finished} finished ({len(before)} before this "
          f"start), {len(failed)} failed, {len(sweep.runs) - len(results)} not run. "
          f"Results: {', '.join(written)}.", file=err, flush=True)  # fmt: skip
    if failed:
        first = failed[0]
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        print(f"First failure: {first.run.key}: {first.outcome.error}{more}", file=err,
              flush=True)  # fmt: skip


def failures(results: Sequence[Result]) -> None:
    """Raise ``RunsFailedError`` when some run failed."""
    failed = [r for r in results if r.outcome.status == "failed"]
    if failed:
        raise RunsFailedError(f"{len(failed)} of {len(results)} runs failed (their errors are in "
                              "the results); run the same command again to retry them")  # fmt: skip


@contextlib.contextmanager
def interrupts(stop: Callable[[], None]) -> Iterator[None]:
    """The first Ctrl-C or SIGTERM calls ``stop``; a second is a KeyboardInterrupt."""
    presses = 0

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            stop()
        else:
            raise KeyboardInterrupt

    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # not the main thread: signals stay as they are
            previous[signum] = signal.signal(signum, on_signal)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
