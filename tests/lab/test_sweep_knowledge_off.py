"""``knowledge: false`` in ``config/memory_compaction.md`` (what a sweep's ``knowledge: off``
writes): no knowledge pass starts, not every ``consolidate_every`` memories, not at the
end of a run, not on ``@consolidate``; so no handbook is written either. Memory
compaction goes on as before."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run

from engine.lab.fork import apply_settings, settings_with
from engine.llm.request import Generation, LLMRequest
from engine.sim.simulation import Simulation


class Model:
    """Answers every call; remembers each request's role."""

    def __init__(self) -> None:
        self.roles: list[str] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        self.roles.append(request.role)
        return Generation(text="[]" if request.role == "consolidator" else "I had a quiet day.",
                          prompt_tokens=1, completion_tokens=1)  # fmt: skip


def _open(vault_dir: Path, world_file: Path, knowledge: bool) -> Simulation:
    config = vault_dir / "config"
    config.mkdir(parents=True)
    (config / "memory_compaction.md").write_text(
        f"---\nknowledge: {str(knowledge).lower()}\nconsolidate_every: 2\n---\n", encoding="utf-8"
    )
    return Simulation.open(vault_dir, world_file)


@pytest.fixture
def off(vault_dir: Path, world_file: Path) -> Iterator[Simulation]:
    sim = _open(vault_dir, world_file, knowledge=False)
    yield sim
    sim.close()


async def _live(sim: Simulation, model: Model) -> None:
    sim.start_compaction(model, {c.id: "tiny" for c in sim.world.characters.values()})
    for line in ("note Well -> The well is dry.", "say The well is dry.", "look", "look", "look"):
        run(sim, "Ada", line)
    await sim.settle_memory(5)
    await sim.wind_down_memory(5)


async def test_no_pass_starts_and_no_handbook_is_written(off: Simulation, vault_dir: Path) -> None:
    model = Model()
    await _live(off, model)
    assert "consolidator" not in model.roles
    ada = vault_dir / "agents" / "Ada"
    assert not (ada / "knowledge" / "passes").exists()
    assert not (ada / "handbook" / "memory_summary.md").exists()
    said = run(off, "Ada", "@consolidate").text
    assert said == ("Ada's knowledge is not consolidated: knowledge passes are off "
                    "(knowledge: false in config/memory_compaction.md).")  # fmt: skip
    await off.settle_memory(5)
    assert "consolidator" not in model.roles
    assert off.knowledge.tally.passes == 0


async def test_compaction_goes_on_without_knowledge(off: Simulation) -> None:
    model = Model()
    off.start_compaction(model, {c.id: "tiny" for c in off.world.characters.values()})
    for _ in range(12):  # Bo's windows are 4 and 4: more than 8 unsummarized compacts
        run(off, "Bo", "look")
    await off.settle_memory(5)
    assert "summarizer" in model.roles
    assert off.minds[off.character("Bo").id].status().boundary > 0


async def test_with_knowledge_on_the_same_life_makes_passes(
    vault_dir: Path, world_file: Path
) -> None:
    sim = _open(vault_dir, world_file, knowledge=True)
    try:
        model = Model()
        await _live(sim, model)
        assert "consolidator" in model.roles
        assert (vault_dir / "agents" / "Ada" / "knowledge" / "passes").is_dir()
    finally:
        sim.close()


def test_a_fork_can_turn_knowledge_off(sim: Simulation) -> None:
    assert sim.knowledge.enabled
    apply_settings(sim, settings_with(sim.settings, ("memory_compaction.knowledge=false",)))
    assert not sim.knowledge.enabled
