"""``replay`` and ``fork`` take a vault as well as a run's folder: the vault's latest run,
or ``--run ID``'s; an id that names no run, or a vault with none, is one line and exit 2
(a vault with two runs is what a ``runs/*-run`` glob cannot name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import mudsim

from engine.vault.run_store import RunFolder, manifest, runs

pytestmark = [pytest.mark.slow, pytest.mark.replay]  # real processes, whole runs


@pytest.fixture
def two_runs(world_file: Path, tmp_path: Path) -> tuple[Path, RunFolder, RunFolder]:
    """A vault, and its two runs (the CLI with the fake model, twice), oldest first."""
    vault = tmp_path / "vault"
    for script in ("fake:say First light.", "fake:say Second light."):
        done = mudsim("run", world_file, "--vault", vault, "--headless", "--turns", "1",
                      "--seed", "1", "--llm", script)  # fmt: skip
        assert done.returncode == 0, done.stderr
    first, second = runs(vault)
    return vault, first, second


def _replay_of(new: Path) -> str:
    (record,) = runs(new)
    return str(json.loads((record.folder / "run.json").read_text())["replay_of"])


def test_a_vault_replays_its_latest_run_and_run_picks_another(
    two_runs: tuple[Path, RunFolder, RunFolder], tmp_path: Path
) -> None:
    vault, first, second = two_runs
    latest = mudsim("replay", vault, "--vault", tmp_path / "latest")
    assert latest.returncode == 0, latest.stderr
    assert latest.stdout.startswith(f"Replayed {second.id}: ")
    assert "byte-identical" in latest.stdout
    assert _replay_of(tmp_path / "latest") == second.id
    assert manifest(tmp_path / "latest") == json.loads((second.folder / "end.json").read_text())

    picked = mudsim("replay", vault, "--run", first.id, "--vault", tmp_path / "first")
    assert picked.returncode == 0, picked.stderr
    assert picked.stdout.startswith(f"Replayed {first.id}: ")
    assert _replay_of(tmp_path / "first") == first.id
    assert manifest(tmp_path / "first") == json.loads((first.folder / "end.json").read_text())
    ada = (tmp_path / "first" / "agents" / "Ada" / "memories.jsonl").read_text()
    assert "First light" in ada
    assert "Second light" not in ada


def test_a_vault_forks_its_latest_run_or_the_one_run_names(
    two_runs: tuple[Path, RunFolder, RunFolder], tmp_path: Path
) -> None:
    vault, first, second = two_runs
    picks = [(tmp_path / "f2", [], second), (tmp_path / "f1", ["--run", first.id], first)]
    for new, pick, parent in picks:
        done = mudsim("fork", vault, *pick, "--at", "1", "--vault", new, "--headless",
                      "--turns", "1", "--llm", "fake:think What now?")  # fmt: skip
        assert done.returncode == 0, done.stderr
        (record,) = runs(new)
        assert json.loads((record.folder / "run.json").read_text())["parent"] == parent.id


def test_what_names_no_run_is_one_line_and_exit_2(
    two_runs: tuple[Path, RunFolder, RunFolder], tmp_path: Path
) -> None:
    vault, first, _ = two_runs
    (tmp_path / "empty").mkdir()
    cases = [
        (["replay", vault, "--run", "nope"], "no run 'nope' in"),
        (["fork", vault, "--run", "nope", "--at", "1"], "no run 'nope' in"),
        (["replay", tmp_path / "empty"], "holds no recorded run"),
        (["replay", tmp_path / "nowhere"], "no such run folder or vault"),
        (["replay", first.folder, "--run", first.id], "is one run's folder already"),
    ]
    for argv, said in cases:
        new = tmp_path / "new"
        done = mudsim(*argv, "--vault", new)
        assert done.returncode == 2, (argv, done.stdout, done.stderr)
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith("mudsim: "), done.stderr
        assert said in done.stderr, done.stderr
        assert not new.exists()
