"""``mudsim export``: one kind of row of a recorded run, written as JSONL, CSV, Parquet
or Markdown (``engine.lab.export_rows`` builds the rows, ``engine.lab.export_formats``
turns them into text; this module reads the run and writes the file).

Parquet needs pyarrow (the ``analysis`` extra); without it the export stops with one
line saying how to install it. Memories belong to the vault, not to one run: every
agent's journal is exported, each record with the run it was recorded in, and
``--run`` keeps only that run's.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from engine.errors import MissingExtraError, UsageError, VaultError
from engine.lab import export_formats, export_rows, run_records
from engine.lab.export_rows import COLUMNS, MADE_BY_COLUMNS, Row, TrainingFilter
from engine.vault.files import atomic_write_text, file_mode, os_reason
from engine.vault.run_store import CALLS, EVENTS, TRAINING

WHATS: Final = tuple(COLUMNS)
FORMATS: Final = ("jsonl", "csv", "parquet", "md")
SUFFIXES: Final[Mapping[str, str]] = {".jsonl": "jsonl", ".csv": "csv", ".parquet": "parquet",
                                      ".md": "md"}  # fmt: skip
PARQUET_HINT: Final = "parquet needs pyarrow: pip install 'mudsim[analysis]'"
STDOUT: Final = Path("-")


@dataclass(frozen=True)
class ExportRequest:
    vault: Path
    what: str
    """One of ``WHATS``."""
    out: Path
    """Where to write (``-``: standard output, not for Parquet)."""
    format: str | None = None
    """One of ``FORMATS``; None: from ``out``'s suffix."""
    run_id: str | None = None
    """The run (an id or its unique beginning); None: the latest (every run for memories)."""
    agent: str | None = None
    """Only this agent's rows (not for events)."""
    training: TrainingFilter = field(default_factory=TrainingFilter)
    chat: bool = False
    """Training as chat conversations (JSONL only)."""


@dataclass(frozen=True)
class Export:
    """What an export holds: the rows (or chat lines), their columns, where from."""

    what: str
    rows: Sequence[Mapping[str, Any]]
    columns: Sequence[str]
    source: str
    """The run's id, or ``every run`` (memories without ``--run``)."""


def check(request: ExportRequest) -> str:
    """The request's format, once it is known to make sense (else a ``UsageError``)."""
    form = request.format or SUFFIXES.get(request.out.suffix.lower())
    if form is None and request.out == STDOUT:
        form = "jsonl"  # standard output: a line a row, for a pipe (issue 46)
    if form is None:
        raise UsageError(f"say --format {'|'.join(FORMATS)} (the suffix of --out does not tell)")
    if request.what != "training":
        given = [flag for flag, on in (
            ("--successful-only", request.training.successful_only),
            ("--verb", request.training.verb is not None),
            ("--min-reply-chars", request.training.min_reply_chars > 0),
            ("--chat", request.chat)) if on]  # fmt: skip
        if given:
            raise UsageError(f"{', '.join(given)} only apply to --what training")
    if request.what == "events" and request.agent is not None:
        raise UsageError("--agent does not apply to --what events (every event of the run)")
    if request.chat and form != "jsonl":
        raise UsageError("--chat writes JSONL: use --format jsonl")
    if form == "parquet" and request.out == STDOUT:
        raise UsageError("parquet cannot go to standard output: give --out a file")
    return form


