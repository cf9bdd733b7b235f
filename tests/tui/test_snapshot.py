"""An SVG snapshot of a fixed, paused state (pytest-textual-snapshot).

Accept a deliberate change of the screen with ``pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.config import LLMConfig
from engine.llm.connect import build_dispatcher, choose_llm
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp

DEMO = Path(__file__).parents[2] / "worlds" / "demo.yaml"


def test_a_paused_demo_world(tmp_path: Path, snap_compare: Callable[..., bool]) -> None:
    sim = Simulation.open(tmp_path / "vault", DEMO)
    try:
        dispatcher = build_dispatcher(choose_llm("fake:", {}, LLMConfig()))
        models = {"eliza": "tiny", "moss": "tiny"}
        scheduler = Scheduler(sim, dispatcher, make_thinkers(sim, models), seed=1)
        app = MudsimApp(sim, scheduler, dispatcher, {"Eliza": "tiny", "Moss": "tiny"},
                        player=sim.character("Traveler"), start_paused=True)  # fmt: skip
        assert snap_compare(app, terminal_size=(100, 30))
    finally:
        sim.close()
