from __future__ import annotations

import pytest

from engine.errors import LLMUnavailableError
from engine.llm.fake import DEFAULT_SCRIPT, ScriptedBackend
from engine.llm.request import LLMRequest


def _request(prompt: str = "You are Ada.\n~Ada>") -> LLMRequest:
    return LLMRequest(prompt=lambda: prompt, model="test")


async def test_replies_in_order_then_cycle_and_records_prompts() -> None:
    backend = ScriptedBackend(["look", "say Hi"])
    texts = [(await backend.generate(_request(f"p{i}"))).text for i in range(3)]
    assert texts == ["look", "say Hi", "look"]
    assert backend.prompts == ["p0", "p1", "p2"]


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