def collect(request: ExportRequest) -> Export:
    """The rows the request asks for (reads the vault, writes nothing)."""
    what = request.what
    if what == "memories":
        if request.run_id is None:
            run_id = None
            if not request.vault.is_dir():
                raise VaultError(f"{request.vault} is not a vault (no such folder)")
        else:
            run_id = run_records.find_run(request.vault, request.run_id).id
        rows = export_rows.memory_rows(run_records.journals(request.vault),
                                       run_records.windows(request.vault))  # fmt: skip
        if run_id is not None:
            rows = [row for row in rows if row["run"] == run_id]
        return Export(what, _of_agent(rows, request.agent), COLUMNS[what], run_id or "every run")
    run = run_records.find_run(request.vault, request.run_id)
    if what == "events":
        rows = export_rows.event_rows(run.read(EVENTS))
    elif what == "turns":
        rows = export_rows.turn_rows(run.read(EVENTS), run.read(CALLS))
    elif what == "calls":
        rows = export_rows.call_rows(run.read(CALLS))
    else:
        keep = request.training
        if request.agent is not None:
            keep = TrainingFilter(keep.successful_only, request.agent, keep.verb,
                                  keep.min_reply_chars)  # fmt: skip
        rows = export_rows.training_rows(run.read(TRAINING), keep)
        if request.chat:
            return Export(what, export_rows.chat_lines(rows), ("messages",), run.id)
    if what != "events":  # each row says which code made it (a fork's: the fork's)
        meta = run.meta()
        made = {name: export_rows.scalar(meta.get(name)) for name in MADE_BY_COLUMNS}
        rows = [{**row, **made} for row in rows]
    return Export(what, _of_agent(rows, request.agent), COLUMNS[what], run.id)


def _of_agent(rows: list[Row], agent: str | None) -> list[Row]:
    return rows if agent is None else export_rows.of_agent(rows, agent)


def render(export: Export, form: str) -> str:
    """The export as text (JSONL, CSV or Markdown)."""
    if form == "jsonl":
        return export_formats.to_jsonl(export.rows)
    if form == "csv":
        return export_formats.to_csv(export.rows, export.columns)
    title = f"{export.what.capitalize()} of {export.source}"
    return export_formats.to_markdown(export.what, export.rows, title)


def run_export(request: ExportRequest) -> str:
    """Write the export; what was written, in one line ("" when it went to stdout)."""
    form = check(request)
    export = collect(request)
    if form == "parquet":
        write_parquet(export.rows, export.columns, request.out)
    elif request.out == STDOUT:
        sys.stdout.write(render(export, form))
        return ""
    else:
        try:
            atomic_write_text(request.out, render(export, form))
        except OSError as exc:
            raise UsageError(f"cannot write {request.out}: {os_reason(exc)}") from exc
    count = len(export.rows)
    one, many = ("chat conversation", "chat conversations") if request.chat \
        else _NOUNS.get(export.what, (export.what, export.what))  # fmt: skip
    return f"wrote {count} {one if count == 1 else many} of {export.source} to {request.out}"


_NOUNS = {
    "events": ("event", "events"),
    "turns": ("turn", "turns"),
    "calls": ("call", "calls"),
    "memories": ("memory", "memories"),
    "training": ("training pair", "training pairs"),
}
"""What a row of each kind is called, one and many."""


# -- Parquet ----------------------------------------------------------------------------


def pyarrow() -> tuple[Any, Any]:
    """``(pyarrow, pyarrow.parquet)``, or a ``MissingExtraError`` saying how to get them."""
    try:
        return importlib.import_module("pyarrow"), importlib.import_module("pyarrow.parquet")
    except ImportError as exc:
        raise MissingExtraError(PARQUET_HINT) from exc


def write_parquet(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], out: Path) -> None:
    """The rows as a Parquet table, one column each (a column whose values have no one
    Arrow type is kept as text), written atomically."""
    pa, pq = pyarrow()
    arrays = {}
    for column in columns:
        values = [row.get(column) for row in rows]
        try:
            arrays[column] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays[column] = pa.array([None if v is None else str(v) for v in values])
    table = pa.table(arrays)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        os.close(fd)
        try:
            pq.write_table(table, tmp)
            os.chmod(tmp, file_mode())  # mkstemp makes 0600: an export is an ordinary file
            os.replace(tmp, out)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {os_reason(exc)}") from exc
