"""The waterfall end to end: Bo (windows 4/4) in the fixture world, memories made by
real commands, summaries written to a real vault, the LLM a scripted backend or the
loopback stub."""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers import memories, run

from engine.errors import LLMUnavailableError
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.fake import ScriptedBackend
from engine.llm.ollama import OllamaBackend
from engine.llm.request import Generation, LLMRequest, Priority
from engine.llm.stub_server import StubOllama
from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation
from engine.vault.files import read_front_matter


class Summarizer:
    """Numbers its summaries, records what it was asked, can fail on request."""

    def __init__(self, fail: int = 0) -> None:
        self.fail = fail
        self.prompts: list[str] = []
        self.requests: list[LLMRequest] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        self.requests.append(request)
        self.prompts.append(request.prompt())
        if self.fail:
            self.fail -= 1
            raise LLMUnavailableError("the summarizer is down")
        return Generation(
            text=f"Summary {len(self.prompts)}.", prompt_tokens=10, completion_tokens=3
        )

    async def aclose(self) -> None:
        return None


def _start(sim: Simulation, llm: Summarizer | ScriptedBackend | Dispatcher) -> None:
    sim.compactor.first_delay = 0.001
    sim.compactor.max_delay = 0.004
    sim.start_compaction(llm, {c.id: "tiny" for c in sim.world.characters.values()})


async def _bo_does(sim: Simulation, count: int) -> None:
    """``count`` commands as Bo, alone in the yard but for Bea: one memory each."""
    for index in range(count):
        run(sim, "Bo", f"think Thought number {index}.")
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
    assert "Thought number 3." in chunk
    assert "Thought number 4." not in chunk  # the chunk's memories only
    assert llm.requests[0].priority is Priority.SUMMARY
    assert llm.requests[0].role == "summarizer"
    meta, body = read_front_matter(_summaries(vault_dir) / "recent.md")
    assert {k: meta[k] for k in ("summary_type", "covers_from", "covers_to", "memory_count")} == {
        "summary_type": "recent", "covers_from": 0, "covers_to": 4, "memory_count": 9,
    }  # fmt: skip
    assert "Summary 1." in body
    assert not (_summaries(vault_dir) / "longterm.md").exists()
    assert len(list(_summaries(vault_dir).glob("recent-*.md"))) == 1


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
    assert "Summary 1." in merge
    assert "Summary 2." in merge
    assert "Thought number" not in merge  # L and S only
    history = sorted(_summaries(vault_dir).glob("recent-*.md"))
    assert len(history) == 3
    prompt = build_prompt(sim, sim.character("Bo"))
    assert "## Older memories (summary)\nSummary 3.\n## Recent past (summary)\nSummary 4." in prompt


async def test_a_failed_call_commits_nothing_and_is_retried(
    sim: Simulation, vault_dir: Path
) -> None:
    llm = Summarizer(fail=2)
    _start(sim, llm)
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert bo.boundary == 4
    assert bo.failures == 2
    assert bo.last_error is None  # cleared by the commit that finally worked
    assert len(llm.prompts) == 3
    assert len(list(_summaries(vault_dir).glob("recent-*.md"))) == 1


async def test_an_empty_reply_is_a_failure(sim: Simulation) -> None:
    llm = ScriptedBackend(["look"], summary="   ")
    _start(sim, llm)
    sim.compactor.retry = False
    await _bo_does(sim, 9)
    await sim.compactor.settle(5)
    bo = sim.minds["bo"]
    assert (bo.boundary, bo.failures) == (0, 1)
    assert bo.last_error == "the summarizer's reply was empty"


async def test_never_two_compactions_in_flight_for_one_character(
    sim: Simulation, vault_dir: Path
) -> None:
    with StubOllama(replies=["I thought a lot."], models=["tiny"], delay=0.2) as stub:
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
    llm = Summarizer()
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


def test_without_an_llm_compaction_waits(sim: Simulation) -> None:
    for index in range(12):
        run(sim, "Bo", f"think {index}")
    assert sim.minds["bo"].boundary == 0
    assert run(sim, "Bo", "@compact-memories").text.startswith(
        "Bo's memories #0-#7 cannot be compacted now: this session has no language model."
    )
    prompt = build_prompt(sim, sim.character("Bo"))
    assert "---\n(5 earlier memories not yet summarized)\nthink 5" not in prompt
    block = prompt.split("---\n")[1]
    assert block.splitlines()[0] == "(5 earlier memories not yet summarized)"
    assert len(block.splitlines()) == 1 + 8  # the newest I + R
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
