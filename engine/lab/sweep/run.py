"""One run of a sweep, in a fresh vault: what ``mudsim run WORLD --headless --turns N
--seed S --llm ... --model ...`` does, called in this process (a pool worker, a Ray
task, or the caller itself), never as a ``mudsim`` child process.

``execute_run`` writes the run's world (its character settings given to every agent) and
its vault's ``config/*.md`` (its switches and vault settings), runs it into
``vault.partial/`` with the narrative going to ``narrative.txt`` and everything else the
run says (its stderr, llama.cpp's own output) to ``log.txt``, never to the sweep's
terminal; with the probe, quizzes the agents the same way (``probe.txt``); reads the
run's figures; and only then renames ``vault.partial`` to ``vault``. With a ``timeout``, a
run (its probe included) still going at that many seconds is cancelled (again every
``CUT_SECONDS`` while it winds down, so a call that hangs cannot hold it) and fails with
"timed out after N s"; its partial vault is discarded on the next start. Whatever goes wrong
is the run's ``Outcome`` (failed, with one line saying why; a traceback goes to
``log.txt`` when the error is not one mudsim expects): it never escapes to the sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import time
import traceback
from collections.abc import Coroutine, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from engine.errors import MudsimError
from engine.lab.probe.probe import ProbeOptions, probe
from engine.lab.sweep.metrics import run_metrics, the_run
from engine.lab.sweep.settings import derive_world, split, vault_settings
from engine.lab.sweep.store import LOG, NARRATIVE, PARTIAL, VAULT, WORLD, Outcome
from engine.llm.model_identity import FAKE_MODEL
from engine.sim.run import RunOptions, run_headless
from engine.vault.config_files import FILES
from engine.vault.files import make_folder, write_front_matter

T = TypeVar("T")
PROBE_OUTPUT = "probe.txt"
CUT_SECONDS = 0.5
"""Once past its time limit, a run is cancelled again this often until it has ended."""
FINISHED_REASON = "turns done"
"""What a run's record says when every agent took its turns (``engine.sim.run``)."""


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs for one run (picklable: it crosses to a pool worker or
    a Ray node)."""

    key: str
    folder: Path
    """``OUT/runs/<key>``, or a folder of the Ray node's own when OUT is not shared."""
    world_text: str
    """The world file as the sweep file names it, read by the sweep."""
    settings: Mapping[str, Any]
    seed: int
    turns: int
    llm: str | None = None
    """The sweep's ``llm`` (a run's own ``llm`` setting wins)."""
    endpoints: list[dict[str, Any]] | None = None
    probe: Mapping[str, Any] | None = None
    """``{compare: [...], per_category: n}``, or None: no probe."""
    environ: Mapping[str, str] = field(default_factory=dict)
    """``MUDSIM_LLM_URL`` / ``MUDSIM_MODEL`` as the sweep saw them."""
    timeout: float | None = None
    """Seconds the run (its probe included) may take; None: no limit."""

    def with_folder(self, folder: Path) -> RunTask:
        return replace(self, folder=folder)


class RunEndedEarly(MudsimError):
    """The run stopped before every agent took its turns (a signal, an error)."""


class RunTimedOut(MudsimError):
    """The run went past the sweep file's ``timeout``."""


def timed_out(seconds: float) -> str:
    return f"timed out after {seconds:g} s"


async def within(work: Coroutine[Any, Any, T], seconds: float | None, limit: float) -> T:
    """``work``'s result, or a ``RunTimedOut`` once ``seconds`` have passed (``limit``:
    the whole run's limit, for the message); a run past it is cancelled until it ends."""
    task = asyncio.ensure_future(work)
    if seconds is None:
        return await task
    done, _ = await asyncio.wait({task}, timeout=max(0.0, seconds))
    if task in done:
        return task.result()
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=CUT_SECONDS)
    with contextlib.suppress(Exception, asyncio.CancelledError):
        task.result()  # its CancelledError, or what its cleanup raised: the time limit says it
    raise RunTimedOut(timed_out(limit))


