"""``mudsim sweep`` on the local process pool, end to end against the loopback stub: the
runs, their vaults and records, the results read back with pyarrow, the dry run, a
failing run, a worker that dies, and the same sweep twice giving the same results."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sweep_support import (
    PromptStub,
    finished_results,
    prompt_stub,
    results,
    sweep_text,
    without_timings,
    write_sweep,
)

from engine.cli import main
from engine.lab.sweep.executor import InProcess
from engine.lab.sweep.pool import PoolExecutor
from engine.lab.sweep.run import RunTask
from engine.lab.sweep.store import Outcome
from engine.lab.sweep.sweep import SweepOptions, run_sweep
from engine.vault.run_store import read_tape

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default


@pytest.fixture
def stub() -> Iterator[PromptStub]:
    with prompt_stub() as server:
        yield server


def sweep(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main(["sweep", *(str(a) for a in argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_four_run_sweep_on_the_process_pool(
    stub: PromptStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text(stub.url, turns=2, seeds="2"))
    out = tmp_path / "out"
    code, said, err = sweep(capsys, path, "--out", out, "--workers", "2")
    assert code == 0, err
    assert said == ""  # the runs' narratives go to their folders, never the sweep's terminal
    progress = [line for line in err.splitlines() if line.startswith("sweep: ")]
    assert len(progress) == 4
    assert progress[-1].startswith("sweep: 4/4 done, 0 running, 0 failed")
    assert "Sweep: 4 runs: 4 finished (0 before this start), 0 failed, 0 not run." in err
    rows = results(out)
    assert [r["model"] for r in rows] == ["tiny", "small", "tiny", "small"]
    assert [r["seed"] for r in rows] == [0, 0, 1, 1]
    assert list(rows[0])[:5] == ["run_key", "world", "seed", "model", "turns"]
    assert list(rows[0])[-3:] == ["status", "error", "attempt"]
    for row in rows:
        assert row["status"] == "finished"
        assert row["error"] is None
        assert row["attempt"] == 1
        folder = out / "runs" / row["run_key"]
        assert not (folder / "vault.partial").exists()
        [record] = [p for p in (folder / "vault" / "runs").iterdir() if p.name.endswith("-run")]
        calls = read_tape(record / "calls.jsonl")
        assert {c["model"] for c in calls if c["kind"] == "turn"} == {row["model"]}
        assert row["turns"] == 3 * 2  # three agents, two turns each
        assert row["calls"] == len(calls)
        assert row["calls_turn"] == sum(1 for c in calls if c["kind"] == "turn") >= 6
        assert row["tokens_in"] == sum(c["prompt_tokens"] for c in calls) > 0
        assert row["tokens_out"] == sum(c["completion_tokens"] for c in calls) > 0
        journals = [(folder / "vault" / "agents" / n / "memories.jsonl").read_text()
                    for n in ("Ada", "Bo", "Cy")]  # fmt: skip
        assert row["memories"] == sum(text.count("\n") for text in journals)
        assert row["knowledge_entries"] == 0
        assert row["compaction_lag_max"] == 0
        assert row["seconds"] > 0
        assert "[The Hall]" in (folder / "narrative.txt").read_text()
        assert json.loads((folder / "result.json").read_text())["status"] == "finished"
    plan = json.loads((out / "plan.json").read_text())
    assert [r["key"] for r in plan["runs"]] == [r["run_key"] for r in rows]
    assert (out / "results.csv").read_text().splitlines()[0].startswith("run_key,world,seed,model,")


def test_a_dry_run_lists_each_run_key_first_and_writes_nothing(
    stub: PromptStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text(stub.url, seeds="[3, 4]",
                                            grid="  model: [tiny]\n  recent_window: [8, 16]\n"))  # fmt: skip
    out = tmp_path / "out"
    code, said, err = sweep(capsys, path, "--out", out, "--dry-run")
    assert code == 0, err
    lines = said.splitlines()
    assert len(lines) == 4
    assert lines[0].split("  ")[1] == "world=world.yaml seed=3 model=tiny recent_window=8"
    assert all(line.split()[0].startswith("world_model=tiny_recent_window=") for line in lines)
    assert err == "mudsim: 4 runs: 0 finished, 0 failed, 4 to run (dry run: nothing was run)\n"
    assert not out.exists()
    assert stub.calls == 0


def test_a_failing_run_is_recorded_and_the_others_finish(
    stub: PromptStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text(stub.url, seeds="1",
                                            grid="  model: [tiny, missing, small]\n"))  # fmt: skip
    out = tmp_path / "out"
    code, _, err = sweep(capsys, path, "--out", out, "--workers", "2")
    assert code == 1
    assert err.splitlines()[-1] == (
        "mudsim: 1 of 3 runs failed (their errors are in the results); run the same command "
        "again to retry them")  # fmt: skip
    rows = {r["model"]: r for r in results(out)}
    assert rows["tiny"]["status"] == rows["small"]["status"] == "finished"
    failed = rows["missing"]
    assert failed["status"] == "failed"
    assert failed["error"].startswith(f"model 'missing' is not on {stub.url}")
    assert failed["turns"] is None
    assert failed["calls_turn"] is None
    kept = finished_results(out)
    assert set(kept) == {rows["tiny"]["run_key"], rows["small"]["run_key"]}
    # again: the failed run runs again (and fails again), the finished ones are kept as they were
    code, _, err = sweep(capsys, path, "--out", out)
    assert code == 1
    assert "Sweep: 3 runs: 2 finished (2 before this start), 1 failed, 0 not run." in err
    assert finished_results(out) == kept
    assert {r["model"]: r["attempt"] for r in results(out)} == {"tiny": 1, "missing": 2, "small": 1}
    # --skip-failed keeps the failure as it is
    code, _, err = sweep(capsys, path, "--out", out, "--skip-failed")
    assert code == 1
    assert "sweep: " not in err  # nothing ran
    assert {r["model"]: r["attempt"] for r in results(out)} == {"tiny": 1, "missing": 2, "small": 1}


def test_an_unreachable_llm_is_exit_3_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text("http://127.0.0.1:9"))
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out")
    assert code == 3
    assert err.startswith("mudsim: cannot reach the LLM at http://127.0.0.1:9")
    assert err.count("\n") == 1  # that line alone: no run was started
    assert not list((tmp_path / "out" / "runs").iterdir())


def test_runs_that_name_a_model_with_no_server_are_one_line_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46: with no `llm` and nothing at the default URL, the preflight fell back
    to the embedded model, so each run that names a model failed on its own: 12
    near-identical FAILED lines and exit 1."""
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", 11434)) == 0:
            pytest.skip("a server answers at the default URL here")
    monkeypatch.delenv("MUDSIM_LLM_URL")
    path = write_sweep(tmp_path, "world: world.yaml\nturns: 1\nseeds: 2\ngrid:\n"
                                 "  model: [tiny, small]\n")  # fmt: skip
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out")
    assert code == 3
    assert err.startswith("mudsim: model 'tiny' was asked for, but no LLM answers at ")
    assert err.count("\n") == 1
    assert not list((tmp_path / "out" / "runs").iterdir())


