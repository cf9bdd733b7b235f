"""The memory gate: an agent's turn waits (before it asks, and before its command runs)
while a character's memory is behind, goes on when a compaction commits, and counts
what it waited on the agent's ``held_for_memory``. Bo and Ada (agents) and Pat (a
player) in the fixture world, the real Simulation and Thinker. Ada's memory is the one
behind: an agent's holds the agents; a player's never does (a person typing fast would
keep it behind whatever the agents did, and the memory bound holds it without them)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import run

from engine.agents.thinker import Turn
from engine.llm.fake import ScriptedBackend
from engine.llm.request import Generation, LLMRequest
from engine.memory.record import MemoryKind
from engine.sim.run import make_thinkers
from engine.sim.simulation import Simulation


@pytest.fixture(autouse=True)
def _compacting(sim: Simulation) -> None:
    """Summaries can be made (an LLM for them), though these tests commit by hand."""
    sim.compactor.llm = ScriptedBackend()


def _behind(sim: Simulation, name: str = "Ada") -> None:
    """Put ``name`` past its limit (memories no summary covers yet)."""
    mind = next(m for m in sim.minds.values() if m.character.name == name)
    limit = mind.windows.immediate + (2 if mind.character.type == "agent" else 3) * (
        mind.windows.recent
    )
    while mind.count - mind.boundary < limit:
        mind.record(MemoryKind.THOUGHT, "A thought.", location=None, occupants=[])


async def _catch_up(sim: Simulation, name: str = "Ada") -> None:
    """What a compaction's commit does for the gate: b moves, the gate is told."""
    mind = next(m for m in sim.minds.values() if m.character.name == name)
    mind.boundary = mind.count
    sim.memory_gate.changed()
    await asyncio.sleep(0)


async def test_a_turn_waits_before_it_asks_while_someone_is_behind(sim: Simulation) -> None:
    llm = ScriptedBackend(["think Still here."])
    thinker = make_thinkers(sim, {"bo": "tiny"})["bo"]
    bo = sim.minds["bo"]
    _behind(sim)
    assert [m.character.name for m in sim.memory_gate.lagging()] == ["Ada"]

    async def turn() -> Turn:
        async with sim.memory_gate.turn(bo) as hold:
            return await thinker.take_turn(llm, hold)

    task = asyncio.create_task(turn())
    await asyncio.sleep(0.05)
    assert not task.done()
    assert llm.prompts == []  # it has not asked
    assert sim.memory_gate.waiting == 1
    await _catch_up(sim)
    done = await asyncio.wait_for(task, 5)
    assert done.command == "think Still here."
    assert sim.memory_gate.waiting == 0
    assert bo.held_turns == 1
    assert bo.held_seconds > 0  # how long depends on the machine: that it counted, not how much


async def test_a_command_waits_when_memory_fell_behind_while_it_asked(sim: Simulation) -> None:
    """Behind only once the reply is back: the command (which makes the memories) waits."""
    bo = sim.minds["bo"]
    release = asyncio.Event()

    class Slow:
        async def generate(self, request: LLMRequest) -> Generation:
            request.prompt()
            _behind(sim)  # a crowd spoke meanwhile
            await release.wait()
            return Generation("say Hello there.", done_reason="stop")

    thinker = make_thinkers(sim, {"bo": "tiny"})["bo"]

    async def turn() -> Turn:
        async with sim.memory_gate.turn(bo) as hold:
            return await thinker.take_turn(Slow(), hold)

    count = bo.count
    task = asyncio.create_task(turn())
    await asyncio.sleep(0.01)
    release.set()
    await asyncio.sleep(0.05)
    assert not task.done()
    assert bo.count == count  # its command has not run: no memory
    await _catch_up(sim)
    done = await asyncio.wait_for(task, 5)
    assert done.command == "say Hello there."
    assert bo.count == count + 1
    assert bo.held_turns == 1  # counted once, however many times it waited


async def test_a_turn_cancelled_while_held_counts_what_it_waited(sim: Simulation) -> None:
    bo = sim.minds["bo"]
    _behind(sim)

    async def turn() -> None:
        async with sim.memory_gate.turn(bo) as hold:
            await hold()

    task = asyncio.create_task(turn())
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sim.memory_gate.waiting == 0
    assert bo.held_turns == 1


async def test_nobody_behind_nothing_waits_nothing_is_counted(sim: Simulation) -> None:
    bo = sim.minds["bo"]
    async with sim.memory_gate.turn(bo) as hold:
        await asyncio.wait_for(hold(), 1)
    assert (bo.held_turns, bo.held_seconds) == (0, 0.0)


async def test_a_players_memory_behind_holds_no_agent(sim: Simulation) -> None:
    _behind(sim, "Pat")
    assert sim.memory_gate.lagging() == []
    assert not sim.memory_gate.anyone_behind()
    async with sim.memory_gate.turn(sim.minds["bo"]) as hold:
        await asyncio.wait_for(hold(), 1)
    assert sim.minds["bo"].held_turns == 0


async def test_a_gate_turned_off_never_holds(sim: Simulation) -> None:
    """A replay of a run recorded before the gate existed."""
    sim.memory_gate.enabled = False
    _behind(sim)
    assert sim.memory_gate.lagging() == []
    async with sim.memory_gate.turn(sim.minds["bo"]) as hold:
        await asyncio.wait_for(hold(), 1)


async def test_held_for_memory_is_kept_in_the_vault_and_shown(
    sim: Simulation, vault_dir: Path
) -> None:
    from engine.sim.status import read_status

    bo = sim.minds["bo"]
    bo.held_turns, bo.held_seconds = 3, 1.25
    sim.save()
    shown = run(sim, "Bo", "@memory-status").text
    assert "held for memory: 3 turns waited 1.2 s in all for summaries" in shown
    (status,) = [s for s in read_status(vault_dir) if s.name == "Bo"]
    assert status.to_json()["held_for_memory"] == {"turns": 3, "seconds": 1.25,
                                                   "queued_turns": 0, "queued_seconds": 0.0}  # fmt: skip


async def test_without_a_summarizer_nobody_waits_for_summaries_that_cannot_come(
    sim: Simulation,
) -> None:
    """No LLM for compactions (none started): holding would hold for ever."""
    sim.compactor.llm = None
    _behind(sim)
    assert sim.memory_gate.lagging() == []
    async with sim.memory_gate.turn(sim.minds["bo"]) as hold:
        await asyncio.wait_for(hold(), 1)
