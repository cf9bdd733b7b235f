"""The waterfall end to end: Bo (windows 4/4) in the fixture world, memories made by
real commands, summaries written to a real vault, the LLM a scripted backend or the
loopback stub."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import memories, numbered_summary, numbered_thought, run

from engine.agents.compactor import Compactor
from engine.agents.memory import MemoryStream
from engine.errors import LLMUnavailableError, VaultError
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.fake import ScriptedBackend, fake_summary
from engine.llm.ollama import OllamaBackend
from engine.llm.ollama_server import Completion, Refusal
from engine.llm.openai import OpenAIBackend
from engine.llm.request import Generation, LLMRequest, Priority
from engine.llm.stub_server import RELATED, StubOllama
from engine.memory.backpressure import PLAYER_PATIENCE
from engine.memory.summary_prompts import summary_budget
from engine.sim.prompting import build_prompt
from engine.sim.run import summary
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.vault.files import read_front_matter
from engine.vault.summaries import SummaryStore

said = numbered_summary
"""The summarizers' ``number``-th summary: one the quality gate takes (grounded in Bo's
memories, ``_bo_does``: every word and number of it is theirs)."""


class Summarizer:
    """Numbers its summaries, records what it was asked, can fail on request."""

    def __init__(self, fail: int = 0, *, about: Callable[[str], str] | None = None) -> None:
        self.fail = fail
        self.about = about
        """Makes each summary from its prompt (None: ``said``, numbered)."""
        self.prompts: list[str] = []
        self.requests: list[LLMRequest] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        self.requests.append(request)
        self.prompts.append(request.prompt())
        if self.fail:
            self.fail -= 1
            raise LLMUnavailableError("the summarizer is down")
        text = self.about(self.prompts[-1]) if self.about else said(len(self.prompts))
        return Generation(text=text, prompt_tokens=10, completion_tokens=3)

    async def aclose(self) -> None:
        return None


def _start(sim: Simulation, llm: Summarizer | ScriptedBackend | Dispatcher) -> None:
    sim.compactor.first_delay = 0.001
    sim.compactor.max_delay = 0.004
    sim.start_compaction(llm, {c.id: "tiny" for c in sim.world.characters.values()})


async def _bo_does(sim: Simulation, count: int) -> None:
    """``count`` commands as Bo, alone in the yard but for Bea: one memory each."""
    for index in range(count):  # (the numbers a summary may name are all in each memory)
        run(sim, "Bo", numbered_thought(index))
        await asyncio.sleep(0)


def _summaries(vault_dir: Path) -> Path:
    return vault_dir / "agents" / "Bo" / "summaries"


async def test_nine_memories_compact_the_first_four(sim: Simulation, vault_dir: Path) -> None:
    llm = Summarizer()
    _start(sim, llm)
    await _bo_does(sim, 8)
    assert llm.prompts == []  # M = 8 is not past I + R
    await _bo_does(sim, 1)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert (bo.count, bo.boundary) == (9, 4)
    assert [m.seq for m in bo.tail] == [4, 5, 6, 7, 8]
    assert len(llm.prompts) == 1
    chunk = llm.prompts[0]
    assert chunk.endswith("SUMMARY:")
    assert "Thought number 3 of" in chunk
    assert "Thought number 4 of" not in chunk  # the chunk's memories only
    assert llm.requests[0].priority is Priority.SUMMARY
    assert llm.requests[0].role == "summarizer"
    assert llm.requests[0].patience == 1  # an agent's next prompts wait for it
    meta, body = read_front_matter(_summaries(vault_dir) / "recent.md")
    assert {k: meta[k] for k in ("summary_type", "covers_from", "covers_to", "memory_count")} == {
        "summary_type": "recent", "covers_from": 0, "covers_to": 4, "memory_count": 9,
    }  # fmt: skip
    assert said(1) in body
    assert not (_summaries(vault_dir) / "longterm.md").exists()
    assert len(list(_summaries(vault_dir).glob("recent-*.md"))) == 1


async def test_a_players_summaries_are_more_patient_than_an_agents(sim: Simulation) -> None:
    """No prompt waits for a player's summaries: they let more turns go first (but not
    without limit), and both are urgent only when that character's memory is behind."""
    llm = Summarizer()
    _start(sim, llm)
    for index in range(129):  # Bea's windows are 64 and 64: M = 129 makes the first chunk due
        run(sim, "Bea", f"think Thought number {index}.")
        await asyncio.sleep(0)
    await sim.compactor.settle(5)
    assert sim.minds["bea"].boundary == 64
    beas = [r for r in llm.requests if r.agent == "Bea"]
    bos = [r for r in llm.requests if r.agent == "Bo"]  # Bo, an agent, saw Bea think
    assert beas
    assert bos
    assert all(r.priority is Priority.SUMMARY and r.patience == PLAYER_PATIENCE for r in beas)
    assert all(r.priority is Priority.SUMMARY and r.patience == 1 for r in bos)
    assert all(r.urgent is not None and not r.urgent() for r in beas + bos)