def test_the_sweep_files_endpoints_win_over_the_environment(
    stub: PromptStub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (f"world: world.yaml\nturns: 1\nendpoints: [{{url: '{stub.url}', slots: 2}}]\n"
            "runs:\n  - {model: tiny, knowledge: off}\n")  # fmt: skip
    path = write_sweep(tmp_path, text)
    assert os.environ["MUDSIM_LLM_URL"] == "http://127.0.0.1:9"  # conftest: nothing answers
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out", "--workers", "1")
    assert code == 0, err
    [row] = results(tmp_path / "out")
    assert row["knowledge"] == "off"
    assert row["calls"] == row["calls_turn"]  # no knowledge pass at the end of the run
    config = tmp_path / "out" / "runs" / row["run_key"] / "vault" / "config"
    assert stub.url in (config / "llm.md").read_text()
    assert "knowledge: false" in (config / "memory_compaction.md").read_text()


def test_the_same_sweep_twice_gives_the_same_results(stub: PromptStub, tmp_path: Path) -> None:
    grid = "  model: [tiny, small]\n  knowledge: [on, off]\n"
    path = write_sweep(tmp_path, sweep_text(stub.url, turns=3, seeds="[5]", grid=grid))
    environ = {"MUDSIM_LLM_URL": "http://127.0.0.1:9"}
    with open(os.devnull, "w") as quiet:
        first = run_sweep(SweepOptions(path, tmp_path / "a", workers=2), environ, err=quiet)
        second = run_sweep(SweepOptions(path, tmp_path / "b", workers=2), environ, err=quiet)
    assert len(first) == len(second) == 4
    a, b = without_timings(results(tmp_path / "a")), without_timings(results(tmp_path / "b"))
    assert a == b
    assert all(r["status"] == "finished" for r in a)


def quick_worker(task: RunTask) -> Outcome:
    """A worker that makes up its figures (for what the pool does around the runs)."""
    return Outcome(task.key, "finished", {"turns": task.seed})


def dying_worker(task: RunTask) -> Outcome:
    """Its process dies on the run of seed 1, as a crash in native code would."""
    if task.seed == 1:
        os._exit(9)
    return quick_worker(task)


def test_a_worker_that_dies_fails_its_run_and_the_rest_go_on(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="4", grid="  model: [tiny]\n"))
    with open(os.devnull, "w") as quiet:
        found = run_sweep(SweepOptions(path, tmp_path / "out"), {}, err=quiet,
                          executor=PoolExecutor(1, worker=dying_worker))  # fmt: skip
    by_seed = {r.run.seed: r.outcome for r in found}
    assert by_seed[1].status == "failed"
    assert by_seed[1].error is not None
    assert "a worker process died" in by_seed[1].error
    assert {seed: o.status for seed, o in by_seed.items() if seed != 1} == dict.fromkeys(
        (0, 2, 3), "finished")  # fmt: skip
    assert [r["turns"] for r in results(tmp_path / "out")] == [0, None, 2, 3]


