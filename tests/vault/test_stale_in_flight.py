"""No state says work is in flight after its process died (issue 42, B): a SIGKILL
mid-compaction leaves ``in_flight: true`` in ``memory-state.json``; ``mudsim status``
(which reads without the lock) calls the mark stale while no live process holds the
vault, and whatever takes the vault next (``run``, ``do``, ``play``, ``serve``,
``repair``, ``world apply``...) clears it; ``repair`` says so."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from helpers import mudsim

from engine.cli import main
from engine.sim.simulation import Simulation
from engine.sim.status import read_status
from engine.vault.lock import VaultLock, owned
from engine.vault.repair import repair_vault
from engine.vault.vault import Vault


def _state_path(vault: Path, name: str) -> Path:
    return vault / "agents" / name / "memory-state.json"


def _state(vault: Path, name: str) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(_state_path(vault, name).read_text(encoding="utf-8"))
    return state


def _left_in_flight(vault: Path, world: Path, *names: str) -> dict[str, bytes]:
    """A seeded vault whose ``names`` a killed process left in flight; their files."""
    Simulation.open(vault, world).close()
    files = {}
    for name in names:
        state = {**_state(vault, name), "in_flight": True, "failures": 2, "last_error": "boom"}
        _state_path(vault, name).write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
        files[name] = _state_path(vault, name).read_bytes()
    return files


def test_taking_the_vault_clears_a_mark_a_gone_process_left(
    vault_dir: Path, world_file: Path
) -> None:
    before = _left_in_flight(vault_dir, world_file, "Bo")
    untouched = _state_path(vault_dir, "Ada").read_bytes()
    vault = Vault(vault_dir)
    lock = vault.lock()
    try:
        assert vault.stale_in_flight == ["Bo"]
        after = _state(vault_dir, "Bo")
        assert after["in_flight"] is False
        # the rest as the killed process left it (its ``updated`` too)
        assert {**json.loads(before["Bo"]), "in_flight": False} == after
        assert _state_path(vault_dir, "Ada").read_bytes() == untouched  # nothing to clear
    finally:
        lock.release()
    again = Vault(vault_dir)
    again.lock().release()
    assert again.stale_in_flight == []


def test_a_simulation_opened_after_a_kill_says_nothing_is_in_flight(
    vault_dir: Path, world_file: Path
) -> None:
    _left_in_flight(vault_dir, world_file, "Ada", "Bo")
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert [_state(vault_dir, n)["in_flight"] for n in ("Ada", "Bo")] == [False, False]
        assert not sim.minds["bo"].status().in_flight
    finally:
        sim.close()


def test_status_calls_a_mark_stale_while_no_live_process_holds_the_vault(
    vault_dir: Path, world_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _left_in_flight(vault_dir, world_file, "Bo")
    assert owned(vault_dir) is False
    (bo,) = read_status(vault_dir, "Bo")
    assert (bo.in_flight, bo.in_flight_stale) == (False, True)
    assert bo.to_json()["in_flight"] is False
    assert bo.to_json()["in_flight_stale"] is True
    assert main(["status", "--vault", str(vault_dir), "--agent", "Bo"]) == 0
    shown = capsys.readouterr().out
    assert "one is in flight;" not in shown
    assert "memory-state.json says one is in flight, but no process holds the vault" in shown
    assert "the mark is stale" in shown
    assert _state(vault_dir, "Bo")["in_flight"] is True  # status reads: it writes nothing

    lock = VaultLock(vault_dir)  # a live owner (this process) keeps the mark true
    lock.acquire()
    try:
        assert owned(vault_dir) is True
        (bo,) = read_status(vault_dir, "Bo")
        assert (bo.in_flight, bo.in_flight_stale) == (True, False)
        assert "; one is in flight" in bo.render()
    finally:
        lock.release()


def test_repair_says_it_cleared_the_mark(vault_dir: Path, world_file: Path) -> None:
    _left_in_flight(vault_dir, world_file, "Bo")
    report = repair_vault(vault_dir, None)
    bo = [line for line in report if line.startswith("Bo:")]
    assert len(bo) == 1
    assert "in_flight was left true in memory-state.json by a process that is gone" in bo[0]
    assert "cleared" in bo[0]
    assert any(line.startswith("Ada: nothing to repair") for line in report)
    assert _state(vault_dir, "Bo")["in_flight"] is False
    assert repair_vault(vault_dir, "Bo") == [
        "Bo: nothing to repair (0 memories, boundary 0)"  # said once: it is gone now
    ]


@pytest.mark.parametrize("verb", ["world apply", "do"])
def test_a_command_that_takes_the_vault_after_a_kill_leaves_no_mark(
    vault_dir: Path, world_file: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    """``world apply`` writes no memory state of its own; ``do`` saves every one anyway."""
    _left_in_flight(vault_dir, world_file, "Bo")
    argv = [*verb.split(), str(world_file), "--vault", str(vault_dir)]
    code = main(argv + (["--as", "Ada", "look"] if verb == "do" else []))
    assert code == 0, capsys.readouterr().err
    assert _state(vault_dir, "Bo")["in_flight"] is False


@pytest.mark.slow
def test_a_run_killed_mid_compaction_leaves_a_mark_that_status_calls_stale_and_the_next_clears(
    vault_dir: Path, world_file: Path
) -> None:
    """Real processes: a run SIGKILLed between a compaction's history file and its commit
    point; ``status`` then ``repair``; killed again, then ``do``."""

    def killed() -> list[str]:
        run = mudsim("run", world_file, "--vault", vault_dir, "--headless", "--turns", "20",
                     "--llm", "fake:look;say Hi;think Hmm", crash_at="summary-after-history")  # fmt: skip
        assert run.returncode == -signal.SIGKILL, run.stderr
        marked = [p.parent.name for p in sorted((vault_dir / "agents").glob("*/memory-state.json"))
                  if json.loads(p.read_text(encoding="utf-8"))["in_flight"]]  # fmt: skip
        assert marked, "the kill left no compaction in flight"
        return marked

    marked = killed()
    status = mudsim("status", "--vault", vault_dir, "--json")
    assert status.returncode == 0, status.stderr
    agents = {a["name"]: a for a in json.loads(status.stdout)["agents"]}
    for name in marked:
        assert (agents[name]["in_flight"], agents[name]["in_flight_stale"]) == (False, True)
    text = mudsim("status", "--vault", vault_dir)
    assert "the mark is stale" in text.stdout

    repair = mudsim("repair", "--vault", vault_dir)
    assert repair.returncode == 0, repair.stderr
    for name in marked:
        assert f"{name}: in_flight was left true" in repair.stdout
    assert all(not _state(vault_dir, p.parent.name)["in_flight"]
               for p in (vault_dir / "agents").glob("*/memory-state.json"))  # fmt: skip

    marked = killed()
    done = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "look")
    assert done.returncode == 0, done.stderr
    assert all(not _state(vault_dir, name)["in_flight"] for name in marked)
    status = mudsim("status", "--vault", vault_dir, "--json")
    assert not any(a["in_flight"] or a["in_flight_stale"]
                   for a in json.loads(status.stdout)["agents"])  # fmt: skip
