"""A cancelled embedded-model call stops where it is (issue 32: a second Ctrl-C exits
at once): in the middle of its prompt's evaluation (llama.cpp's abort callback) as in
its tokens (the stopping criteria), and the model answers the next call as before."""

from __future__ import annotations

import asyncio
import threading

import pytest

from engine.llm.local import LocalBackend, local_available
from engine.llm.local_model import LocalModel, LocalResult
from engine.llm.request import LLMRequest

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not local_available(), reason="the embedded model is not installed"),
]

LONG = "The kettle sang on the stove while Wren kneaded the dough. " * 150
OPTIONS = {"num_ctx": 4096, "num_predict": 40, "temperature": 0.0, "seed": 1}


async def _until_locked(model: LocalModel) -> None:
    for _ in range(100_000):
        if model.lock.locked():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the call never began")


def _request(prompt: str) -> LLMRequest:
    return LLMRequest(prompt=lambda: prompt, model="local", options=OPTIONS, constrain=False)


async def test_a_call_cancelled_while_its_prompt_is_evaluated_ends_there() -> None:
    backend = LocalBackend()
    model = await asyncio.to_thread(backend.model, 4096)
    cancel = threading.Event()
    result: list[LocalResult] = []
    worker = threading.Thread(
        target=lambda: result.append(model.complete(LONG, OPTIONS, keep=False, cancel=cancel))
    )
    worker.start()
    await _until_locked(model)  # the call has begun: its prompt is being evaluated
    cancel.set()
    await asyncio.to_thread(worker.join)
    (ended,) = result
    # not "length" or "stop": no token was decoded, the prompt was not evaluated whole
    assert (ended.finish_reason, ended.completion_tokens) == ("cancelled", 0)
    again = await backend.generate(_request("Wren says hello to Ash and asks about the bread."))
    assert again.text.strip()  # the model answers as before
    await backend.aclose()


async def test_a_cancelled_task_stops_the_embedded_call_it_awaited() -> None:
    backend = LocalBackend()
    model = await asyncio.to_thread(backend.model, 4096)
    task = asyncio.create_task(backend.generate(_request(LONG + "\nWhat did Wren bake?")))
    await _until_locked(model)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the thread lets go of the model at once: a short call gets it and answers
    again = await backend.generate(_request("Wren says hello to Ash."))
    assert again.text.strip()
    await backend.aclose()
