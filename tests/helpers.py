"""Test helpers: the fixture world's text and one-line command runners."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import engine
from engine.commands import Result
from engine.faults import ENV as CRASH_AT
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


NUMBERS = " ".join(map(str, range(1, 13)))
"""Every number a ``numbered_summary`` names (``numbered_thought`` holds them all)."""


def numbered_thought(index: int) -> str:
    """A ``think`` command whose memory a ``numbered_summary`` summarizes truly (the
    summary gate finds every word and number of it there)."""
    return f"think Thought number {index} of {NUMBERS}."


def numbered_summary(number: int) -> str:
    """A scripted summarizer's ``number``-th summary (``number`` at most 12): one the
    summary gate takes as grounded in memories of ``numbered_thought``."""
    return f"I think thought number {number} and other thoughts, number after number."


def run(sim: Simulation, who: str, line: str) -> Result:
    """Run ``line`` as the character called ``who``."""
    return sim.execute(sim.character(who), line)


def set_actor(sim: Simulation, **update: object) -> None:
    """Change the actor profile's settings (``knowledge_tokens=0``, ``options={...}``), as
    an edit of ``config/llm.md`` would before a run."""
    llm = sim.settings.llm
    actor = llm.profiles["actor"].model_copy(update=update)
    profiles = {**llm.profiles, "actor": actor}
    sim.settings = sim.settings.model_copy(
        update={"llm": llm.model_copy(update={"profiles": profiles})}
    )
    sim.actor_options = sim.settings.llm.options_for("actor")


def memories(sim: Simulation, who: str) -> list[str]:
    """The texts of everything ``who`` remembers, oldest first."""
    return [m.text for m in sim.minds[sim.character(who).id].tail]


REPO = Path(engine.__file__).resolve().parent.parent


def mudsim_env(crash_at: str | None = None) -> dict[str, str]:
    """The environment a real ``mudsim`` process runs in: this checkout's engine, no
    debug tracebacks; ``crash_at`` names a crash point (``engine.faults``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MUDSIM_DEBUG", CRASH_AT)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if crash_at is not None:
        env[CRASH_AT] = crash_at
    return env


def mudsim_command(*argv: object) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *(str(arg) for arg in argv)]


def mudsim(
    *argv: object, crash_at: str | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """A real ``mudsim`` process (this checkout's), ``stdin`` its input, its output
    captured; ``crash_at`` names a crash point (``engine.faults``) where it SIGKILLs
    itself."""
    return subprocess.run(
        mudsim_command(*argv), input=stdin, capture_output=True, text=True, timeout=60,
        cwd=REPO, env=mudsim_env(crash_at), check=False,
    )  # fmt: skip
