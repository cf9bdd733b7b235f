from __future__ import annotations

from helpers import memories, run

from engine.sim.simulation import Simulation


def test_player_moves_and_an_agent_remembers_the_arrival(sim: Simulation) -> None:
    result = run(sim, "Pat", "go north")
    assert result.ok
    assert "The Yard" in result.text
    assert "Pat arrives from The Hall." in memories(sim, "Bo")
