"""Test helpers: the fixture world's text and one-line command runners."""

from __future__ import annotations

from engine.commands import Result
from engine.sim.simulation import Simulation

FIXTURE_WORLD = """\
name: Fixture
rooms:
  - id: hall
    name: The Hall
    description: A long hall with a stone floor.
    exits: {north: yard, stair: tower}
  - id: yard
    name: The Yard
    description: A muddy yard.
  - id: tower
    name: The Tower
    description: A windy room at the top of a stair.
    exits: {east: {to: cellar, one_way: true}}
  - id: cellar
    name: The Cellar
    description: Damp and dark.
    exits: {up: hall}
objects:
  - {id: lamp, name: a brass lamp, description: It gives a warm light., location: hall}
  - {id: well, name: an old well, description: Deep and cold., location: yard, aliases: [hole]}
characters:
  - name: Ada
    type: agent
    location: hall
    profile: A careful gardener.
    description: A woman with soil on her boots.
  - name: Bo
    type: agent
    location: yard
    profile: A quiet smith.
    description: Broad shoulders, a leather apron.
    immediate_window: 4
    recent_window: 4
  - name: Pat
    type: player
    role: admin
    location: hall
    description: A traveller in a grey cloak.
  - name: Pip
    type: player
    location: hall
    description: A small, curious child.
  - name: Bea
    type: player
    role: builder
    location: yard
"""


def run(sim: Simulation, who: str, line: str) -> Result:
    """Run ``line`` as the character called ``who``."""
    return sim.execute(sim.character(who), line)


def memories(sim: Simulation, who: str) -> list[str]:
    """The texts of everything ``who`` remembers, oldest first."""
    return [m.text for m in sim.minds[sim.character(who).id].tail]