def execute_run(task: RunTask) -> Outcome:
    """Run ``task`` into ``task.folder``; never raises (but for KeyboardInterrupt)."""
    started = time.perf_counter()
    folder = task.folder
    try:
        make_folder(folder)
        with _output_to(folder / NARRATIVE, folder / LOG) as narrative:
            try:
                metrics = _run(task, narrative)
            except MudsimError as exc:
                return Outcome(task.key, "failed", {}, str(exc), time.perf_counter() - started)
            except Exception as exc:
                traceback.print_exc(file=sys.stderr)  # to log.txt
                error = f"internal error: {type(exc).__name__}: {exc} (see {folder / LOG})"
                return Outcome(task.key, "failed", {}, error, time.perf_counter() - started)
        os.replace(folder / PARTIAL, folder / VAULT)
    except OSError as exc:
        error = f"cannot write {exc.filename or folder}: {exc.strerror or exc}"
        return Outcome(task.key, "failed", {}, error, time.perf_counter() - started)
    return Outcome(task.key, "finished", metrics, None, time.perf_counter() - started)


def prepare(task: RunTask) -> Path:
    """The run's world file and its vault's settings, written before it starts; the
    partial vault's path."""
    world = task.folder / WORLD
    source = str(world)
    world.write_text(derive_world(task.world_text, task.settings, source=source),
                     encoding="utf-8")  # fmt: skip
    partial = task.folder / PARTIAL
    shutil.rmtree(partial, ignore_errors=True)  # an earlier attempt's, if one was left
    settings = vault_settings(task.settings, task.endpoints)
    for name, (_model, body) in FILES.items():
        section = getattr(settings, name.removesuffix(".md"))
        write_front_matter(partial / "config" / name, section.model_dump(mode="json"), body)
    return partial


def _run(task: RunTask, narrative: TextIO) -> dict[str, Any]:
    partial = prepare(task)
    options = split(task.settings)["run"]
    llm, model = options.get("llm") or task.llm, options.get("model")
    environ = dict(task.environ)
    run = RunOptions(task.folder / WORLD, partial, llm, model, task.turns, task.seed)
    started = time.perf_counter()
    limit = task.timeout

    def left() -> float | None:
        return None if limit is None else limit - (time.perf_counter() - started)

    asyncio.run(within(run_headless(run, environ, out=narrative), left(), limit or 0.0))
    seconds = time.perf_counter() - started
    meta = the_run(partial).meta()
    reason = meta.get("reason")
    if reason != FINISHED_REASON:
        raise RunEndedEarly(f"the run ended before its turns were done ({reason})")
    served = sorted(set((meta.get("models") or {}).values()))
    if model and served and served not in ([model], [FAKE_MODEL]):  # a wrong row label
        raise RunEndedEarly(f"the run was served by {', '.join(served)}, not the model "
                            f"{model} its row names")  # fmt: skip
    report = None
    if task.probe is not None:
        asking = ProbeOptions(partial, tuple(task.probe["compare"]),
                              per_category=int(task.probe["per_category"]), seed=task.seed,
                              llm=llm, model=model)  # fmt: skip
        with (task.folder / PROBE_OUTPUT).open("w", encoding="utf-8") as out:
            report = asyncio.run(within(probe(asking, environ, out=out), left(), limit or 0.0))
    return run_metrics(partial, seconds, report)


@contextlib.contextmanager
def _output_to(narrative_path: Path, log_path: Path) -> Iterator[TextIO]:
    """The narrative file to write to; meanwhile stdout and stderr (Python's and the
    process's own descriptors, which C libraries write to) go to ``log_path``."""
    with narrative_path.open("w", encoding="utf-8") as narrative, \
            log_path.open("a", encoding="utf-8") as log:  # fmt: skip
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                yield narrative
        finally:
            log.flush()
            for target, copy in zip((1, 2), saved, strict=True):
                os.dup2(copy, target)
                os.close(copy)
