"""A run's record on disk: ``vault/runs/<run id>/``.

- ``run.json``: what the run was (id, kind, start and end, the world file's hash,
  settings, the model of each role, the endpoints without credentials, the seed, the
  mudsim version, why it ended; a fork's parent and branch point), written atomically at
  the start and again at the end.
- ``calls.jsonl``, ``events.jsonl``, ``draws.jsonl`` and ``training.jsonl``: tapes, one
  JSON object a line, appended like the journal (``LineFile``: whole lines, unbuffered,
  cut back on a failed write, fsynced in groups), so a kill loses nothing written and
  a torn last line is left out when read (``read_tape``).
- ``world.yaml``: the world file the run was started with (a replay validates with it).
- ``start/``: what a replay needs to restore the vault as the run found it: a copy of
  every file but the journals and the telnet accounts (``CREDENTIALS``), and
  ``journals.json``, each journal's length and the hash of that many bytes (journals
  only grow, so the vault's own journal still holds them).
- ``end.json``: the hash of every file of the vault when the run ended (what a replay
  must end with, byte for byte).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from pydantic_core import to_json

from engine import wallclock
from engine.errors import VaultError
from engine.vault.files import atomic_write_json, make_folder, os_reason, read_json
from engine.vault.journal import LineFile

RUNS: Final = "runs"
CALLS: Final = "calls.jsonl"
EVENTS: Final = "events.jsonl"
DRAWS: Final = "draws.jsonl"
TRAINING: Final = "training.jsonl"
META: Final = "run.json"
END: Final = "end.json"
START: Final = "start"
JOURNALS: Final = "journals.json"
JOURNAL_NAME: Final = "memories.jsonl"
NOT_STATE: Final = frozenset({RUNS, "probes", "logs", ".lock"})
"""Top-level entries of a vault that are not its state (the run records, the probes, the
run log, the lock)."""
CREDENTIALS: Final = frozenset({"config/accounts.md"})
"""Files that are not state either: telnet accounts' password hashes (each with a random
salt), which a replay does not make again and a run record, often shared, must not copy."""


class Tape(LineFile):
    """An append-only JSONL file of a run's record."""

    def append(self, data: dict[str, Any]) -> None:
        """Write ``data`` as one line: compact JSON in UTF-8 (pydantic-core's encoder:
        a prompt of some 8 KB, on the tape at every call, in a quarter of ``json``'s
        time; a float may read ``0.00001`` where ``json`` writes ``1e-05``)."""
        self.append_line(to_json(data) + b"\n")