async def test_the_waterfall_merges_s_into_l_then_summarizes_the_next_chunk(
    sim: Simulation, vault_dir: Path
) -> None:
    llm = Summarizer()
    _start(sim, llm)
    for _ in range(17):
        await _bo_does(sim, 1)
        await asyncio.sleep(0.01)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert (bo.count, bo.boundary) == (17, 12)
    assert bo.summaries.recent is not None
    assert bo.summaries.longterm is not None
    assert (bo.summaries.recent.covers_from, bo.summaries.recent.covers_to) == (8, 12)
    assert (bo.summaries.longterm.covers_from, bo.summaries.longterm.covers_to) == (0, 8)
    # chunk 1; L <- S with no call; chunk 2; merge(L, S); chunk 3
    assert [p.splitlines()[-1] for p in llm.prompts] == [
        "SUMMARY:", "SUMMARY:", "COMBINED SUMMARY:", "SUMMARY:",
    ]  # fmt: skip
    merge = llm.prompts[2]
    assert said(1) in merge
    assert said(2) in merge
    assert "Thought number" not in merge  # L and S only
    history = sorted(_summaries(vault_dir).glob("recent-*.md"))
    assert len(history) == 3
    prompt = build_prompt(sim, sim.character("Bo"))
    assert f"## Older memories (summary)\n{said(3)}\n## Recent past (summary)\n{said(4)}" in prompt


async def test_a_failed_call_commits_nothing_and_is_retried(
    sim: Simulation, vault_dir: Path
) -> None:
    llm = Summarizer(
        fail=1
    )  # (twice in a row: summaries go extractive, tests/sim/test_summary_context.py)
    _start(sim, llm)
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.boundary == 4
    assert bo.failures == 1
    assert bo.last_error == "the summarizer is down"  # kept: failures > 0 always says why
    assert len(llm.prompts) == 2
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "llm"
    assert len(list(_summaries(vault_dir).glob("recent-*.md"))) == 1


async def test_an_empty_reply_is_a_failure(sim: Simulation) -> None:
    llm = ScriptedBackend(["look"], summary="   ")
    _start(sim, llm)
    sim.compactor.retry = False
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.failures) == (0, 1)
    assert bo.last_error == "summary of #0-#3 rejected: the summarizer's reply was empty"


async def test_never_two_compactions_in_flight_for_one_character(
    sim: Simulation, vault_dir: Path
) -> None:
    sim.compactor.bounded = False  # (a backlog past the bound: as an old run's replay has)
    with StubOllama(models=["tiny"], summary=RELATED, delay=0.2) as stub:
        dispatcher = Dispatcher([Endpoint(stub.url, OllamaBackend(stub.url), slots=4)])
        _start(sim, dispatcher)
        await _bo_does(sim, 9)
        await asyncio.sleep(0.05)
        assert sim.minds["bo"].in_flight
        await _bo_does(sim, 8)  # M = 17: two more chunks due, but one is in flight
        await asyncio.sleep(0.05)
        assert len(stub.requests) == 1
        assert dispatcher.in_flight == 1
        await sim.compactor.settle(10)
        await dispatcher.aclose()
    assert sim.minds["bo"].boundary == 12  # the backlog caught up chunk by chunk
    assert not sim.minds["bo"].in_flight


