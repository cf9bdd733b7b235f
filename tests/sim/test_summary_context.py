"""A summarizer with a small context never wedges: chunk prompts are fitted to its
``num_ctx`` (the longest memory lines cut), a chunk that cannot fit even so is summarized
extractively at once, and a refused request counts as a rejection (three, then the
extractive summary), while a server error backs off and is tried again. Bo (windows
4/4) in the fixture world; the summarizer a backend that refuses what its context
cannot hold, as llama.cpp does."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest
from helpers import run

from engine.errors import LLMRequestError, LLMResponseError
from engine.llm.fake import fake_summary
from engine.llm.request import Generation, LLMRequest
from engine.memory.summarizer_health import FAILING_AFTER
from engine.memory.summary_prompts import CHARS_PER_TOKEN, prompt_budget
from engine.memory.tokens import estimate_tokens
from engine.memory.waterfall import compaction_due
from engine.sim.simulation import Simulation


class SmallContext:
    """Refuses a prompt longer than its context (three characters a token), as the
    embedded model does ("Requested tokens exceed context window"); else summarizes."""

    def __init__(self, *, status: int | None = None) -> None:
        self.status = status
        self.prompts: list[str] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.prompts.append(prompt)
        context = int(request.options["num_ctx"]) - int(request.options["num_predict"])
        if len(prompt) / CHARS_PER_TOKEN > context:
            message = f"Requested tokens ({len(prompt) // 3}) exceed context window of {context}"
            if self.status is None:
                raise LLMRequestError(f"the embedded model refused the request: {message}")
            raise LLMResponseError(f"HTTP {self.status}: {message}", status=self.status)
        return Generation(fake_summary(prompt), done_reason="stop")

    async def aclose(self) -> None:
        return None


def _start(sim: Simulation, llm: SmallContext, num_ctx: int) -> None:
    sim.compactor.options = {"num_ctx": num_ctx, "num_predict": 48, "stop": ["\n\n"]}
    sim.compactor.first_delay = sim.compactor.max_delay = 0.001
    sim.start_compaction(llm, {"bo": "tiny"})


async def _bo_says(sim: Simulation, count: int, length: int) -> None:
    for n in range(count):
        run(sim, "Bo", f"think Thought {n}: " + "the forge is hot and the anvil rings " * length)
        await asyncio.sleep(0)


async def test_long_memories_are_cut_to_fit_the_summarizers_context(sim: Simulation) -> None:
    llm = SmallContext()
    _start(sim, llm, num_ctx=400)
    await _bo_says(sim, 9, length=40)  # memories of some 1,500 characters each
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.boundary == 4
    assert bo.failures == 0
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "llm"
    (prompt,) = llm.prompts
    assert estimate_tokens(prompt) <= (prompt_budget(sim.compactor.options) or 0)
    assert all(f"Thought {n}:" in prompt for n in range(4))  # every memory, each cut
    assert prompt.count("…") == 4


async def test_a_chunk_that_cannot_fit_is_summarized_without_the_model(sim: Simulation) -> None:
    llm = SmallContext()
    _start(sim, llm, num_ctx=90)  # not even the instructions fit
    await _bo_says(sim, 9, length=2)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.boundary == 4
    assert llm.prompts == []
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "extractive"


@pytest.mark.parametrize("status", [None, 400, 413], ids=["embedded", "http-400", "http-413"])
async def test_a_request_the_model_refuses_counts_as_a_rejection(
    sim: Simulation, status: int | None
) -> None:
    """What fitting cannot help (a model whose context is smaller than it says): three
    refusals, then the extractive summary; the worker never asks a fourth time."""
    llm = SmallContext(status=status)
    _start(sim, llm, num_ctx=8192)
    claims = sim.compactor.options

    async def refuse(request: LLMRequest) -> Generation:  # its real context is 400 tokens
        return await SmallContext.generate(
            llm, replace(request, options={**claims, "num_ctx": 400})
        )

    llm.generate = refuse  # type: ignore[method-assign]
    await _bo_says(sim, 9, length=40)
    await asyncio.wait_for(sim.compactor.settle(5), 10)
    bo = sim.minds["bo"]
    assert bo.boundary == 4
    assert len(llm.prompts) == 3
    assert bo.failures == 3
    assert bo.last_error is not None
    assert "refused the request" in bo.last_error
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "extractive"


async def test_a_server_error_is_no_rejection_it_is_tried_again(sim: Simulation) -> None:
    calls = 0
    said: list[str] = []

    class Busy:
        async def generate(self, request: LLMRequest) -> Generation:
            nonlocal calls
            calls += 1
            prompt = request.prompt()
            if calls <= 1:
                raise LLMResponseError("HTTP 503: loading the model", status=503)
            return Generation(fake_summary(prompt), done_reason="stop")

        async def aclose(self) -> None:
            return None

    sim.compactor.notice = said.append
    sim.compactor.first_delay = sim.compactor.max_delay = 0.001
    sim.start_compaction(Busy(), {"bo": "tiny"})
    await _bo_says(sim, 9, length=1)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.boundary == 4
    assert bo.failures == 1
    assert bo.rejections == {}
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "llm"
    assert said == [
        said[0],
        "summaries answer again after 1 failed call; the model writes them",
    ]
    assert said[0].startswith("summaries failing: HTTP 503: loading the model (1 since ")
    assert said[0].endswith("; retrying")


async def test_a_summarizer_that_keeps_failing_is_said_and_summaries_go_extractive(
    sim: Simulation,
) -> None:
    said: list[str] = []

    class Down:
        calls = 0

        async def generate(self, request: LLMRequest) -> Generation:
            Down.calls += 1
            request.prompt()
            raise LLMResponseError("HTTP 500: internal error", status=500)

        async def aclose(self) -> None:
            return None

    calls_when_said: list[int] = []

    def hear(line: str) -> None:
        said.append(line)
        calls_when_said.append(Down.calls)

    sim.compactor.notice = hear
    sim.compactor.first_delay = sim.compactor.max_delay = 0.001
    sim.start_compaction(Down(), {"bo": "tiny"})
    await _bo_says(sim, 9, length=1)
    await sim.compactor.settle(5)
    await _bo_says(sim, 24, length=1)  # failing: these chunks ask no model
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert not compaction_due(bo.count, bo.boundary, bo.windows), "memory kept up"
    history = [summary for _, summary in bo.store.history()]
    assert len(history) >= 6
    assert all(summary.method == "extractive" for summary in history)
    assert len(said) == 2
    assert Down.calls == calls_when_said[1]  # no call until a minute has passed
    assert bo.failures == FAILING_AFTER
    assert said[0].endswith("; retrying")
    assert said[1].startswith("summaries failing: HTTP 500: internal error (2 since ")
    note = sim.vault.read_state(bo.character.folder).summaries  # status --json shows it
    assert note is not None
    assert note.endswith("; writing extractive summaries")
    assert f"summaries now: {note}" in bo.status().render()
    assert said[1].endswith("; writing extractive summaries")
