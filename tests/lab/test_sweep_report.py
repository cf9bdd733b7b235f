"""``mudsim sweep report``: grouping and 95% intervals on a hand-built table (pure), the
properties of the interval, and the command on a hand-built OUT (tables, summary.csv,
a chart per figure)."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.cli import main
from engine.lab.sweep.report import T_975, bars, estimate, group, metric_names, mixtures, t_975

TABLE: list[dict[str, Any]] = [
    {"run_key": "a0", "world": "w.yaml", "seed": 0, "model": "a", "recent_window": 8,
     "tokens_in": 100, "calls": 10, "status": "finished", "error": None, "attempt": 1},
    {"run_key": "a1", "world": "w.yaml", "seed": 1, "model": "a", "recent_window": 8,
     "tokens_in": 200, "calls": 12, "status": "finished", "error": None, "attempt": 1},
    {"run_key": "a2", "world": "w.yaml", "seed": 2, "model": "a", "recent_window": 8,
     "tokens_in": 300, "calls": 14, "status": "finished", "error": None, "attempt": 1},
    {"run_key": "b0", "world": "w.yaml", "seed": 0, "model": "b", "recent_window": 8,
     "tokens_in": 50, "calls": 5, "status": "finished", "error": None, "attempt": 1},
    {"run_key": "b1", "world": "w.yaml", "seed": 1, "model": "b", "recent_window": 8,
     "tokens_in": None, "calls": None, "status": "failed", "error": "boom", "attempt": 2},
    {"run_key": "c0", "world": "w.yaml", "seed": 0, "model": "a", "recent_window": 16,
     "tokens_in": 120, "calls": 11, "status": "finished", "error": None, "attempt": 1},
    {"run_key": "c1", "world": "w.yaml", "seed": 1, "model": "a", "recent_window": 16,
     "tokens_in": 140, "calls": 11, "status": "finished", "error": None, "attempt": 1},
]  # fmt: skip
SETTINGS = ["model", "recent_window"]


def test_groups_means_and_t_intervals_by_hand() -> None:
    metrics = metric_names(TABLE, SETTINGS)
    assert metrics == ["tokens_in", "calls"]
    groups = group(TABLE, SETTINGS, metrics)
    assert [g.values for g in groups] == [("a", 8), ("b", 8), ("a", 16)]
    a8, b8, a16 = groups
    assert (a8.finished, a8.failed, b8.finished, b8.failed) == (3, 0, 1, 1)
    e = a8.estimates["tokens_in"]  # 100, 200, 300: mean 200, s = 100, t(2) = 4.303
    assert (e.n, e.mean) == (3, 200.0)
    half = 4.303 * 100 / math.sqrt(3)
    assert e.low == pytest.approx(200 - half)
    assert e.high == pytest.approx(200 + half)
    assert b8.estimates["tokens_in"] == type(e)(1, 50.0)  # one finished run: no interval
    c = a16.estimates["calls"]  # 11, 11: no spread
    assert (c.mean, c.low, c.high) == (11.0, 11.0, 11.0)
    by_model = group(TABLE, ["model"], metrics)
    assert [(g.values, g.finished) for g in by_model] == [(("a",), 5), (("b",), 1)]
    assert by_model[0].estimates["tokens_in"].mean == pytest.approx(172.0)
    everything = group(TABLE, [], metrics)
    assert len(everything) == 1
    assert everything[0].finished == 6


def test_t_values() -> None:
    assert t_975(1) == 12.706
    assert t_975(2) == 4.303
    assert t_975(30) == 2.042
    assert t_975(35) == 2.042  # between two: the wider
    assert t_975(10_000) == 1.960
    assert list(T_975) == sorted(T_975, reverse=True)
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_975(0)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=40))
def test_the_interval_holds_the_mean_and_is_as_wide_as_t_says(values: list[float]) -> None:
    e = estimate(values)
    assert e.low is not None
    assert e.high is not None
    assert e.mean is not None
    assert e.low <= e.mean <= e.high
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    assert e.high - e.low == pytest.approx(2 * half, abs=1e-6)


@given(st.floats(-1e6, 1e6, allow_nan=False), st.integers(2, 30))
def test_identical_values_have_no_spread(value: float, n: int) -> None:
    e = estimate([value] * n)
    assert e.mean == pytest.approx(value)
    assert e.low == pytest.approx(value)
    assert e.high == pytest.approx(value)


def _hand_built_out(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    with (out / "results.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(TABLE[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(TABLE)
    plan = {"settings": SETTINGS, "worlds": ["w.yaml"], "runs": []}
    (out / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    return out


def test_the_report_prints_each_figure_by_configuration_and_draws_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _hand_built_out(tmp_path)
    assert main(["sweep", "report", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"Sweep {out}: 7 runs (6 finished, 1 failed); mean and 95% "
                           "interval over seeds, by model, recent_window\n")  # fmt: skip
    block = said.split("\ntokens_in\n")[1].split("\n\n")[0].splitlines()
    assert block[0].split() == ["model", "recent_window", "n", "mean", "95%", "interval"]
    assert block[1].split() == ["a", "8", "3", "200", "-48.43", "-", "448.43"]
    assert block[2].split() == ["b", "8", "1", "(1", "failed)", "50", "-"]
    assert block[3].split() == ["a", "16", "2", "130", "2.94", "-", "257.06"]
    assert (out / "report" / "tokens_in.png").stat().st_size > 0
    assert (out / "report" / "calls.png").stat().st_size > 0
    with (out / "report" / "summary.csv").open(encoding="utf-8") as handle:
        summary = list(csv.DictReader(handle))
    assert [(r["model"], r["recent_window"], r["finished"]) for r in summary] == [
        ("a", "8", "3"), ("b", "8", "1"), ("a", "16", "2")]  # fmt: skip
    assert float(summary[0]["tokens_in_mean"]) == 200.0


def test_the_report_by_one_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _hand_built_out(tmp_path)
    assert main(["sweep", "report", str(out), "--by", "model"]) == 0
    block = capsys.readouterr().out.split("\ncalls\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[:3] for line in block[1:]] == [["a", "5", "11.60"], ["b", "1", "(1"]]


def test_a_report_of_what_is_not_a_sweep_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", "report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        err
        == f"mudsim: {tmp_path} holds no sweep results (results.csv); give the --out of a sweep\n"
    )
    out = _hand_built_out(tmp_path)
    assert main(["sweep", "report", str(out), "--by", "modle"]) == 2
    assert capsys.readouterr().err == (
        "mudsim: --by modle: no such column; the settings are model, recent_window\n")  # fmt: skip


def test_a_group_with_no_finished_run_is_drawn_as_missing_not_as_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    out = _hand_built_out(tmp_path)
    failed = {**TABLE[4], "run_key": "d0", "model": "d", "seed": 0}  # its only run failed
    with (out / "results.csv").open("a", newline="", encoding="utf-8") as handle:
        csv.DictWriter(handle, fieldnames=list(TABLE[0]), lineterminator="\n").writerow(failed)
    assert main(["sweep", "report", str(out)]) == 0
    said = capsys.readouterr().out
    block = said.split("\ntokens_in\n")[1].split("\n\n")[0].splitlines()
    assert block[4].split() == ["d", "8", "0", "(1", "failed)", "-", "-"]
    groups = group([*TABLE, failed], SETTINGS, ["tokens_in"])
    drawn = bars(groups, SETTINGS, "tokens_in")
    assert [b.mean for b in drawn] == [200.0, 50.0, 130.0, None]
    assert drawn[3].label == "model=d, recent_window=8\n(no finished run)"
    with Image.open(out / "report" / "tokens_in.png") as chart:
        described = chart.text["Description"]  # type: ignore[attr-defined]
    assert described == ("tokens_in, mean over seeds by group: model=a, recent_window=8: 200; "
                         "model=b, recent_window=8: 50; model=a, recent_window=16: 130; "
                         "model=d, recent_window=8: no finished run")  # fmt: skip


def test_a_group_made_by_two_commits_or_digests_is_said_never_averaged_silently() -> None:
    same = {"git_commit": "a" * 40, "git_dirty": False, "model_digest": "sha256:1"}
    rows = [{**row, **same} for row in TABLE]
    assert mixtures(rows, SETTINGS) == []
    rows[1] = {**rows[1], "git_commit": "b" * 40}
    rows[6] = {**rows[6], "model_digest": "sha256:2"}
    rows[4] = {**rows[4], "model_digest": "sha256:3"}  # a failed run: not in any mean
    assert mixtures(rows, SETTINGS) == [
        f"Warning: model=a, recent_window=8 averages runs of 2 git_commit values ({'a' * 40}, "
        f"{'b' * 40})",
        "Warning: model=a, recent_window=16 averages runs of 2 model_digest values (sha256:1, "
        "sha256:2)",
    ]