def test_with_the_probe_each_row_has_its_accuracies(stub: PromptStub, tmp_path: Path) -> None:
    extra = "probe: {compare: [full, none], per_category: 2}\n"
    path = write_sweep(tmp_path, sweep_text(stub.url, turns=4, seeds="1", grid="  model: [tiny]\n",
                                            extra=extra))  # fmt: skip
    with open(os.devnull, "w") as quiet:
        [found] = run_sweep(SweepOptions(path, tmp_path / "out", workers=1), {}, err=quiet)
    assert found.outcome.status == "finished", found.outcome.error
    [row] = results(tmp_path / "out")
    folder = tmp_path / "out" / "runs" / row["run_key"]
    [report] = (folder / "vault" / "probes").glob("*/report.json")
    configs = json.loads(report.read_text())["configs"]
    assert set(configs) == {"full", "none", "evidence"}  # the reader's ceiling: always asked
    for config, value in configs.items():
        assert row[f"probe_{config}"] == value["overall"]["accuracy"]
        for category, score in value["categories"].items():
            assert row[f"probe_{config}_{category.replace('-', '_')}"] == score["accuracy"]
    assert "Probe " in (folder / "probe.txt").read_text()
    assert row["calls"] == row["calls_turn"] + row.get("calls_extraction", 0)  # not the probe's


def test_without_pyarrow_the_csv_is_written_and_parquet_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if the analysis extra were missing
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = write_sweep(
        tmp_path, sweep_text("fake:look", turns=1, seeds="2", grid="  model: [tiny]\n")
    )
    out = tmp_path / "out"
    found = run_sweep(SweepOptions(path, out), {}, executor=InProcess())
    assert [r.outcome.status for r in found] == ["finished", "finished"]
    err = capsys.readouterr().err
    assert "results.parquet needs pyarrow: pip install 'mudsim[analysis]'" in err
    assert not (out / "results.parquet").exists()
    assert main(["sweep", "report", str(out)]) == 0  # the report reads the CSV instead
    said = capsys.readouterr().out
    assert "\nturns\n  model  n  mean  95% interval\n  tiny   2  3     3 - 3\n" in said