async def test_compact_memories_compacts_all_but_the_newest_i(sim: Simulation) -> None:
    llm = Summarizer(about=fake_summary)  # (its last chunk holds only a command's result)
    _start(sim, llm)
    await _bo_does(sim, 3)
    nothing = run(sim, "Bo", "@compact-memories")
    assert nothing.text == (
        "Nothing to compact for Bo: 3 memories are past the boundary (#0), "
        "and the newest 4 always stay word for word."
    )
    await _bo_does(sim, 3)
    result = run(sim, "Bo", "@compact-memories")
    assert result.ok
    assert result.text == (
        "Compacting Bo's memories #0-#2 in 1 chunk of at most 4; the newest 4 stay word for word."
    )
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.count) == (3, 8)  # M was read before the command's own memory
    assert run(sim, "Bo", "@compact-memories").text.startswith("Compacting Bo's memories #3-#3 ")
    await sim.compactor.settle(5)
    assert bo.boundary == 4
    assert len(llm.prompts) == 2


async def test_builders_may_compact_another_character(sim: Simulation) -> None:
    _start(sim, Summarizer())
    await _bo_does(sim, 6)
    assert not run(sim, "Pip", "@compact-memories Bo").ok
    assert run(sim, "Bea", "@compact-memories Bo").text.startswith("Compacting Bo's memories #0-#1")
    await sim.compactor.settle(5)
    assert sim.minds["bo"].boundary == 2


def test_without_an_llm_compaction_waits_until_the_bound_commits_it_extractively(
    sim: Simulation,
) -> None:
    for index in range(12):
        run(sim, "Bo", f"think {index}")
    assert sim.minds["bo"].boundary == 0  # M - b = 12 = I + 2R: within the bound, waiting
    assert run(sim, "Bo", "@compact-memories").text.startswith(
        "Bo's memories #0-#7 cannot be compacted now: this session has no language model."
    )
    bo = sim.minds["bo"]  # its own memory took it past the bound: [0, 4) committed at once
    assert (bo.count, bo.boundary) == (13, 4)
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "extractive"
    prompt = build_prompt(sim, sim.character("Bo"))
    block = prompt.split("---\n")[1]
    # 9 memories past b, windows 4/4: the block starts R = 4 past b, leaving <= I + R
    assert block.splitlines()[0] == "(4 earlier memories not yet summarized)"
    assert len(block.splitlines()) == 1 + 5
    assert block.splitlines()[1] == "You think: 8"
    assert memories(sim, "Bo")[-1].startswith("Bo's memories #0-#7")


async def test_a_restart_reads_only_the_tail_and_keeps_the_schedule(
    vault_dir: Path, world_file: Path
) -> None:
    sim = Simulation.open(vault_dir, world_file)
    _start(sim, Summarizer())
    await _bo_does(sim, 11)
    await sim.compactor.settle(5)
    sim.save()
    sim.close()
    again = Simulation.open(vault_dir, world_file)
    try:
        bo = again.minds["bo"]
        assert (bo.count, bo.boundary) == (11, 4)
        assert [m.seq for m in bo.tail] == list(range(4, 11))
        llm = Summarizer()
        _start(again, llm)
        await _bo_does(again, 1)  # M = 12: not due (12 - 4 = 8)
        await _bo_does(again, 1)  # M = 13: due, [4, 8)
        await again.compactor.settle(5)
        assert bo.boundary == 8
        assert bo.summaries.longterm is not None
        assert bo.summaries.longterm.covers_to == 4
    finally:
        again.close()


async def test_a_backlog_found_on_load_catches_up(vault_dir: Path, world_file: Path) -> None:
    sim = Simulation.open(vault_dir, world_file)
    for index in range(20):
        run(sim, "Bo", f"think {index}")  # no LLM: a backlog builds up
    sim.save()
    sim.close()
    again = Simulation.open(vault_dir, world_file)
    try:
        _start(again, Summarizer())  # the rule is checked on load
        await again.compactor.settle(5)
        assert again.minds["bo"].boundary == 12
    finally:
        again.close()


