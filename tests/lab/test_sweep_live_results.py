"""The results table grows as runs end: a sweep killed with SIGKILL half-way leaves
``results.csv`` and ``results.parquet`` with every run that ended before it, and
``sweep report`` reports on them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from test_sweep_support import (
    finished_results,
    prompt_stub,
    results,
    sweep_process,
    sweep_text,
    wait_until,
    write_sweep,
)

from engine.cli import main

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

RUNS = 6


def finished_rows(out: Path) -> list[dict[str, str]]:
    """The finished rows of ``OUT/results.csv`` as it is now (none before it exists)."""
    try:
        with (out / "results.csv").open(encoding="utf-8", newline="") as handle:
            return [row for row in csv.DictReader(handle) if row["status"] == "finished"]
    except FileNotFoundError:
        return []


def test_a_killed_sweep_leaves_a_table_of_the_runs_that_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with prompt_stub(delay=0.05) as stub:
        path = write_sweep(tmp_path, sweep_text(stub.url, turns=2, seeds="3"))
        out = tmp_path / "out"
        first = sweep_process(path, "--out", out, "--workers", "1")
        assert wait_until(lambda: len(finished_rows(out)) >= 2, timeout=45), (
            "the table was not written as runs ended")  # fmt: skip
        first.kill()
        first.communicate()
    assert first.returncode != 0
    ended = finished_results(out)  # what had ended when it was killed
    rows = results(out)  # the Parquet table too
    assert 2 <= len(rows) <= len(ended) < RUNS
    assert {r["run_key"] for r in rows} <= set(ended)
    assert all(r["status"] == "finished" and r["turns"] == 3 * 2 for r in rows)
    assert main(["sweep", "report", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"Sweep {out}: {len(rows)} runs ({len(rows)} finished, 0 failed)")
    assert "\nturns\n" in said
