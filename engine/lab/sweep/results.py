"""A sweep's results table: one row per run, written as ``OUT/results.parquet`` (with the
``analysis`` extra: pyarrow) and ``OUT/results.csv`` (always), and read back.

A row is ``run_key``, ``world``, ``seed``, one column per setting under the setting's own
name (empty where a run does not set it), the run's figures (``engine.lab.sweep.metrics``),
what made it (``llm_url``, secrets removed, ``llm_model``, ``mudsim_version`` and
``git_commit``), then ``status`` (finished or failed), ``error`` and ``attempt``. A failed
run's figures are empty; a finished run that made no call of some kind has 0 there.

The table is rewritten (atomically, each file) as each run ends, so a sweep killed
half-way leaves a table of every run that ended before it.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from engine.errors import MissingExtraError, UsageError, VaultError
from engine.lab.export import pyarrow, write_parquet
from engine.lab.sweep.identity import llm_models, llm_url
from engine.lab.sweep.store import Result
from engine.vault.files import atomic_write_text

PARQUET: Final = "results.parquet"
CSV: Final = "results.csv"
IDENTITY: Final = ("run_key", "world", "seed")
PROVENANCE: Final = ("llm_url", "llm_model", "model_digest", "mudsim_version", "git_commit",
                     "git_dirty")  # fmt: skip
TRAILER: Final = ("status", "error", "attempt")
ORDER: Final = ("turns", "turns_skipped", "calls", "calls_*", "call_failures", "retries",
                "tokens_in", "tokens_out", "llm_seconds", "seconds", "memories", "compactions",
                "compaction_lag_max", "compaction_lag_mean", "knowledge_entries", "probe_*")  # fmt: skip
"""The figures' columns in this order (``calls_*``, ``probe_*``: those found, sorted)."""
NEEDS_PYARROW: Final = "results.parquet needs pyarrow: pip install 'mudsim[analysis]'"


def metric_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    found = [name for name in dict.fromkeys(name for row in rows for name in row)
             if name not in PROVENANCE]  # fmt: skip
    columns: list[str] = []
    for name in ORDER:
        if name.endswith("*"):
            columns += sorted(n for n in found if n.startswith(name[:-1]))
        elif name in found:
            columns.append(name)
    return columns + [n for n in found if n not in columns]


def rows_of(results: Sequence[Result], settings: Sequence[str]) -> list[dict[str, Any]]:
    """The table's rows, in ``results``' order, each with every column."""
    metrics = metric_columns([r.outcome.metrics for r in results])
    rows = []
    for result in results:
        run, outcome = result.run, result.outcome
        row: dict[str, Any] = {"run_key": run.key, "world": run.world, "seed": run.seed}
        row |= {name: _cell(run.settings.get(name)) for name in settings}
        finished = outcome.status == "finished"
        for name in metrics:
            value = outcome.metrics.get(name)
            row[name] = 0 if value is None and finished and name.startswith("calls_") else value
        made = result.fingerprint or {}
        row |= {"llm_url": llm_url(made), "llm_model": llm_models(made),
                "model_digest": outcome.metrics.get("model_digest"), "mudsim_version": made.get("mudsim"),
                "git_commit": result.commit, "git_dirty": result.dirty}  # fmt: skip
        row |= {"status": outcome.status, "error": outcome.error, "attempt": result.attempt}
        rows.append(row)
    return rows


def _cell(value: Any) -> Any:
    """A setting's value as one cell (a list, such as tags, as JSON text)."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value


def write_results(out: Path, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write both files, each atomically (Parquet only with pyarrow, and first: the CSV
    is the last word, so the Parquet table never holds fewer runs); what was written,
    or why not."""
    try:
        write_parquet(rows, list(rows[0]) if rows else [], out / PARQUET)
    except MissingExtraError:
        atomic_write_text(out / CSV, _csv_text(rows))
        return [str(out / CSV), NEEDS_PYARROW]
    atomic_write_text(out / CSV, _csv_text(rows))
    return [str(out / PARQUET), str(out / CSV)]


def _csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buffer.getvalue()


def read_results(out: Path) -> list[dict[str, Any]]:
    """The rows of ``OUT/results.parquet`` (with pyarrow), else of ``results.csv``
    (numbers read back as numbers, empty cells as None)."""
    parquet, text = out / PARQUET, out / CSV
    if parquet.is_file():
        try:
            _pa, pq = pyarrow()
        except MissingExtraError:
            pass
        else:
            try:
                rows: list[dict[str, Any]] = pq.read_table(parquet).to_pylist()
            except (OSError, ValueError) as exc:
                raise VaultError(f"cannot read {parquet}: {exc}") from exc
            return rows
    if not text.is_file():
        raise UsageError(f"{out} holds no sweep results ({CSV}); give the --out of a sweep")
    try:
        with text.open(encoding="utf-8", newline="") as handle:
            return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(handle)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise VaultError(f"cannot read {text}: {exc}") from exc


def _number(text: str | None) -> Any:
    if text is None or text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return {"True": True, "False": False}.get(text, text)