async def test_miniworld_memory_files_are_imported_then_caught_up(
    vault_dir: Path, world_file: Path
) -> None:
    Simulation.open(vault_dir, world_file).close()  # seed; Bo has no memories yet
    folder = vault_dir / "agents" / "Bo" / "memories"
    folder.mkdir(parents=True)
    for n in reversed(range(20)):  # written out of order: the file name decides
        (folder / f"20250101-1000{n:02d}-memory.md").write_text(
            f"---\ntimestamp: 2025-01-01T10:00:{n:02d}Z\ntype: memory\n---\n# Memory\n\nOld memory {n}.\n"
        )
    sim = Simulation.open(vault_dir, world_file)
    try:
        bo = sim.minds["bo"]
        assert [m.text for m in bo.tail][:3] == ["Old memory 0.", "Old memory 1.", "Old memory 2."]
        assert {m.kind.value for m in bo.tail} == {"imported"}
        assert bo.tail[0].at == "2025-01-01T10:00:00.000000Z"
        _start(sim, Summarizer())
        await sim.compactor.settle(5)
        assert bo.boundary == 12  # chunk by chunk, in the background
    finally:
        sim.close()
    again = Simulation.open(vault_dir, world_file)
    try:
        assert again.minds["bo"].count == 20  # imported once
    finally:
        again.close()


async def test_a_crash_before_the_commit_point_is_redone_once(
    vault_dir: Path, world_file: Path
) -> None:
    from engine.vault.summaries import Summary, SummaryStore

    sim = Simulation.open(vault_dir, world_file)
    _start(sim, Summarizer())
    await _bo_does(sim, 16)
    await sim.compactor.settle(5)
    assert sim.minds["bo"].boundary == 8
    sim.save()
    sim.close()
    # A crash in the middle of compacting [8, 12): the history file and L are written,
    # recent.md (the commit point) is not.
    store = SummaryStore(_summaries(vault_dir))
    before = store.load()
    assert before.recent is not None
    committed = store.recent_path.read_bytes()
    merged = Summary("L after the merge.", 0, 8, 16, "2026-01-01T00:00:00.000000Z")
    store.commit(merged, Summary("Half-done S.", 8, 12, 16, "2026-01-01T00:00:00.000000Z"))
    store.recent_path.write_bytes(committed)

    again = Simulation.open(vault_dir, world_file)
    try:
        bo = again.minds["bo"]
        assert bo.boundary == 8  # consistent: the interrupted compaction is simply redone
        llm = Summarizer()
        _start(again, llm)
        await _bo_does(again, 1)  # M = 17: [8, 12) is due again
        await again.compactor.settle(5)
        assert [p.splitlines()[-1] for p in llm.prompts] == ["SUMMARY:"]  # L already holds S
        assert bo.boundary == 12
        assert bo.summaries.longterm is not None
        assert bo.summaries.longterm.text == "L after the merge."
        ranges = [(s.covers_from, s.covers_to) for _, s in store.history()]
        assert ranges == [(0, 4), (4, 8), (8, 12)]  # one file per range, never two
    finally:
        again.close()


async def test_a_worker_stopped_before_it_ran_is_not_left_in_flight(sim: Simulation) -> None:
    _start(sim, Summarizer())
    await _bo_does(sim, 8)
    run(sim, "Bo", "think one more")  # M = 9: a worker is created, not yet run
    assert sim.minds["bo"].in_flight
    await sim.compactor.drain(0)
    assert not sim.minds["bo"].in_flight
    assert sim.compactor.workers == {}
    assert sim.minds["bo"].boundary == 0  # left pending