def read_tape(path: Path) -> list[dict[str, Any]]:
    """A tape's objects, in order; a torn last line (a kill mid-write) is left out, any
    other line that does not read is a ``VaultError`` naming the file and line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise VaultError(f"cannot read {path}: {os_reason(exc)}") from exc
    lines = data.split(b"\n")
    found: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            if number == len(lines):  # the last, with no newline: a torn write
                break
            raise VaultError(f"{path}, line {number}, does not read: {exc}") from exc
        if not isinstance(value, dict):
            raise VaultError(f"{path}, line {number}, is not a JSON object")
        found.append(value)
    return found


def state_files(vault: Path) -> Iterator[Path]:
    """Every file of the vault's state (not its run records, run log or lock; no file
    left by an interrupted write), in a stable order."""
    for path in sorted(vault.rglob("*")):
        relative = path.relative_to(vault)
        if relative.parts[0] in NOT_STATE or not path.is_file():
            continue
        if relative.as_posix() in CREDENTIALS:
            continue
        if path.name.startswith(".") and path.name.endswith(".tmp"):
            continue
        yield path


def manifest(vault: Path) -> dict[str, str]:
    """Relative path -> sha256 of every state file."""
    return {str(path.relative_to(vault)): _sha256(path) for path in state_files(vault)}


def file_sha256(path: Path) -> str | None:
    """The sha256 of a file (None when it cannot be read)."""
    try:
        return _sha256(path)
    except OSError:
        return None


def _sha256(path: Path, length: int | None = None) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        remaining = length
        while chunk := file.read(1 << 20 if remaining is None else min(1 << 20, remaining)):
            digest.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
                if remaining <= 0:
                    break
    return digest.hexdigest()


class RunFolder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def id(self) -> str:
        return self.folder.name

    @classmethod
    def create(cls, vault: Path, kind: str) -> RunFolder:
        """A new ``runs/<UTC time>-<kind>`` folder (``-2``, ``-3`` ... on a clash)."""
        base = f"{wallclock.now():%Y%m%d-%H%M%S}-{kind}"
        runs = vault / RUNS
        suffix = 1
        while (folder := runs / (base if suffix == 1 else f"{base}-{suffix}")).exists():
            suffix += 1
        try:
            make_folder(folder)
        except VaultError:
            raise
        except OSError as exc:
            raise VaultError(f"cannot make {folder}: {os_reason(exc)}") from exc
        return cls(folder)

    def tape(self, name: str) -> Tape:
        return Tape(self.folder / name)

    def read(self, name: str) -> list[dict[str, Any]]:
        return read_tape(self.folder / name)

    def write_meta(self, meta: dict[str, Any]) -> None:
        _write_json(self.folder / META, meta)

    def meta(self) -> dict[str, Any]:
        value = read_json(self.folder / META)
        if not isinstance(value, dict):
            raise VaultError(f"{self.folder / META} is not a run record")
        return value

    # -- the start and the end --------------------------------------------------------------

    def save_start(self, vault: Path, world_file: Path | None) -> None:
        """Keep what restores the vault as it is now (see the module)."""
        start = self.folder / START
        journals: dict[str, dict[str, Any]] = {}
        try:
            for path in state_files(vault):
                relative = path.relative_to(vault)
                if path.name == JOURNAL_NAME:
                    size = path.stat().st_size
                    journals[str(relative)] = {"bytes": size, "sha256": _sha256(path, size)}
                    continue
                target = start / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
            start.mkdir(parents=True, exist_ok=True)
            if world_file is not None and world_file.is_file():
                shutil.copyfile(world_file, self.folder / "world.yaml")
        except OSError as exc:
            raise VaultError(
                f"cannot keep the start of the run in {start}: {os_reason(exc)}"
            ) from exc
        _write_json(start / JOURNALS, journals)

    def restore_start(self, source_vault: Path, target: Path) -> None:
        """Make ``target`` the vault as this run found it: the kept files, and each
        journal's first bytes from ``source_vault`` (checked against their hash)."""
        start = self.folder / START
        if not start.is_dir():
            raise VaultError(f"{self.folder} kept no start (it was recorded with record: false?)")
        journals = read_json(start / JOURNALS)
        if not isinstance(journals, dict):
            raise VaultError(f"{start / JOURNALS} is not a list of journals")
        try:
            shutil.copytree(start, target, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns(JOURNALS))  # fmt: skip
            for relative, facts in journals.items():
                source, size = source_vault / relative, int(facts["bytes"])
                if not source.is_file() or source.stat().st_size < size:
                    raise VaultError(f"{source} is shorter than when the run began: cannot replay")
                if _sha256(source, size) != facts["sha256"]:
                    raise VaultError(f"{source} was changed since the run began: cannot replay")
                (target / relative).parent.mkdir(parents=True, exist_ok=True)
                with source.open("rb") as src, (target / relative).open("wb") as dst:
                    remaining = size
                    while remaining > 0 and (chunk := src.read(min(1 << 20, remaining))):
                        dst.write(chunk)
                        remaining -= len(chunk)
        except OSError as exc:
            raise VaultError(
                f"cannot restore the start of the run in {target}: {os_reason(exc)}"
            ) from exc

    def save_end(self, vault: Path) -> None:
        _write_json(self.folder / END, manifest(vault))

    def end(self) -> dict[str, str] | None:
        path = self.folder / END
        if not path.is_file():
            return None
        value = read_json(path)
        return value if isinstance(value, dict) else None


def runs(vault: Path) -> list[RunFolder]:
    """The vault's run records, oldest first (by when each began: two begun in the same
    second have names that do not sort by time)."""
    folder = vault / RUNS
    if not folder.is_dir():
        return []
    found = [RunFolder(p) for p in folder.iterdir() if (p / META).is_file()]
    return sorted(found, key=lambda run: (_started(run), run.id))


def _started(run: RunFolder) -> str:
    try:
        started = run.meta().get("started")
    except (OSError, VaultError):
        return ""
    return started if isinstance(started, str) else ""


def _write_json(path: Path, data: Any) -> None:
    try:
        atomic_write_json(path, data)
    except OSError as exc:
        raise VaultError(f"cannot write {path}: {os_reason(exc)}") from exc


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
