"""Sweep files are checked as world files are: each problem one line naming the file, the
line and the field; the CLI exits 2 with that line and no traceback, and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import REPO
from test_sweep_support import write_sweep, write_world

from engine.cli import main
from engine.errors import SweepFileError
from engine.lab.sweep.file import load_sweep_file

GOOD = """\
world: world.yaml
turns: 3
seeds: [7, 11]
grid:
  model: [tiny, small]
  recent_window: [8, 16]
runs:
  - {}
  - {knowledge: off, retrieval: off}
"""


def refused(tmp_path: Path, text: str) -> str:
    path = write_sweep(tmp_path, text)
    with pytest.raises(SweepFileError) as caught:
        load_sweep_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line "), message
    assert "\n" not in message
    return message


def test_a_good_file_makes_every_combination(tmp_path: Path) -> None:
    sweep = load_sweep_file(write_sweep(tmp_path, GOOD))
    assert len(sweep.runs) == 2 * 2 * 2 * 2  # runs entries x models x windows x seeds
    assert sweep.settings == ["knowledge", "retrieval", "model", "recent_window"]
    assert [r.seed for r in sweep.runs[:8]] == [7] * 8  # seed first: every configuration once
    plain = [r for r in sweep.runs if "knowledge" not in r.settings]
    assert {(r.settings["model"], r.settings["recent_window"]) for r in plain} == {
        ("tiny", 8), ("tiny", 16), ("small", 8), ("small", 16)}  # fmt: skip
    off = [r for r in sweep.runs if r.settings.get("knowledge") == "off"]
    assert len(off) == 8
    assert all(r.settings["retrieval"] == "off" for r in off)
    assert sweep.worlds == {"world.yaml": tmp_path / "world.yaml"}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        pytest.param("world: world.yaml\nturns: 3\ncolour: red\n", 3, "colour: unknown key 'colour'",
                     id="unknown-key"),
        pytest.param("world: world.yaml\nturns: 3\ngrid:\n  recnt_window: [8]\n", 4,
                     "unknown setting 'recnt_window' (check its spelling)", id="unknown-setting"),
        pytest.param("world: world.yaml\nturns: 3\ngrid:\n  recent_window: [8, 0]\n", 4,
                     "grid.recent_window[1]: recent_window cannot be 0", id="bad-value"),
        pytest.param("world: world.yaml\nturns: 3\ngrid: {}\n", 3, "grid: the grid is empty",
                     id="empty-grid"),
        pytest.param("world: world.yaml\nturns: 3\ngrid:\n  model: []\n", 4,
                     "grid.model: give at least one value", id="no-values"),
        pytest.param("world: world.yaml\nturns: 3\nruns: []\n", 3, "runs: the runs list is empty",
                     id="empty-runs"),
        pytest.param("world: world.yaml\nturns: 0\n", 2, "turns: Input should be greater than",
                     id="no-turns"),
        pytest.param("world: world.yaml\nseeds: 2\n", 1, "missing required field 'turns'",
                     id="missing-turns"),
        pytest.param("world: world.yaml\nturns: 2\nseeds: [1, 1]\n", 3, "a seed is given twice",
                     id="seed-twice"),
        pytest.param("world: world.yaml\nturns: 2\nseeds: 0\n", 3,
                     "seeds: seeds is a count of at least 1 or a list of whole numbers, not 0",
                     id="no-seeds"),
        pytest.param("world: world.yaml\nturns: 2\nseeds: [1, true]\n", 3,
                     "seeds is a count of at least 1 or a list of whole numbers, not [1, True]",
                     id="seed-not-a-number"),
        pytest.param("world: world.yaml\nturns: 2\ngrid:\n  knowledge: [maybe]\n", 4,
                     "knowledge is on or off, not 'maybe'", id="bad-switch"),
        pytest.param("world: world.yaml\nturns: 2\nllm: gpu1:11434\n", 3,
                     "llm: 'gpu1:11434' is not an LLM URL", id="bad-llm"),
        pytest.param("world: world.yaml\nturns: 2\ngrid:\n  llm: [http://gpu1:99999]\n", 4,
                     "has a port that is not 1-65535", id="bad-llm-setting"),
        pytest.param("world: world.yaml\nturns: 2\nllm: http://a:1\nendpoints: [{url: http://b:2}]\n",
                     1, "give llm (one URL) or endpoints (a list), not both", id="llm-and-endpoints"),
        pytest.param("world: world.yaml\nworlds: [world.yaml]\nturns: 2\n", 1,
                     "give world (one world file) or worlds (a list)", id="world-and-worlds"),
        pytest.param("world: elsewhere.yaml\nturns: 2\n", 1, "cannot read the world file",
                     id="no-such-world"),
        pytest.param("world: world.yaml\nturns: 2\ngrid:\n  model: [tiny]\nruns:\n  - {model: small}\n",
                     6, "runs[0].model: 'model' is also in the grid", id="in-grid-and-runs"),
        pytest.param("world: world.yaml\nturns: 2\nruns:\n  - {knowledge: off}\n  - {knowledge: false}\n",
                     3, "two runs are the same", id="same-run-twice"),
        pytest.param("world: world.yaml\nturns: 2\nruns:\n  - {memory_compaction.recnt: 3}\n", 4,
                     "runs[0].memory_compaction.recnt: no such setting", id="unknown-vault-setting"),
        pytest.param("world: world.yaml\nturns: 2\nruns:\n  - {record.record: false}\n", 4,
                     "record.record cannot be false", id="unrecorded"),
        pytest.param("world: world.yaml\nturns: 2\ngrid:\n  profile: ['']\n", 4,
                     "this run's world is not valid", id="world-made-invalid"),
        pytest.param("world: world.yaml\nturns: 2\nturns: 3\n", 3, "turns: this key is given twice",
                     id="key-twice"),
        pytest.param("world: world.yaml\nturns: [2\n", 3, "YAML syntax error", id="not-yaml"),
        pytest.param("- world.yaml\n", 1, "a sweep file is a mapping", id="not-a-mapping"),
        pytest.param("world: world.yaml\nturns: 2\nprobe: {compare: [fuller]}\n", 3,
                     "probe.compare[0]: Input should be 'full'", id="bad-probe"),
        pytest.param("world: world.yaml\nturns: 2\nprobe: {per_category: 0}\n", 3,
                     "probe.per_category: Input should be greater than or equal to 1",
                     id="bad-probe-count"),
    ],
)  # fmt: skip
def test_a_bad_file_is_one_line_with_its_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    message = refused(tmp_path, text)
    assert f", line {line}, " in message or message.startswith(
        f"{tmp_path / 'sweep.yaml'}, line {line}:"
    )
    assert words in message


def test_a_world_that_is_not_valid_is_named(tmp_path: Path) -> None:
    write_world(tmp_path)
    (tmp_path / "broken.yaml").write_text("name: Broken\nrooms: []\n", encoding="utf-8")
    message = refused(tmp_path, "worlds: [world.yaml, broken.yaml]\nturns: 2\n")
    assert ", line 1, worlds[1]: the world is not valid: " in message
    assert "broken.yaml" in message


def test_the_cli_says_it_in_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, "world: world.yaml\nturns: 3\ngrid: {}\n")
    out = tmp_path / "out"
    code = main(["sweep", str(path), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2
    assert (
        captured.err
        == f"mudsim: {path}, line 3, grid: the grid is empty: give each setting a list of values\n"
    )
    assert captured.out == ""
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["sweep", "x.yaml"], "sweep needs --out DIR"),
        (["sweep", "a.yaml", "b.yaml", "--out", "o"], "sweep takes one sweep file, got 2"),
        (
            ["sweep", "x.yaml", "--out", "o", "--by", "model"],
            "--by is for `mudsim sweep report DIR`",
        ),
        (["sweep", "report", "o", "--workers", "2"], "sweep report takes no --workers"),
        (["sweep", "report"], "usage: mudsim sweep report DIR"),
        (
            ["sweep", "x.yaml", "--out", "o", "--workers", "0"],
            "expected a whole number of at least 1",
        ),
        (["sweep", "missing.yaml", "--out", "o"], "cannot read sweep file missing.yaml"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    argv: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("mudsim: "), err
    assert err.count("\n") == 1, err
    assert words in err


def test_the_shipped_sweep_files_are_valid() -> None:
    shipped = sorted((REPO / "worlds" / "sweeps").glob("*.yaml"))
    assert shipped
    for path in shipped:
        sweep = load_sweep_file(path)
        assert sweep.runs, path
    example = load_sweep_file(REPO / "worlds" / "sweeps" / "trio-models.yaml")
    assert len(example.runs) == 2 * 2 * 3  # models x windows x seeds
    assert example.settings == ["model", "recent_window"]
