"""@training-status (anyone) and @training-toggle (admins), with a run record (a real
``RunRecorder`` over a run folder in the test's vault) and without one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import run

from engine.agents.thinker import Turn
from engine.commands import Result
from engine.commands.training import NOT_RECORDED
from engine.sim.recorder import RunRecorder
from engine.sim.simulation import Simulation
from engine.vault.run_store import TRAINING, RunFolder


@pytest.fixture
def recorded(sim: Simulation) -> Iterator[RunRecorder]:
    recorder = RunRecorder(RunFolder.create(sim.vault.root, "test"))
    sim.recorder = recorder
    yield recorder
    sim.recorder = None
    recorder.close()


def take_turn(sim: Simulation, line: str) -> None:
    """An agent turn as the scheduler finishes it: Ada ran ``line``."""
    result = run(sim, "Ada", line)
    turn = Turn("Ada", line, result, asks=1)
    sim.turn_finished("ada", turn, 1, prompt="## Prompt\n>", reply=line)


def test_without_a_record_both_say_so(sim: Simulation) -> None:
    status = run(sim, "Pip", "@training-status")
    assert (status.ok, status.text) == (True, NOT_RECORDED)
    toggle = run(sim, "Pat", "@training-toggle")
    assert not toggle.ok
    assert toggle.text == NOT_RECORDED
    assert toggle.hint == "Nothing to switch: there is no run record."


def test_status_counts_the_pairs_captured(sim: Simulation, recorded: RunRecorder) -> None:
    run_id = recorded.run.id
    assert run(sim, "Pip", "@training-status").text == (
        f"Training capture is on for run {run_id}: 0 pairs captured this run (0 ok, 0 failed)."
    )
    take_turn(sim, "say Hello.")
    take_turn(sim, "go nowhere")
    take_turn(sim, "look")
    assert run(sim, "Pip", "@training-status").text == (
        f"Training capture is on for run {run_id}: 3 pairs captured this run (2 ok, 1 failed)."
    )


def test_toggle_switches_the_capture(sim: Simulation, recorded: RunRecorder) -> None:
    result = run(sim, "Pat", "@training-toggle")
    assert result.ok
    assert result.text.startswith("Switched off. Training capture is off for run ")
    assert recorded.training is False
    take_turn(sim, "say Not kept.")
    assert recorded.captured["ok"] == 0
    assert run(sim, "Pat", "@training-toggle").text.startswith("Switched on.")
    assert recorded.training is True
    take_turn(sim, "say Kept.")
    assert dict(recorded.captured) == {"ok": 1}
    recorded.close()
    assert [pair["command"] for pair in recorded.run.read(TRAINING)] == ["say Kept."]


@pytest.mark.parametrize("who", ["Pip", "Bea", "Ada"])
def test_toggle_is_refused_to_anyone_but_an_admin(
    sim: Simulation, recorded: RunRecorder, who: str
) -> None:
    result = run(sim, who, "@training-toggle")
    assert not result.ok
    assert "needs the admin role" in result.text
    assert recorded.training is True


@pytest.mark.parametrize("line", ["@training-status now", "@training-toggle on"])
def test_arguments_are_refused(sim: Simulation, line: str) -> None:
    result: Result = run(sim, "Pat", line)
    assert not result.ok
    assert result.text.endswith("takes no arguments.")
