"""The worlds that ship in worlds/ load cleanly and keep their promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.world.loader import load_world_file

WORLDS = Path(__file__).parents[2] / "worlds"


@pytest.mark.parametrize("name", ["demo.yaml", "pocket.yaml"])
def test_a_shipped_world_loads_with_agents_and_a_player(name: str) -> None:
    world = load_world_file(WORLDS / name)
    types = {c.type for c in world.characters.values()}
    assert types == {"agent", "player"}


def test_the_pocket_world_is_small_and_quick() -> None:
    world = load_world_file(WORLDS / "pocket.yaml")
    agents = [c for c in world.characters.values() if c.type == "agent"]
    assert len(agents) == 2
    assert all((a.immediate_window, a.recent_window) == (16, 16) for a in agents)
    assert all(a.think_interval is not None and a.think_interval <= 3 for a in agents)


def test_the_demo_world_keeps_the_default_windows() -> None:
    world = load_world_file(WORLDS / "demo.yaml")
    assert all(c.recent_window in (None, 64) for c in world.characters.values())
