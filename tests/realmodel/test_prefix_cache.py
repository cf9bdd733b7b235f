"""The embedded model's prefix cache across a restart: the newest prompt states are
saved when the backend closes and loaded with the model, so the first turn after a
restart evaluates only what changed. Also: what a broken saved state costs (nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.llm.local import LocalBackend, local_available
from engine.llm.prefix_cache import SUFFIX
from engine.llm.request import LLMRequest

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not local_available(), reason="the embedded model is not installed"),
]

PROMPT = "You are Wren. A cheerful cook.\n" + "Ash says hello and asks about the bread.\n" * 20
OPTIONS = {"num_ctx": 2048, "num_predict": 2, "temperature": 0.0, "seed": 1}


def _request(prompt: str) -> LLMRequest:
    return LLMRequest(prompt=lambda: prompt, model="local", options=OPTIONS)


async def test_states_saved_at_close_are_loaded_by_the_next_backend() -> None:
    first = LocalBackend()
    reply = await first.generate(_request(PROMPT))
    folder = first.model(2048).saved_prefixes
    assert folder is not None
    await first.aclose()
    saved = list(folder.glob(f"*{SUFFIX}"))
    assert len(saved) == 1

    second = LocalBackend()
    model = second.model(2048)
    cached = model._llama.cache  # the loaded state is in the new model's cache
    assert len(cached.cache_state) == 1
    key = next(iter(cached.cache_state))
    assert len(key) == reply.prompt_tokens + reply.completion_tokens
    again = await second.generate(_request(PROMPT + "Wren says"))
    assert again.text  # the restored state gives a real completion
    await second.aclose()


async def test_a_corrupt_saved_state_is_removed_and_the_model_still_answers(
    tmp_path: Path,
) -> None:
    first = LocalBackend()
    await first.generate(_request(PROMPT))
    folder = first.model(2048).saved_prefixes
    assert folder is not None
    await first.aclose()
    (state,) = folder.glob(f"*{SUFFIX}")
    header, _, blob = state.read_bytes().partition(b"\n")
    state.write_bytes(header + b"\n" + blob[: len(blob) // 2])  # cut in half
    (folder / f"junk{SUFFIX}").write_bytes(b"not a state")

    backend = LocalBackend()
    model = backend.model(2048)
    assert len(model._llama.cache.cache_state) == 0
    assert not list(folder.glob(f"*{SUFFIX}"))
    reply = await backend.generate(_request(PROMPT))
    assert reply.text
    await backend.aclose()
