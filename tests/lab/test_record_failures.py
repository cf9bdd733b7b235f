"""A run record that cannot be written never stops the world: a vault whose runs/ cannot
be made runs unrecorded (said once); a tape that fails mid-run stops the record (said
once), the run goes on, and run.json says the record is incomplete."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import mudsim, run

from engine.cli import main
from engine.sim.simulation import Simulation
from engine.vault.run_store import EVENTS, read_tape, runs


def test_a_vault_whose_runs_cannot_be_made_runs_unrecorded(
    world_file: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "runs").write_text("not a folder")
    done = mudsim("do", world_file, "--vault", vault, "look", "say Hello")
    assert done.returncode == 0, done.stderr
    assert "this run is not recorded: " in done.stderr
    assert done.stderr.count("not recorded") == 1
    assert "Traceback" not in done.stderr
    assert 'You say, "Hello"' in done.stdout


def test_a_command_with_bytes_that_do_not_decode_is_run_and_recorded(
    world_file: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    done = mudsim("do", world_file, "--vault", vault, "say hi \udcff there")  # argv b"\xff"
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr
    assert 'You say, "hi  there"' in done.stdout  # the byte is dropped
    (folder,) = runs(vault)
    lines = [e.get("line") for e in read_tape(folder.folder / EVENTS) if e["kind"] == "input"]
    assert lines == ["say hi  there"]  # what ran, as parsing cleaned it


@pytest.mark.replay
def test_a_tape_that_fails_mid_run_stops_the_record_not_the_run(
    world_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warned: list[str] = []
    sim = Simulation.open(tmp_path / "vault", world_file, warn=warned.append, notice=None)
    try:
        sim.begin_record("do", world_file, {})
        assert sim.recorder is not None
        folder = sim.recorder.run.folder
        assert run(sim, "Pat", "look").ok
        events = read_tape(folder / EVENTS)
        (folder / "calls.jsonl").mkdir()  # the next tape to be opened cannot be
        sim.recorder.calls.close()
        (folder / EVENTS).rename(folder / "events.moved")
        (folder / EVENTS).mkdir()  # nor can the events tape, once reopened
        sim.recorder.events.close()
        assert run(sim, "Pat", "say Still here").ok
        assert run(sim, "Pat", "say And here").ok
        asyncio.run(sim.checkpoint())
        sim.end_record("done")
    finally:
        sim.close()
    assert len([w for w in warned if "the run record stopped (the run goes on)" in w]) == 1
    meta = json.loads((folder / "run.json").read_text())
    assert meta["incomplete"]
    assert meta["reason"] == "done"
    assert not (folder / "end.json").exists()
    assert read_tape(folder / "events.moved") == events  # what was written stays
    journal = (tmp_path / "vault" / "agents" / "Pat" / "memories.jsonl").read_text()
    assert "And here" in journal
    code = main(["replay", str(folder), "--vault", str(tmp_path / "replayed")])
    assert code == 2
    assert "record is incomplete" in capsys.readouterr().err
    assert [r.folder for r in runs(tmp_path / "vault")] == [folder]
