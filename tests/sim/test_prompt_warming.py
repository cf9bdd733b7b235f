"""Warming an agent's prompt as part of its compaction: a new summary changes the prompt
near its start, so the embedded model's cached prefix no longer serves; before the last
commit the compaction worker asks for the prompt as it will read after that commit (one
token, in the background), so the agent's next turn, the first to see the commit, finds
it evaluated. Bo (windows 4/4) in the fixture world, a recording backend."""

from __future__ import annotations

import asyncio
import logging

import pytest
from helpers import numbered_summary, numbered_thought, run

from engine.errors import LLMUnavailableError
from engine.llm.request import Generation, LLMRequest, Priority
from engine.sim.prompting import build_prompt
from engine.sim.run import make_thinkers
from engine.sim.simulation import LLMLink, Simulation

said = numbered_summary
"""The backend's ``number``-th summary (one the quality gate takes)."""


class Backend:
    """Summaries are numbered; a warm request can fail or wait on request."""

    def __init__(self, *, warm_fails: bool = False, sim: Simulation | None = None) -> None:
        self.warm_fails = warm_fails
        self.sim = sim
        self.boundary_at_warm: int | None = None
        """Bo's boundary while the warm was asked (``sim`` given)."""
        self.release: asyncio.Event | None = None
        self.warming = asyncio.Event()
        """Set when a warm request arrives."""
        self.calls: list[tuple[LLMRequest, str]] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.calls.append((request, prompt))
        if request.role == "warm":
            if self.sim is not None:
                self.boundary_at_warm = self.sim.minds["bo"].boundary
            self.warming.set()
            if self.release is not None:
                await self.release.wait()
            if self.warm_fails:
                raise LLMUnavailableError("the model went away")
            return Generation(text="x", prompt_tokens=len(prompt) // 4, completion_tokens=1)
        summaries = sum(1 for r, _ in self.calls if r.role == "summarizer")
        return Generation(text=said(summaries), prompt_tokens=10, completion_tokens=3)

    def roles(self) -> list[str]:
        return [request.role for request, _ in self.calls]


def _warming(sim: Simulation, llm: Backend) -> None:
    sim.compactor.first_delay = sim.compactor.max_delay = 0.001
    sim.start_compaction(llm, {"bo": "tiny"})
    thinkers = make_thinkers(sim, {"bo": "tiny"})
    sim.llm = LLMLink(llm, {"Bo": "tiny"}, thinkers)  # type: ignore[arg-type]
    sim.compactor.warm = sim.warm_prompt


def _bo_thinks(sim: Simulation, count: int) -> None:
    for index in range(count):
        run(sim, "Bo", numbered_thought(index))


async def test_the_new_prompt_is_warmed_once_before_the_last_commit(sim: Simulation) -> None:
    llm = Backend(sim=sim)
    _warming(sim, llm)
    sim.compactor.bounded = False  # (M = 13 passes Bo's bound: the model makes both chunks)
    _bo_thinks(sim, 12)
    assert run(sim, "Bo", "@compact-memories").ok  # two chunks: #0-#3, #4-#7
    await sim.compactor.settle(5)
    assert sim.minds["bo"].boundary == 8
    assert llm.roles() == ["summarizer", "summarizer", "warm"]  # (L <- S needs no call)
    assert llm.boundary_at_warm == 4  # asked before the second chunk was committed
    request, prompt = llm.calls[-1]
    assert request.options["num_predict"] == 1
    assert request.priority is Priority.SUMMARY
    assert request.constrain is False
    assert request.agent == "Bo"
    assert said(1) in prompt  # the prompt as the next turn sees it: L and the new S
    assert said(2) in prompt
    assert prompt.rstrip().endswith("~Bo>")


async def test_no_thinker_no_warming(sim: Simulation) -> None:
    llm = Backend()
    sim.start_compaction(llm, {"bo": "tiny"})
    sim.compactor.warm = sim.warm_prompt  # but no agent is thinking (``do``)
    _bo_thinks(sim, 9)
    await sim.compactor.settle(5)
    assert llm.roles() == ["summarizer"]


async def test_a_failed_warm_is_logged_and_costs_nothing_else(
    sim: Simulation, caplog: pytest.LogCaptureFixture
) -> None:
    llm = Backend(warm_fails=True)
    _warming(sim, llm)
    _bo_thinks(sim, 9)
    with caplog.at_level(logging.WARNING, logger="mudsim"):
        await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.failures, bo.in_flight) == (4, 0, False)
    assert llm.roles() == ["summarizer", "warm"]  # not retried, not a compaction failure
    assert "the prompt of Bo was not evaluated ahead: the model went away" in caplog.text


async def test_the_end_of_a_run_waits_for_a_warm_in_progress(sim: Simulation) -> None:
    """So the states saved at close hold the prompt the next start will ask for."""
    llm = Backend()
    llm.release = asyncio.Event()
    _warming(sim, llm)
    _bo_thinks(sim, 9)
    await asyncio.wait_for(llm.warming.wait(), 5)
    asyncio.get_running_loop().call_later(0.05, llm.release.set)
    await sim.compactor.drain(5)
    assert llm.release.is_set()
    assert not sim.compactor.workers
    assert not sim.minds["bo"].in_flight


async def test_a_warm_past_the_grace_is_cancelled_and_the_commit_stays(sim: Simulation) -> None:
    llm = Backend()
    llm.release = asyncio.Event()  # never set
    _warming(sim, llm)
    _bo_thinks(sim, 9)
    await asyncio.wait_for(llm.warming.wait(), 5)
    await sim.compactor.drain(0.01)
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.in_flight) == (4, False)


async def test_the_next_turn_extends_the_warmed_prompt(sim: Simulation) -> None:
    """The turn after the commit shares the warmed prompt up to the end of its memory
    block, so a prefix cache serves all of that."""
    llm = Backend()
    _warming(sim, llm)
    _bo_thinks(sim, 9)
    await sim.compactor.settle(5)
    warmed = llm.calls[-1][1]
    turn = build_prompt(sim, sim.world.characters["bo"])
    memories_end = warmed.index("\n---\n", warmed.index("\n---\n") + 1)
    assert said(1) in warmed[:memories_end]
    assert turn[:memories_end] == warmed[:memories_end]


async def test_turns_during_the_warm_see_the_old_summaries_and_the_commit_counts_them(
    sim: Simulation,
) -> None:
    llm = Backend()
    llm.release = asyncio.Event()
    _warming(sim, llm)
    _bo_thinks(sim, 9)
    await asyncio.wait_for(llm.warming.wait(), 5)
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.summaries.recent) == (0, None)  # not committed yet
    assert said(1) not in build_prompt(sim, sim.world.characters["bo"])
    run(sim, "Bo", "think One more while the model warms.")
    llm.release.set()
    await sim.compactor.settle(5)
    assert bo.boundary == 4
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.memory_count == 10  # M at the commit, after the warm


async def test_a_backlog_warms_only_before_its_last_chunk(sim: Simulation) -> None:
    llm = Backend(sim=sim)
    _warming(sim, llm)
    sim.compactor.bounded = False  # (a backlog past the bound: as an old run's replay has)
    _bo_thinks(sim, 17)  # M = 17: chunks #0-#3, #4-#7 and #8-#11 are due one after another
    await sim.compactor.settle(5)
    assert sim.minds["bo"].boundary == 12
    # chunk, chunk (L <- S), merge + chunk, then the one warm
    assert llm.roles() == ["summarizer"] * 4 + ["warm"]
    assert llm.boundary_at_warm == 8
