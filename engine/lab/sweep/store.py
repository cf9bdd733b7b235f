"""A sweep's folder, ``OUT/``, and what makes a run count exactly once.

    OUT/.sweep.lock                  one sweep at a time owns OUT
    OUT/sweep.yaml, OUT/plan.json    the sweep file as given, and its runs (keys, settings)
    OUT/runs/<key>/world.yaml        the run's world, with its character settings
    OUT/runs/<key>/vault.partial/    the run's vault while it runs
    OUT/runs/<key>/vault/            ... renamed so only once the run ended well
    OUT/runs/<key>/narrative.txt     what ``run --headless`` prints; log.txt: its stderr
    OUT/runs/<key>/result.json       written last, atomically: finished (with its row) or
                                     failed (with its error)
    OUT/results.parquet, results.csv one row per run
    OUT/report/                      ``mudsim sweep report``: summary.csv, a chart per metric

A run counts when its ``result.json`` says it finished, its world file is still the one
it ran (the same sha256) and it was made as the sweep file now says (the same
fingerprint: LLM, models, probe, mudsim version; ``engine.lab.sweep.identity``). A
finished run made otherwise is never silently reused: the start is refused, naming it,
unless ``rerun_changed`` (``--rerun-changed``) runs it again. On resume, everything else
of a run is removed and the run starts again from nothing: a vault is complete or
discarded, never half counted.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from filelock import FileLock, Timeout

from engine.errors import UsageError, VaultError
from engine.lab.sweep.digests import known_digests
from engine.lab.sweep.identity import differences, refusal
from engine.lab.sweep.plan import PlannedRun
from engine.vault.files import atomic_write_json, atomic_write_text, make_folder, os_reason

RUNS: Final = "runs"
RESULT: Final = "result.json"
PLAN: Final = "plan.json"
SWEEP_COPY: Final = "sweep.yaml"
LOCK: Final = ".sweep.lock"
VAULT: Final = "vault"
PARTIAL: Final = "vault.partial"
NARRATIVE: Final = "narrative.txt"
LOG: Final = "log.txt"
WORLD: Final = "world.yaml"

Status = Literal["finished", "failed"]


@dataclass(frozen=True)
class Outcome:
    """How one run ended: its metrics (finished), or why it failed."""

    key: str
    status: Status
    metrics: Mapping[str, Any]
    error: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "status": self.status, "metrics": dict(self.metrics),
                "error": self.error, "seconds": round(self.seconds, 3)}  # fmt: skip


@dataclass(frozen=True)
class Result:
    """A ``result.json``: the run, how it ended, which attempt it was, its world's hash."""

    run: PlannedRun
    outcome: Outcome
    attempt: int
    world_sha256: str
    fingerprint: Mapping[str, Any] | None = None
    """What the run was made with (``engine.lab.sweep.identity``; None: not recorded)."""
    commit: str = ""
    """The git commit of the mudsim that ran it (``unknown``, or "" in an old result)."""
    dirty: bool | None = None
    """Whether its tracked files differed from that commit (None: not known)."""

    def to_json(self) -> dict[str, Any]:
        return {**self.outcome.to_json(), "identity": self.run.identity(),
                "attempt": self.attempt, "world_sha256": self.world_sha256,
                "fingerprint": dict(self.fingerprint) if self.fingerprint is not None else None,
                "git_commit": self.commit, "git_dirty": self.dirty}  # fmt: skip


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SweepFolder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = FileLock(root / LOCK, timeout=0)

    def run_folder(self, key: str) -> Path:
        return self.root / RUNS / key

    def take(self) -> None:
        """Own OUT (a second sweep on it is refused: exit 2)."""
        try:
            make_folder(self.root / RUNS)
            self._lock.acquire()
        except Timeout as exc:
            raise UsageError(f"another sweep is running in {self.root} (lock file "
                             f"{self.root / LOCK}); wait for it, or give another --out") from exc  # fmt: skip
        except (OSError, VaultError) as exc:
            why = os_reason(exc) if isinstance(exc, OSError) else str(exc)
            raise UsageError(f"cannot use {self.root} as --out: {why}") from exc

    def release(self) -> None:
        self._lock.release()

    def write_plan(self, sweep_text: str, plan: Mapping[str, Any]) -> None:
        atomic_write_text(self.root / SWEEP_COPY, sweep_text)
        atomic_write_text(self.root / PLAN, json.dumps(plan, indent=2, ensure_ascii=False) + "\n")

    def read_result(self, key: str) -> dict[str, Any] | None:
        """A run's ``result.json``, or None when there is none or it does not read (a
        file of another version, or damaged: the run is run again)."""
        path = self.run_folder(key) / RESULT
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) and value.get("key") == key else None

    def write_result(self, result: Result) -> None:
        """The run's last word, atomic: after it, the run counts."""
        atomic_write_json(self.run_folder(result.run.key) / RESULT, result.to_json())

    def discard(self, key: str) -> None:
        """Remove what an unfinished run left (a partial vault, a result of a failure)."""
        folder = self.run_folder(key)
        try:
            shutil.rmtree(folder)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise VaultError(f"cannot remove {folder} to run it again: {os_reason(exc)}") from exc


