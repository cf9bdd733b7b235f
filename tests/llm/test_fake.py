from __future__ import annotations

from pathlib import Path

import pytest

from engine.agents.thinker import Turn
from engine.errors import LLMUnavailableError
from engine.llm.fake import DEFAULT_SCRIPT, ScriptedBackend
from engine.llm.request import LLMRequest
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation


def _request(prompt: str = "You are Ada.\n~Ada>", agent: str | None = None) -> LLMRequest:
    return LLMRequest(prompt=lambda: prompt, model="test", agent=agent)


async def test_replies_in_order_then_cycle_and_records_prompts() -> None:
    backend = ScriptedBackend(["look", "say Hi"])
    texts = [(await backend.generate(_request(f"p{i}"))).text for i in range(3)]
    assert texts == ["look", "say Hi", "look"]
    assert backend.prompts == ["p0", "p1", "p2"]


async def test_each_agent_walks_the_script_from_its_own_start() -> None:
    """Turns only: a summary asked in between takes no step of the agent's walk."""
    backend = ScriptedBackend.from_spec("say Hello;look")
    summary = LLMRequest(prompt=lambda: "MEMORIES:\nx", model="t", agent="Ada", role="summarizer")
    texts = []
    for name in ["Ada", "Ada", "Bo", "Ada", "Bo", "Bo"]:
        texts.append((await backend.generate(_request(agent=name))).text)
        await backend.generate(summary)
    assert texts == ["say Hello", "look", "say Hello", "say Hello", "look", "say Hello"]


async def test_a_shared_script_is_one_walk_for_all_agents() -> None:
    backend = ScriptedBackend.from_spec("script=shared;say Hello;look")
    assert backend.replies == ["say Hello", "look"]
    texts = [(await backend.generate(_request(agent=name))).text for name in ["Ada", "Bo", "Bo"]]
    assert texts == ["say Hello", "look", "say Hello"]


async def test_every_agent_of_a_run_says_hello_then_looks_whatever_the_order(
    tmp_path: Path, world_file: Path
) -> None:
    """The thinker rejects a repeated ``say``; with each agent's own walk none is asked
    for, so ``say Hello;look`` is every agent's say, then look, in any agents' order."""
    for seed in range(6):
        sim = Simulation.open(tmp_path / f"vault-{seed}", world_file)
        try:
            models = {c.id: "tiny" for c in sim.world.characters.values() if c.type == "agent"}
            llm = ScriptedBackend.from_spec("say Hello;look")
            scheduler = Scheduler(sim, llm, make_thinkers(sim, models, seed), seed=seed)
            heard: list[Happening] = []
            scheduler.listen(heard.append)
            await scheduler.run(turns=2)
        finally:
            sim.close()
        turns = [h for h in heard if isinstance(h, Turn)]
        for name in ("Ada", "Bo"):
            own = [t for t in turns if t.agent == name]
            assert [(t.command, t.rejected, t.fell_back) for t in own] == [
                ("say Hello", (), False), ("look", (), False)], seed  # fmt: skip


async def test_the_prompt_factory_is_called_at_generation_time() -> None:
    seen: list[str] = []
    state = {"room": "hall"}

    def prompt() -> str:
        seen.append(state["room"])
        return state["room"]

    request = LLMRequest(prompt=prompt, model="test")
    state["room"] = "yard"
    await ScriptedBackend(["look"]).generate(request)
    assert seen == ["yard"]


async def test_fail_first_raises_then_answers() -> None:
    backend = ScriptedBackend(["look"], fail_first=1)
    with pytest.raises(LLMUnavailableError):
        await backend.generate(_request())
    assert (await backend.generate(_request())).text == "look"


def test_spec_parsing() -> None:
    assert ScriptedBackend.from_spec("look; say Hi ;").replies == ["look", "say Hi"]
    assert ScriptedBackend.from_spec("").replies == list(DEFAULT_SCRIPT)
    with pytest.raises(ValueError, match="at least one"):
        ScriptedBackend([])


def test_faithful_summaries_keep_the_memories_words() -> None:
    from engine.llm.fake import FAITHFUL, faithful_summary
    from engine.memory.summary_prompts import chunk_prompt, merge_prompt
    from engine.memory.summary_quality import judge_summary

    backend = ScriptedBackend.from_spec("summaries=faithful;look")
    assert backend.replies == ["look"]
    assert backend.summary == FAITHFUL
    memories = ['Bo says, "The gate is red."', "You go north to The Yard.", "Pat waves."]
    prompt = chunk_prompt("Ada", memories)
    summary = faithful_summary(prompt, 400)
    assert all(memory in summary for memory in memories)
    assert judge_summary(summary, prompt).problem is None  # the gate takes it
    merged = faithful_summary(merge_prompt("Ada", "I slept.", summary), 400)
    assert "The gate is red." in merged
    assert "I slept." in merged