class Hanging(Summarizer):
    """Never answers (a model that will not finish soon)."""

    async def generate(self, request: LLMRequest) -> Generation:
        self.prompts.append(request.prompt())
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_run_end_waiting_without_limit_ends_when_the_memory_work_is_cut(
    sim: Simulation,
) -> None:
    """A batch run's end waits for its compactions as long as they take; a Ctrl-C cuts
    them (``cut_memory_short``): the wait ends, the chunk stays pending, nothing wedges."""
    llm = Hanging()
    _start(sim, llm)
    await _bo_does(sim, 9)
    for _ in range(20):
        await asyncio.sleep(0)
    assert llm.prompts
    assert sim.compactor.calls_in_flight == 1
    said: list[str] = []
    waiting = asyncio.create_task(sim.wind_down_memory(None, say=said.append))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # no limit: it would wait for ever
    assert said
    assert said[0].startswith("1 summary call")
    sim.cut_memory_short()
    await asyncio.wait_for(waiting, 5)
    bo = sim.minds["bo"]
    assert not bo.in_flight
    assert sim.compactor.workers == {}
    assert bo.boundary == 0  # left pending for the next run


# --- compaction never wedges, never spins (issue 13, items 6-9) -------------------------


class Raising(Summarizer):
    """Raises ``error`` on every call."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        self.prompts.append(request.prompt())
        raise self.error


class Replies(Summarizer):
    """Answers each summary request with the next of ``replies`` (then "Summary N.");
    a reply starting with ``CUT|`` comes back cut off by the token limit."""

    def __init__(self, replies: list[str], *, on_call: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.replies = list(replies)
        self.on_call = on_call

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.prompts.append(prompt)
        if self.on_call is not None:
            self.on_call(prompt)
        text = self.replies.pop(0) if self.replies else said(len(self.prompts))
        cut = text.startswith("CUT|")
        return Generation(text=text.removeprefix("CUT|"), done_reason="length" if cut else "stop")


def _blocked_sleep(compactor: Compactor) -> tuple[list[float], asyncio.Event]:
    """Backoff sleeps that wait for the returned event (and record their delays)."""
    delays: list[float] = []
    wake = asyncio.Event()

    async def sleep(delay: float) -> None:
        delays.append(delay)
        await wake.wait()

    compactor.sleep = sleep
    return delays, wake


@pytest.mark.parametrize(
    "error",
    [
        OSError(28, "No space left on device"),
        ValueError("a bad value"),
        UnicodeEncodeError("utf-8", "\udc80", 0, 1, "surrogates not allowed"),
        VaultError("summaries/recent.md: cannot be written"),
        LLMUnavailableError("the summarizer is down"),
    ],
    ids=["oserror", "valueerror", "unicode", "vault", "llm"],
)
async def test_any_failed_attempt_counts_backs_off_and_never_spins(
    sim: Simulation, error: Exception
) -> None:
    llm = Raising(error)
    _start(sim, llm)
    delays, _ = _blocked_sleep(sim.compactor)
    await _bo_does(sim, 9)  # a chunk is due: one call, which fails
    await _bo_does(sim, 8)  # more memories while the worker backs off
    bo = sim.minds["bo"]
    assert len(llm.prompts) == 1  # one call per attempt, never one per new memory
    assert bo.failures == 1
    assert bo.last_error is not None
    assert str(error) in bo.last_error
    assert delays
    assert 0 < delays[0] <= sim.compactor.max_delay
    assert bo.in_flight  # its worker is alive, waiting to retry
    await sim.compactor.drain(0)
    assert not bo.in_flight
    assert sim.compactor.workers == {}
    assert sim.compactor.tally.failed == 1


async def test_a_state_save_that_raises_never_leaves_the_worker_in_flight(
    sim: Simulation,
) -> None:
    llm = Summarizer()
    _start(sim, llm)
    real = sim.compactor.save_state
    saves = 0

    def flaky(mind: MemoryStream) -> None:
        nonlocal saves
        saves += 1
        if saves == 1:  # the first save of the worker: "in flight"
            raise OSError(5, "Input/output error")
        real(mind)

    sim.compactor.save_state = flaky
    await _bo_does(sim, 9)
    for _ in range(20):
        await asyncio.sleep(0)
        for mind in sim.minds.values():  # in flight only while its worker lives
            worker = sim.compactor.workers.get(mind.character.id)
            alive = worker is not None and worker.task is not None and not worker.task.done()
            assert mind.in_flight == alive
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert not bo.in_flight
    assert sim.compactor.workers == {}
    assert bo.boundary == 4  # retried after the failed save, then committed
    assert bo.failures == 1
    assert bo.last_error is not None
    assert "Input/output error" in bo.last_error


async def test_a_state_save_that_always_raises_still_never_spins(sim: Simulation) -> None:
    llm = Summarizer()
    _start(sim, llm)

    def broken(mind: MemoryStream) -> None:
        raise OSError(28, "No space left on device")

    sim.compactor.save_state = broken
    _blocked_sleep(sim.compactor)
    await _bo_does(sim, 12)
    assert len(llm.prompts) <= 1
    await sim.compactor.drain(0)
    assert not sim.minds["bo"].in_flight
    assert sim.compactor.workers == {}


BAD_REPLIES = {
    "empty after blank lines": "\n\n",
    "echo": "Summarize these memories of Bo in first person (I, me, my), in 2-4 sentences.",
    "refusal": "I'm sorry, but as an AI language model I cannot summarize these memories.",
    "as an ai": "As an AI, I do not have memories of my own.",
    "cut off": "CUT|I thought about many things, and then I thought about",
    "loop": "I thought a thought. I thought a thought. I thought a thought. I thought a thought.",
}


@pytest.mark.parametrize("kind", list(BAD_REPLIES))
async def test_a_bad_summary_is_a_failure_and_the_chunk_is_tried_again(
    sim: Simulation, vault_dir: Path, kind: str
) -> None:
    llm = Replies([BAD_REPLIES[kind]])
    _start(sim, llm)
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.failures == 1
    assert bo.last_error is not None
    assert "rejected" in bo.last_error
    assert bo.boundary == 4
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.text == said(2)  # the second reply, not the bad one
    assert bo.summaries.recent.method == "llm"
    assert len(llm.prompts) == 2


class CutStub(StubOllama):
    """The loopback stub, answering every summary as cut off by its token limit."""

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        answer = super().answer(body)
        if isinstance(answer, Completion):
            answer.done_reason = "length"
        return answer


@pytest.mark.parametrize("backend", [OllamaBackend, OpenAIBackend])
async def test_a_reply_cut_off_by_the_token_limit_is_rejected_over_http(
    sim: Simulation, backend: type[OllamaBackend] | type[OpenAIBackend]
) -> None:
    with CutStub(replies=["I thought and thought and"], models=["tiny"]) as stub:
        dispatcher = Dispatcher([Endpoint(stub.url, backend(stub.url), slots=1)])
        _start(sim, dispatcher)
        sim.compactor.retry = False
        await _bo_does(sim, 9)
        await sim.compactor.settle(10)
        await dispatcher.aclose()
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.failures) == (0, 1)
    assert bo.last_error is not None
    assert "token limit" in bo.last_error


async def test_three_rejections_commit_an_extractive_summary(
    sim: Simulation, vault_dir: Path
) -> None:
    refusal = "I'm sorry, but I cannot help with summarizing these memories."
    llm = ScriptedBackend(["look"], summary=refusal)
    _start(sim, llm)
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.boundary == 4  # memory slowed down, never stopped
    assert bo.failures == 3
    assert len(llm.prompts) == 3  # three rejected calls, then no fourth
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "extractive"
    assert "Thought number 0 of" in bo.summaries.recent.text
    assert "Thought number 4 of" not in bo.summaries.recent.text  # the chunk's memories only
    (history,) = _summaries(vault_dir).glob("recent-*.md")
    meta, _ = read_front_matter(history)
    assert meta["method"] == "extractive"
    assert read_front_matter(_summaries(vault_dir) / "recent.md")[0]["method"] == "extractive"
    status = run(sim, "Bo", "@memory-status").text
    assert "extractive" in status
    assert sim.compactor.tally.extractive == 1


class SlowRefusals(Summarizer):
    """Refuses every summary, each once ``answer`` is set (so a run's end can start
    while a call is out)."""

    def __init__(self) -> None:
        super().__init__(about=lambda _: "I'm sorry, but I cannot summarize these memories.")
        self.answer = asyncio.Event()

    async def generate(self, request: LLMRequest) -> Generation:
        await self.answer.wait()
        return await super().generate(request)


async def test_a_third_rejection_during_a_runs_end_still_commits_the_extractive_summary(
    sim: Simulation, vault_dir: Path
) -> None:
    llm = SlowRefusals()
    _start(sim, llm)
    sim.minds["bo"].rejections["chunk@0"] = 2  # two rejected earlier: this call is the last
    await _bo_does(sim, 9)
    await asyncio.sleep(0.01)
    assert sim.compactor.calls_in_flight == 1
    ending = asyncio.create_task(sim.compactor.drain(grace=5))
    await asyncio.sleep(0.01)  # the run's end waits for the call in progress
    llm.answer.set()
    await ending
    bo = sim.minds["bo"]
    assert len(llm.prompts) == 1
    assert (sim.compactor.tally.rejected, sim.compactor.tally.extractive) == (1, 1)
    assert bo.boundary == 4  # the extractive summary costs nothing: made before the end
    assert bo.summaries.recent is not None
    assert bo.summaries.recent.method == "extractive"
    assert read_front_matter(_summaries(vault_dir) / "recent.md")[0]["covers_to"] == 4


async def test_the_waterfall_keeps_flowing_when_every_reply_is_bad(
    sim: Simulation, vault_dir: Path
) -> None:
    llm = ScriptedBackend(["look"], summary="As an AI, I have no memories.")
    _start(sim, llm)
    for _ in range(17):
        await _bo_does(sim, 1)
        await asyncio.sleep(0.01)
    await sim.compactor.settle(10)
    bo = sim.minds["bo"]
    assert bo.boundary == 12
    longterm, recent = bo.summaries.longterm, bo.summaries.recent
    assert longterm is not None
    assert recent is not None
    assert (longterm.method, recent.method) == ("extractive", "extractive")
    assert longterm.covers_to == 8
    # chunk 1 (3 rejected), chunk 2 and the merge side by side (3 attempts, 2 calls
    # each), chunk 3 (3); never a fourth call of one step
    assert len(llm.prompts) == 12
    assert bo.failures == 9
    store = SummaryStore(_summaries(vault_dir))
    assert [(s.covers_from, s.covers_to) for _, s in store.history()] == [(0, 4), (4, 8), (8, 12)]
    assert len(longterm.text) <= summary_budget(sim.compactor.options)


async def test_the_longterm_memory_count_is_m_at_commit(sim: Simulation) -> None:
    def meanwhile(prompt: str) -> None:
        if prompt.endswith("\nSUMMARY:"):  # memories keep coming during the chunk call
            run(sim, "Bo", "think Meanwhile.")

    llm = Replies([], on_call=meanwhile)
    _start(sim, llm)
    for _ in range(13):
        await _bo_does(sim, 1)
        await asyncio.sleep(0.01)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    longterm, recent = bo.summaries.longterm, bo.summaries.recent
    assert longterm is not None
    assert recent is not None
    assert longterm.covers_to == recent.covers_from
    assert longterm.memory_count == recent.memory_count  # both M at the commit


async def test_the_run_summary_counts_failed_compaction_attempts(sim: Simulation) -> None:
    llm = ScriptedBackend(["look"], summary="I'm sorry, I can't assist with that request.")
    _start(sim, llm)
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    dispatcher = Dispatcher([Endpoint("fake:", ScriptedBackend())])
    line = summary(Scheduler(sim, dispatcher, {}), dispatcher, 1.0)
    assert "1 compaction (3 failed attempts, 1 extractive)" in line


async def test_a_summary_is_asked_under_the_summary_grammar_and_a_json_reply_unwrapped(
    sim: Simulation, vault_dir: Path
) -> None:
    from engine.memory.summary_grammar import SUMMARY_CONSTRAINT

    llm = ScriptedBackend(
        ["look"], summary='{"summary": "I think thought after thought. Then I think some more."}'
    )
    _start(sim, llm)
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    request = llm.requests[0]
    assert request.role == "summarizer"
    assert request.constraint is not None
    assert request.constraint() == SUMMARY_CONSTRAINT
    assert request.constrain is None  # the backend's default: on for the embedded model
    _, body = read_front_matter(_summaries(vault_dir) / "recent.md")
    assert "I think thought after thought. Then I think some more." in body
    assert "{" not in body
