"""A sweep stopped half-way and started again: killed with SIGKILL, or stopped by one or
two Ctrl-Cs. Each time no run is counted twice and none is lost: the finished ones are
kept untouched (their ``result.json`` byte for byte), the rest run again from nothing,
and no worker outlives the sweep."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock
from helpers import mudsim_env
from test_sweep_support import (
    alive,
    descendants,
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
TURNS = 2


def _setup(tmp_path: Path, url: str) -> tuple[Path, Path]:
    return write_sweep(tmp_path, sweep_text(url, turns=TURNS, seeds="3")), tmp_path / "out"


def _in_own_group(*argv: object) -> subprocess.Popen[str]:
    """The sweep as a terminal runs it: the leader of its own process group, so a Ctrl-C
    (SIGINT to the whole group) reaches it and whatever stayed in its group."""
    from helpers import REPO, mudsim_command

    return subprocess.Popen(mudsim_command("sweep", *argv), cwd=REPO, text=True,
                            env=mudsim_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip


def _read_until(process: subprocess.Popen[str], start: str) -> str:
    """The process's stderr up to and with the first line beginning with ``start``."""
    assert process.stderr is not None
    read = ""
    for line in process.stderr:
        read += line
        if line.startswith(start):
            return read
    raise AssertionError(f"no line began with {start!r}: {read}")


def _check_complete(out: Path, kept: dict[str, bytes]) -> None:
    """Every run finished once: the kept ones untouched, one record per vault, nothing
    partial left."""
    rows = results(out)
    assert len(rows) == RUNS
    assert len({r["run_key"] for r in rows}) == RUNS
    assert all(r["status"] == "finished" and r["attempt"] == 1 for r in rows)
    now = finished_results(out)
    assert {key: now[key] for key in kept} == kept
    for row in rows:
        folder = out / "runs" / row["run_key"]
        assert not (folder / "vault.partial").exists()
        records = [p for p in (folder / "vault" / "runs").iterdir() if p.name.endswith("-run")]
        assert len(records) == 1, "a run counted twice, or merged with a half run"
        assert row["turns"] == 3 * TURNS


def test_a_killed_sweep_resumes_and_counts_every_run_once(tmp_path: Path) -> None:
    with prompt_stub(delay=0.05) as stub:
        path, out = _setup(tmp_path, stub.url)
        first = sweep_process(path, "--out", out, "--workers", "2")
        assert wait_until(lambda: len(finished_results(out)) >= 2, timeout=45)
        workers = descendants(first.pid)
        first.kill()
        first.communicate()
        assert workers, "the pool had started its workers"
        assert wait_until(lambda: not any(alive(pid) for pid in workers), timeout=10), (
            "a worker outlived the sweep killed with SIGKILL")  # fmt: skip
        kept = finished_results(out)
        assert 2 <= len(kept) < RUNS
        stub.delay = 0.0  # the rest may go fast
        second = sweep_process(path, "--out", out, "--workers", "2")
        _said, err = second.communicate(timeout=55)
        assert second.returncode == 0, err
        assert f"Sweep: {RUNS} runs: {RUNS} finished ({len(kept)} before this start)" in err
        _check_complete(out, kept)


def test_a_first_ctrl_c_lets_runs_in_progress_finish_and_starts_no_more(tmp_path: Path) -> None:
    with prompt_stub(delay=0.05) as stub:
        path, out = _setup(tmp_path, stub.url)
        first = _in_own_group(path, "--out", out, "--workers", "2")
        assert wait_until(lambda: len(finished_results(out)) >= 1, timeout=45)
        os.killpg(first.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        _, err = first.communicate(timeout=50)
        assert first.returncode == 130, err
        assert "mudsim: stopping: letting " in err
        assert err.rstrip().splitlines()[-1].startswith("mudsim: stopped with ")
        kept = finished_results(out)
        started = [line for line in err.splitlines() if line.startswith("sweep: ")]
        assert len(kept) == len(started) < RUNS  # every run begun finished; none failed
        assert all(r["status"] == "finished" for r in results(out))
        stub.delay = 0.0  # the rest may go fast
        second = sweep_process(path, "--out", out)
        _, err = second.communicate(timeout=55)
        assert second.returncode == 0, err
        _check_complete(out, kept)


def test_a_second_ctrl_c_stops_the_runs_at_once(tmp_path: Path) -> None:
    with prompt_stub(delay=0.3) as stub:
        path, out = _setup(tmp_path, stub.url)
        first = _in_own_group(path, "--out", out, "--workers", "2")
        assert wait_until(lambda: len(list(out.glob("runs/*/vault.partial"))) >= 2, timeout=45)
        workers = descendants(first.pid)
        os.killpg(first.pid, signal.SIGINT)
        said = _read_until(first, "mudsim: stopping: ")  # the first was seen: now the second
        os.killpg(first.pid, signal.SIGINT)
        _, err = first.communicate(timeout=20)
        err = said + err
        assert first.returncode == 130, err
        assert err.rstrip().splitlines()[-1] == "mudsim: interrupted"
        assert wait_until(lambda: not any(alive(pid) for pid in workers), timeout=10)
        kept = finished_results(out)
        assert len(kept) < RUNS
        stub.delay = 0.0  # the rest may go fast
        second = sweep_process(path, "--out", out, "--workers", "2")
        _, err = second.communicate(timeout=55)
        assert second.returncode == 0, err
        _check_complete(out, kept)


def test_a_run_of_a_world_file_since_changed_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(
        tmp_path, sweep_text("fake:look", turns=1, seeds="1", grid="  model: [tiny]\n")
    )
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out), "--workers", "1"]) == 0
    before = finished_results(out)
    assert main(["sweep", str(path), "--out", str(out)]) == 0  # nothing changed: nothing runs
    assert "1 finished (1 before this start)" in capsys.readouterr().err
    world = tmp_path / "world.yaml"
    world.write_text(world.read_text().replace("A muddy yard", "A dry yard"), encoding="utf-8")
    assert main(["sweep", str(path), "--out", str(out), "--workers", "1"]) == 0
    assert "1 finished (0 before this start)" in capsys.readouterr().err
    after = finished_results(out)
    assert after.keys() == before.keys()  # the same key (the same settings and seed) ...
    assert after != before  # ... run again with the new world
    [row] = results(out)
    assert row["attempt"] == 1


def test_an_out_that_is_taken_or_not_a_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(
        tmp_path, sweep_text("fake:look", turns=1, seeds="1", grid="  model: [tiny]\n")
    )
    out = tmp_path / "out"
    (out / "runs").mkdir(parents=True)
    with FileLock(out / ".sweep.lock"):  # another sweep owns it
        assert main(["sweep", str(path), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"mudsim: another sweep is running in {out} (lock file {out / '.sweep.lock'}); wait "
        "for it, or give another --out\n")  # fmt: skip
    assert not list((out / "runs").iterdir())
    afile = tmp_path / "a-file"
    afile.write_text("")
    assert main(["sweep", str(path), "--out", str(afile)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mudsim: cannot use {afile} as --out: ")
    assert err.count("\n") == 1
