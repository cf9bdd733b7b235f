"""``bench.py engine --baseline``: the ratio arithmetic (pure) and a saved baseline
compared end to end with a tiny turn count (no timing is ever asserted)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

SCRIPTS = Path(__file__).parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from bench_common import (  # noqa: E402
    BaselineError,
    comparison_rows,
    figures_of,
    headline,
    load_baseline,
    medians,
    ratios,
)

positive = st.floats(min_value=1e-3, max_value=1e9, allow_nan=False)


@given(st.dictionaries(st.sampled_from(["a", "b", "c/s"]), positive, min_size=1), positive)
def test_a_ratio_is_this_over_the_baseline(baseline: dict[str, float], factor: float) -> None:
    this = {key: value * factor for key, value in baseline.items()}
    found = ratios(baseline, this)
    assert found.keys() == baseline.keys()
    assert all(math.isclose(ratio, factor, rel_tol=1e-9) for ratio in found.values())


@given(st.lists(st.dictionaries(st.sampled_from(["x", "y"]), positive, min_size=2), min_size=1,
                max_size=7))  # fmt: skip
def test_medians_lie_within_the_runs(runs: list[dict[str, float]]) -> None:
    found = medians(runs)
    for key, value in found.items():
        values = [run[key] for run in runs]
        assert min(values) <= value <= max(values)


def test_figures_leave_out_spreads_and_what_only_one_side_has() -> None:
    assert headline({"a": 1, "a_min": 0, "a_max": 2, "b": True, "c": "x", "d": 2.5}) == {
        "a": 1.0,
        "d": 2.5,
    }
    assert medians([{"a": 1.0, "b": 5.0}, {"a": 3.0}]) == {"a": 2.0}
    rows = comparison_rows({"a": 2.0, "z": 0.0, "only": 1.0}, {"a": 3.0, "z": 1.0})
    assert rows[0] == ("a", 2.0, 3.0, 1.5)
    assert rows[1][0] == "z"
    assert math.isnan(rows[1][3])
    assert [row[0] for row in rows] == ["a", "z"]


def test_a_baseline_from_before_the_run_record_is_set_against_the_recorded_figure() -> None:
    before = {"agent_turns/s": 800.0}
    rows = comparison_rows(before, {"agent_turns/s": 1000.0, "recorded_agent_turns/s": 600.0})
    assert rows == [
        ("agent_turns/s", 800.0, 1000.0, 1.25),
        ("recorded vs baseline unrecorded", 800.0, 600.0, 0.75),
    ]
    both = {"agent_turns/s": 800.0, "recorded_agent_turns/s": 500.0}
    assert [row[0] for row in comparison_rows(both, both)] == list(both)


def test_a_saved_output_reads_from_its_last_json_line(tmp_path: Path) -> None:
    saved = tmp_path / "before.json"
    saved.write_text("header\n" + json.dumps({"engine": {"agent_turns/s": 10.0}}) + "\n")
    assert load_baseline(saved) == {"agent_turns/s": 10.0}
    with pytest.raises(BaselineError, match="no 'engine' figures"):
        figures_of(json.dumps({"retrieval": {}}))
    with pytest.raises(BaselineError, match="no JSON"):
        figures_of("nothing here")
    with pytest.raises(BaselineError, match="cannot read"):
        load_baseline(tmp_path / "missing.json")


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "bench.py"), "engine", *args],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


def test_the_engine_bench_against_a_saved_baseline_prints_ratios(tmp_path: Path) -> None:
    saved = tmp_path / "before.json"
    baseline = {"agent_turns/s": 100.0, "recorded_agent_turns/s": 50.0, "us_per_turn": 10_000.0}
    saved.write_text(json.dumps({"engine": baseline}))
    done = _bench("--baseline", str(saved), "--turns", "1", "--repeats", "1")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["baseline"] == baseline
    for key, ratio in result["ratio"].items():
        assert math.isclose(ratio, result["engine"][key] / baseline[key])
    assert set(result["ratio"]) == set(baseline)
    table = done.stdout.splitlines()
    assert any(line.split()[:2] == ["engine", "agent_turns/s"] for line in table)


def test_a_baseline_that_is_neither_a_file_nor_a_commit_is_one_line(tmp_path: Path) -> None:
    done = _bench("--baseline", "no-such-rev-anywhere", "--turns", "1", "--repeats", "1")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "neither a saved JSON file nor a commit" in done.stderr


def test_the_engine_bench_model_never_makes_a_turn_ask_twice() -> None:
    # 12 turns: two rounds of its script; a model that said the same line each round
    # would be asked again by the speech check, and the bench would time two asks a turn
    done = _bench("--turns", "12", "--json")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])["engine"]
    assert figures["asks_per_turn"] == 1.0
    assert figures["agent_turns/s"] > 0


def test_a_baseline_whose_bench_needs_a_missing_module_says_what_to_install(
    tmp_path: Path,
) -> None:
    from bench import engine_once

    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "bench_common.py").write_text("REPEATS = 5\n")
    (scripts / "bench_llm.py").write_text("import mudsim_no_such_module.part\n")
    with pytest.raises(BaselineError, match=r"No module named 'mudsim_no_such_module'.*"
                       r"pip install mudsim_no_such_module"):  # fmt: skip
        engine_once(tmp_path, 1, None)


def test_the_engine_bench_with_a_turn_count_prints_its_figures() -> None:
    done = _bench("--turns", "1")
    assert done.returncode == 0, done.stderr
    rows = [line.split()[:2] for line in done.stdout.splitlines()]
    assert ["engine", "agent_turns/s"] in rows
    assert ["engine", "asks_per_turn"] in rows
    assert json.loads(done.stdout.strip().splitlines()[-1])["engine"]["agent_turns/s"] > 0
