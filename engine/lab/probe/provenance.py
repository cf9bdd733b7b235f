"""Which runs a probe is about, and each agent's journal as it stood at a run's end
(reads the vault, writes nothing).

A run record of any kind counts (``run``, ``do``, ``play``, ``fork``, ``replay``): a
forked or replayed vault is probed like any other. Each record's ``start/journals.json``
holds every journal's length when that record began; journals only grow, and a memory's
seq is its line. A record's ``run.json`` names each character's journal length at its
end (``journals_end``); an older record without it ends, in each journal, where the
next record began (the first that many bytes' lines), or, the latest, with the journal
as it is now.

The vault's hash (``vault_sha256``) is the sha256 of its state manifest (every state
file's path and sha256, ``engine.vault.run_store.manifest``), so a frozen question set
says exactly which state it was drawn from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.errors import UnknownRunError
from engine.memory.record import MemoryRecord
from engine.vault.files import read_json
from engine.vault.run_store import JOURNALS, RUNS, START, RunFolder, manifest, runs

ALL = "all"


def chosen_runs(vault: Path, wanted: Sequence[str], every: bool = False) -> list[RunFolder]:
    """The records the probe is about, oldest first: ``every`` one, the ``wanted`` ids
    (each exact or a unique beginning), else the latest record of any kind."""
    found = runs(vault)
    if not found:
        raise UnknownRunError(f"{vault} has no recorded run (a `mudsim run` makes one)")
    if every:
        return found
    if not wanted:
        return [found[-1]]
    chosen: list[RunFolder] = []
    for run_id in wanted:
        exact = [r for r in found if r.id == run_id]
        matches = exact or [r for r in found if r.id.startswith(run_id)]
        if len(matches) != 1:
            raise UnknownRunError(f"{vault} has no run record {run_id!r}" if not matches else
                                  f"--run {run_id} could be {', '.join(r.id for r in matches)}")  # fmt: skip
        if matches[0] not in chosen:
            chosen.append(matches[0])
    return sorted(chosen, key=found.index)


def journal_ends(vault: Path, run: RunFolder,
                 folders: Mapping[str, str]) -> dict[str, int] | None:  # fmt: skip
    """Character name -> how many memories its journal held when ``run`` ended: the
    record's own ``journals_end`` when it has one, else where the next record began
    (``folders``: name -> its journal's path in the vault); None: the latest record
    without an end of its own, whose end is every journal as it is now."""
    named = _meta(run).get("journals_end")
    if isinstance(named, dict) and named:
        return {str(name): int(value) for name, value in named.items() if isinstance(value, int)}
    ids = [r.id for r in runs(vault)]
    later = ids[ids.index(run.id) + 1 :] if run.id in ids else []
    if not later:
        return None
    lengths = read_json(vault / RUNS / later[0] / START / JOURNALS)
    if not isinstance(lengths, dict):
        return None
    ends = {}
    for name, relative in folders.items():
        facts = lengths.get(relative)
        size = int(facts["bytes"]) if isinstance(facts, dict) else 0
        ends[name] = _lines(vault / relative, size)
    return ends


def is_latest(vault: Path, run: RunFolder) -> bool:
    found = runs(vault)
    return bool(found) and found[-1].id == run.id


def cut(records: Sequence[MemoryRecord], end: int | None) -> list[MemoryRecord]:
    """The memories made before the journal held ``end`` (None: all of them)."""
    return list(records) if end is None else [r for r in records if r.seq < end]


def vault_sha256(vault: Path) -> str:
    """The sha256 of the vault's state manifest."""
    text = json.dumps(manifest(vault), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _meta(run: RunFolder) -> dict[str, Any]:
    try:
        return run.meta()
    except (OSError, ValueError):
        return {}


def _lines(path: Path, size: int) -> int:
    """Whole lines in the first ``size`` bytes of ``path`` (0 when it is missing)."""
    if size <= 0 or not path.is_file():
        return 0
    with path.open("rb") as file:
        return file.read(size).count(b"\n")
