"""SVG snapshots of fixed states (pytest-textual-snapshot), at 80x24 and 120x40.

Accept a deliberate change of the screen with ``pytest tests/tui --snapshot-update``,
and look at the SVGs under ``__snapshots__`` before committing them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from tui_scenes import GatedModel, hall_app, hold_work, status_text, until

from engine.config import LLMConfig
from engine.llm.connect import build_dispatcher, choose_llm
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.tui.app import HistoryInput, MudsimApp

DEMO = Path(__file__).parents[2] / "worlds" / "demo.yaml"
LONG_SAY = (
    "say Welcome to the house, everyone; I have walked all the way from the harbour "
    "along the coast road and I would very much like a cup of tea and a chair by the fire."
)
"""Longer than the event log is wide at either size: it must wrap, not be cut."""


async def _say_something_long(pilot: Pilot[None]) -> None:
    field = pilot.app.query_one("#command", HistoryInput)
    field.focus()
    field.value = LONG_SAY
    await pilot.press("enter", "escape")  # back to the keys: the footer shows them all
    await pilot.pause(0.3)  # the log's next write (ten times a second)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_a_paused_demo_world(
    tmp_path: Path, snap_compare: Callable[..., bool], size: tuple[int, int]
) -> None:
    sim = Simulation.open(tmp_path / "vault", DEMO)
    try:
        dispatcher = build_dispatcher(choose_llm("fake:", {}, LLMConfig()))
        models = {"eliza": "tiny", "moss": "tiny"}
        scheduler = Scheduler(sim, dispatcher, make_thinkers(sim, models), seed=1)
        app = MudsimApp(sim, scheduler, dispatcher, {"Eliza": "tiny", "Moss": "tiny"},
                        player=sim.character("Traveler"), start_paused=True)  # fmt: skip
        assert snap_compare(app, terminal_size=size, run_before=_say_something_long)
    finally:
        sim.close()


def test_stopping_with_work_in_flight(tmp_path: Path, snap_compare: Callable[..., bool]) -> None:
    """q pressed while two turns and a summary are in flight: the status line says so."""
    model = GatedModel()
    app = hall_app(tmp_path, model)

    async def stop_with_work_in_flight(pilot: Pilot[None]) -> None:
        await hold_work(app, model, pilot)
        app.clock = lambda: 100.0  # a stopped clock: a slow machine must not show 29 s
        await pilot.press("q")
        await until(lambda: status_text(app).startswith("Stopping"))  # (a fixed 0.3 s
        await pilot.wait_for_scheduled_animations()  # was too short on a loaded CI
        await pilot.pause(0.3)  # machine: the log had not scrolled to its end)

    try:
        assert snap_compare(app, terminal_size=(80, 24), run_before=stop_with_work_in_flight)
    finally:
        app.sim.close()
