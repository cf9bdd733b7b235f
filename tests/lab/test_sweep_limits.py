"""What a sweep refuses before it starts, and what it stops once started: a model option
out of range (one line, exit 2, its run key keeping the sign), a plan larger than
``--max-runs`` (counted, never made), and a run past the sweep file's ``timeout``
(failed, "timed out after N s", while the sweep goes on)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sweep_support import results, sweep_text, write_sweep

from engine.cli import main
from engine.lab.sweep.file import load_sweep_file
from engine.lab.sweep.plan import run_count, run_key
from engine.llm.stub_server import FaultSchedule, StubOllama

NUM_CTX = "llm.profiles.actor.options.num_ctx"


def sweep(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main(["sweep", *(str(a) for a in argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_negative_num_ctx_is_one_line_and_nothing_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = f"  {NUM_CTX}: [4096, -5]\n"
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="1", grid=grid))
    out = tmp_path / "out"
    code, said, err = sweep(capsys, path, "--out", out)
    assert code == 2
    assert said == ""
    assert err == (f"mudsim: {path}, line 6, grid.{NUM_CTX}[1]: num_ctx is a whole number of "
                   "at least 1, not -5\n")  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [("top_p", 1.5, "top_p is a number from 0 to 1, not 1.5"),
     ("temperature", -0.1, "temperature is a number of at least 0, not -0.1"),
     ("num_predict", -3, "num_predict is a whole number of at least -2")],
)  # fmt: skip
def test_other_model_options_out_of_range_are_refused(
    tmp_path: Path, option: str, value: float, words: str
) -> None:
    grid = f"  llm.profiles.summarizer.options.{option}: [{value}]\n"
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="1", grid=grid))
    with pytest.raises(Exception, match=words):
        load_sweep_file(path)


def test_a_run_key_keeps_a_negative_values_sign(tmp_path: Path) -> None:
    key = run_key("w.yaml", {"llm.profiles.actor.options.num_predict": -1}, 0, 1)
    assert "_llm.profiles.actor.options.num_predict=-1_seed=0_" in key
    grid = "  llm.profiles.actor.options.num_predict: [-1, 1]\n"
    sweep_file = load_sweep_file(write_sweep(tmp_path, sweep_text("fake:look", seeds="1",
                                                                   grid=grid)))  # fmt: skip
    keys = [run.key.split("_seed=")[0] for run in sweep_file.runs]
    assert [k.rsplit("=", 1)[1] for k in keys] == ["-1", "1"]


def test_the_plan_is_counted_before_it_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_count(2, 3, [10] * 12, 10**8) == 2 * 3 * 10**12 * 10**8  # never listed
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds=str(10**12)))  # no memory for it
    code, said, err = sweep(capsys, path, "--out", tmp_path / "out", "--dry-run")
    assert code == 2
    assert said == ""
    assert err == (f"mudsim: {path}, line 3, seeds: this sweep makes 2,000,000,000,000 runs (2 "
                   "grid combinations x 1,000,000,000,000 seeds), more than --max-runs 10,000: "
                   "give fewer seeds or grid values, or a larger --max-runs\n")  # fmt: skip
    grid = "".join(f"  {name}: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n" for name in (
        "recent_window", "immediate_window", "think_interval", "memory_compaction.consolidate_every"))  # fmt: skip
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="2", grid=grid))
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out")
    assert code == 2
    assert (
        ", line 5, grid: this sweep makes 20,000 runs (10,000 grid combinations x 2 seeds)" in err
    )
    assert not (tmp_path / "out").exists()


def test_max_runs_raises_or_lowers_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="2"))  # 2 models x 2 seeds
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out", "--dry-run", "--max-runs", "3")
    assert code == 2
    assert "this sweep makes 4 runs (2 grid combinations x 2 seeds), more than --max-runs 3" in err
    code, said, err = sweep(capsys, path, "--out", tmp_path / "out", "--dry-run",
                            "--max-runs", "4")  # fmt: skip
    assert code == 0, err
    assert len(said.splitlines()) == 4
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out", "--max-runs", "0")
    assert code == 2
    assert "expected a whole number of at least 1" in err
    code, _, err = sweep(capsys, "report", tmp_path / "out", "--max-runs", "5")
    assert (code, err) == (2, "mudsim: sweep report takes no --max-runs\n")


def test_a_run_past_its_time_limit_fails_and_the_sweep_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hanging = StubOllama(models=["tiny"], faults=FaultSchedule(hang_every=1))  # never answers
    with hanging:
        text = (f"world: world.yaml\nturns: 1\nllm: {hanging.url}\ntimeout: 2\n"
                "runs:\n  - {model: tiny}\n  - {llm: 'fake:look'}\n")  # fmt: skip
        path = write_sweep(tmp_path, text)
        code, _, err = sweep(capsys, path, "--out", tmp_path / "out", "--workers", "2")
    assert code == 1, err
    rows = {r["llm"] or "stub": r for r in results(tmp_path / "out")}
    assert rows["fake:look"]["status"] == "finished"
    assert rows["stub"]["status"] == "failed"
    assert rows["stub"]["error"] == "timed out after 2 s"
    assert f"First failure: {rows['stub']['run_key']}: timed out after 2 s" in err


@pytest.mark.parametrize(
    ("value", "words"),
    [("0", "timeout: Input should be greater than 0"),
     ("soon", "timeout is a number of seconds, not 'soon'"),
     ("true", "timeout is a number of seconds, not True")],
)  # fmt: skip
def test_a_bad_timeout_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, words: str
) -> None:
    path = write_sweep(tmp_path, f"world: world.yaml\nturns: 1\ntimeout: {value}\n")
    code, _, err = sweep(capsys, path, "--out", tmp_path / "out")
    assert code == 2
    assert err.startswith(f"mudsim: {path}, line 3, timeout: ")
    assert words in err
    assert err.count("\n") == 1
