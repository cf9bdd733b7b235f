"""``config/record.md``: ``record: false`` keeps no record, ``record_prompts: false``
keeps the calls without their prompts, ``training: false`` captures no pairs; and the
record keeps no secret an endpoint URL carries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.llm.stub_server import StubOllama
from engine.vault.run_store import CALLS, TRAINING, read_tape, runs


def _run(world_file: Path, vault: Path, record: str, llm: str = "fake:say Hi;look") -> None:
    (vault / "config").mkdir(parents=True, exist_ok=True)
    (vault / "config" / "record.md").write_text(f"---\n{record}\n---\n")
    code = main(["run", str(world_file), "--vault", str(vault), "--headless", "--turns", "2",
                 "--llm", llm])  # fmt: skip
    assert code == 0


def test_record_false_keeps_no_record(
    world_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(world_file, tmp_path / "vault", "record: false")
    assert runs(tmp_path / "vault") == []
    assert capsys.readouterr().out.splitlines()[-1] == "Cost: not recorded (record: false)."


def test_record_prompts_false_keeps_the_calls_without_prompts(
    world_file: Path, tmp_path: Path
) -> None:
    _run(world_file, tmp_path / "vault", "record_prompts: false")
    (run,) = runs(tmp_path / "vault")
    calls = read_tape(run.folder / CALLS)
    assert calls
    assert all(c["prompt"] is None for c in calls)
    assert all(c["reply"] is not None and c["model"] for c in calls)


def test_training_false_captures_no_pairs_and_true_does(world_file: Path, tmp_path: Path) -> None:
    _run(world_file, tmp_path / "off", "training: false")
    (off,) = runs(tmp_path / "off")
    assert read_tape(off.folder / TRAINING) == []
    _run(world_file, tmp_path / "on", "training: true")
    (on,) = runs(tmp_path / "on")
    pairs = read_tape(on.folder / TRAINING)
    assert len(pairs) == 4  # two agents, two turns
    assert all(p["prompt"] and p["command"] for p in pairs)


def test_a_password_in_an_endpoint_url_is_not_recorded(
    world_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    with StubOllama(["say Hi"], models=["tiny"]) as stub:
        url = stub.url.replace("http://", "http://bo:hunter2@")
        code = main(["run", str(world_file), "--vault", str(vault), "--headless", "--turns",
                     "1", "--llm", url, "--model", "tiny"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    (run,) = runs(vault)
    for path in run.folder.glob("*.json*"):
        assert "hunter2" not in path.read_text(), path.name
    assert json.loads((run.folder / "run.json").read_text())["endpoints"]
