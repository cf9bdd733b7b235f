"""Reading a vault's run records and journals for the lab (read only: nothing here
writes to a vault, and nothing here takes the vault's lock, so a running simulation
can be read while it runs).

A run is picked by its id (its folder's name under ``runs/``) or a unique beginning of
it; by default the latest. ``replay`` and ``fork`` take a run's folder or a vault
(``run_source``). A torn last line of a tape is left out (``read_tape``); any
other line that does not read stops with a ``VaultError`` naming the file and line.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.errors import UnknownRunError, UsageError, VaultError
from engine.lab.export_rows import RunWindow
from engine.memory.record import MemoryRecord
from engine.vault.files import os_reason, read_front_matter
from engine.vault.journal_reader import read_records
from engine.vault.run_store import META, RUNS, RunFolder, runs

SHOWN_IDS = 5
"""How many run ids an unknown ``--run`` lists."""


def find_run(vault: Path, run_id: str | None) -> RunFolder:
    """The run called ``run_id`` (or the only one whose id begins so), else the latest."""
    if not vault.is_dir():
        raise VaultError(f"{vault} is not a vault (no such folder)")
    found = runs(vault)
    if not found:
        raise UnknownRunError(
            f"{vault / RUNS} holds no recorded run (mudsim run, do and play record one)"
        )
    if run_id is None:
        return found[-1]
    exact = [run for run in found if run.id == run_id]
    matches = exact or [run for run in found if run.id.startswith(run_id)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UnknownRunError(f"--run {run_id} could be {_listed(matches)}; give more of the id")
    raise UnknownRunError(f"no run {run_id!r} in {vault / RUNS}; the latest: {_listed(found)}")


def run_source(source: Path, run_id: str | None) -> Path:
    """The run folder that ``source`` names: a run's own folder (``vault/runs/<id>``, its
    ``run.json`` inside), or a vault, whose run called ``run_id`` it is (by default its
    latest, of any kind); anything else is one line (exit 2)."""
    if (source / META).is_file():
        if run_id is not None:
            raise UsageError(f"--run {run_id}: {source} is one run's folder already; give "
                             "its vault to pick a run by id")  # fmt: skip
        return source
    if not source.is_dir():
        raise VaultError(f"{source}: no such run folder or vault")
    return find_run(source, run_id).folder


def _listed(found: list[RunFolder]) -> str:
    newest = [run.id for run in reversed(found)][:SHOWN_IDS]
    more = f" (and {len(found) - SHOWN_IDS} more)" if len(found) > SHOWN_IDS else ""
    return ", ".join(newest) + more


def run_meta(run: RunFolder) -> dict[str, Any]:
    """The run's ``run.json`` (read fresh: a running run rewrites it at its end)."""
    path = run.folder / META
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
        raise VaultError(f"cannot read {path}: {reason}") from exc
    except (ValueError, RecursionError) as exc:
        raise VaultError(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise VaultError(f"{path} is not a run record")
    return value


def prices(meta: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Endpoint URL -> (price per million tokens in, out), from the run's settings."""
    settings = meta.get("settings")
    llm = settings.get("llm") if isinstance(settings, dict) else None
    endpoints = llm.get("endpoints") if isinstance(llm, dict) else None
    found: dict[str, tuple[float, float]] = {}
    for endpoint in endpoints if isinstance(endpoints, list) else []:
        if isinstance(endpoint, dict) and isinstance(endpoint.get("url"), str):
            found[endpoint["url"]] = (float(endpoint.get("price_in") or 0.0),
                                      float(endpoint.get("price_out") or 0.0))  # fmt: skip
    return found


def window(run: RunFolder, meta: Mapping[str, Any],
           following: Mapping[str, Any] | None = None) -> RunWindow:  # fmt: skip
    """When the run took place, and which seqs of each journal it recorded (from its
    ``journals_start`` and ``journals_end``; a run with no end ends where the run
    ``following`` it began)."""
    started, ended = meta.get("started"), meta.get("ended")
    start, end = _lengths(meta.get("journals_start")), _lengths(meta.get("journals_end"))
    ranges: dict[str, tuple[int, int | None]] | None = None
    if start is not None:
        after = _lengths((following or {}).get("journals_start")) or {}
        stop = end if end is not None else after
        ranges = {name: (start.get(name, 0), stop.get(name)) for name in set(start) | set(stop)}
    return RunWindow(run.id, started if isinstance(started, str) else "",
                     ended if isinstance(ended, str) else None, ranges)  # fmt: skip


def _lengths(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int)}


def windows(vault: Path) -> list[RunWindow]:
    """Each recorded run's window, oldest first."""
    metas = [(run, run_meta(run)) for run in runs(vault)]
    return [window(run, meta, metas[i + 1][1] if i + 1 < len(metas) else None)
            for i, (run, meta) in enumerate(metas)]  # fmt: skip


def journals(vault: Path) -> dict[str, list[MemoryRecord]]:
    """Agent name -> the records of its journal, for every agent folder with one (the
    name from its ``agent.md``, else the folder's)."""
    agents = vault / "agents"
    found: dict[str, list[MemoryRecord]] = {}
    if not agents.is_dir():
        return found
    for folder in sorted(p for p in agents.iterdir() if (p / "memories.jsonl").is_file()):
        found[_agent_name(folder)] = read_records(folder / "memories.jsonl", warn=_warn)
    return found


def _agent_name(folder: Path) -> str:
    try:
        meta, _ = read_front_matter(folder / "agent.md")
    except (OSError, VaultError):
        return folder.name
    name = meta.get("name")
    return name if isinstance(name, str) and name else folder.name


def _warn(message: str) -> None:
    print(f"mudsim: {message}", file=sys.stderr)