class ChangedRunsError(UsageError):
    """Finished runs in OUT were made with another LLM, probe or mudsim version."""


@dataclass(frozen=True)
class Resume:
    """What a sweep finds in OUT: runs that count, failures kept, runs still to do."""

    done: list[Result]
    kept_failures: list[Result]
    todo: list[PlannedRun]
    attempts: dict[str, int]
    """Key -> attempts made before (for a run to do)."""


def scan(folder: SweepFolder, runs: Sequence[PlannedRun], world_sha: Mapping[str, str],
         fingerprints: Mapping[str, Mapping[str, Any]], *, retry_failed: bool = True,
         rerun_changed: bool = False) -> Resume:  # fmt: skip
    """Sort ``runs`` by what OUT holds of them, and discard every unfinished run's
    leftovers. A failed run is run again unless ``retry_failed`` is False (one made
    otherwise than ``fingerprints`` say always is). A finished run made otherwise is a
    ``ChangedRunsError`` (before anything is removed) unless ``rerun_changed``."""
    done, kept, todo, attempts = [], [], [], {}
    changed: list[tuple[str, list[str]]] = []
    for run in runs:
        found = folder.read_result(run.key)
        same_world = found is not None and found.get("world_sha256") == world_sha[run.world]
        previous = int(found.get("attempt") or 0) if found is not None else 0
        if found is not None and same_world and found.get("status") in ("finished", "failed"):
            made = found.get("fingerprint")
            wanted = known_digests(fingerprints[run.key], made if isinstance(made, dict) else None)
            result = Result(run, _outcome(found), previous, world_sha[run.world],
                            made if isinstance(made, dict) else None,
                            str(found.get("git_commit") or ""),
                            found.get("git_dirty") if isinstance(found.get("git_dirty"), bool)
                            else None)  # fmt: skip
            same = made == wanted
            if found["status"] == "finished" and same:
                done.append(result)
                continue
            if found["status"] == "finished":
                changed.append((run.key, differences(result.fingerprint, wanted)))
            elif same and not retry_failed:
                kept.append(result)
                continue
            same_world = same_world and same
        attempts[run.key] = previous if same_world else 0
        todo.append(run)
    if changed and not rerun_changed:
        raise ChangedRunsError(refusal(str(folder.root), changed))
    for run in todo:
        folder.discard(run.key)
    return Resume(done, kept, todo, attempts)


def state_of(found: Mapping[str, Any] | None, world_sha: str,
             fingerprint: Mapping[str, Any]) -> str:  # fmt: skip
    """What OUT holds of a run (its ``result.json``, or None): ``finished``, ``failed``,
    ``changed`` (finished, but made otherwise than ``fingerprint``) or ``to run``."""
    if found is None or found.get("world_sha256") != world_sha:
        return "to run"
    status, made = found.get("status"), found.get("fingerprint")
    fingerprint = known_digests(fingerprint, made if isinstance(made, dict) else None)
    if status == "finished":
        return "finished" if made == fingerprint else "changed"
    if status == "failed" and made == fingerprint:
        return "failed"
    return "to run"


def _outcome(found: Mapping[str, Any]) -> Outcome:
    metrics = found.get("metrics")
    return Outcome(str(found["key"]), found["status"],
                   metrics if isinstance(metrics, dict) else {},
                   found.get("error"), float(found.get("seconds") or 0.0))  # fmt: skip
