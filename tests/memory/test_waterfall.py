"""The compaction schedule's arithmetic (pure): when a chunk is due and what is shown."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.agents.compactor import MAX_REJECTIONS
from engine.errors import LLMUnavailableError, VaultError
from engine.llm.fake import fake_summary
from engine.llm.request import Generation, LLMRequest
from engine.memory.backpressure import bound
from engine.memory.status import MemoryStatus, SummaryInfo
from engine.memory.summarizer_health import FAILING_AFTER
from engine.memory.summary_prompts import MERGE_CUE
from engine.memory.waterfall import (
    Chunk,
    Windows,
    backlog,
    compaction_due,
    due_chunk,
    forced_target,
    next_chunk,
    next_compaction_at,
    verbatim_count,
)
from engine.sim.simulation import Simulation


def _firing_counts(w: Windows, up_to: int) -> list[int]:
    """Append one memory at a time; each due chunk commits at once (boundary += R)."""
    fired, boundary = [], 0
    for m in range(1, up_to + 1):
        if compaction_due(m, boundary, w):
            fired.append(m)
            boundary += w.recent
    return fired


def test_default_windows_fire_at_129_then_every_64() -> None:
    assert _firing_counts(Windows(64, 64), 400) == [129, 193, 257, 321, 385]


def test_small_windows_fire_at_9_13_17() -> None:
    assert _firing_counts(Windows(4, 4), 17) == [9, 13, 17]


@given(st.integers(1, 30), st.integers(1, 30))
def test_triggers_are_at_i_plus_r_plus_1_plus_k_r(immediate: int, recent: int) -> None:
    fired = _firing_counts(Windows(immediate, recent), 20 * (immediate + recent))
    assert fired == [immediate + recent + 1 + k * recent for k in range(len(fired))]


def test_windows_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Windows(0, 4)


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 5000))
def test_next_compaction_is_the_first_due_count(immediate: int, recent: int, memories: int) -> None:
    """Appending one memory at a time from M, the first M' at which a chunk is due is
    exactly what next_compaction_at promised (boundary fixed, no commit in between)."""
    w = Windows(immediate, recent)
    boundary = max(0, memories - immediate - recent) // recent * recent
    target = next_compaction_at(memories, boundary, w)
    assert target >= memories
    if target > memories:
        assert not compaction_due(memories, boundary, w)
        assert not compaction_due(target - 1, boundary, w)
    assert compaction_due(target, boundary, w)
    assert target == boundary + immediate + recent + 1 or compaction_due(memories, boundary, w)


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 5000), st.integers(0, 5000))
def test_verbatim_never_exceeds_the_windows_or_the_tail(
    immediate: int, recent: int, memories: int, boundary: int
) -> None:
    w = Windows(immediate, recent)
    boundary = min(boundary, memories)
    shown = verbatim_count(memories, boundary, w)
    assert 0 <= shown <= immediate + recent
    assert shown <= memories - boundary
    if memories - boundary <= immediate + recent:
        assert shown == memories - boundary


def test_status_json_has_the_contract_keys_and_nulls_for_missing_summaries() -> None:
    status = MemoryStatus(
        name="Ada", type="agent", memories=130, boundary=0, windows=Windows(64, 64)
    )
    data = status.to_json()
    assert data == {
        "name": "Ada", "type": "agent", "memories": 130, "boundary": 0, "verbatim": 66,
        "immediate_window": 64, "recent_window": 64, "next_compaction_at": 130,
        "in_flight": False, "in_flight_stale": False, "failures": 0, "last_error": None,
        "summaries": None,
        "held_for_memory": {"turns": 0, "seconds": 0.0, "queued_turns": 0, "queued_seconds": 0.0},
        "short_term": None, "long_term": None, "hidden_in_last_prompt": None,
        "cut_in_last_prompt": [], "dropped_from_last_prompt": [],
        "knowledge": None,
    }  # fmt: skip
    assert "next compaction at: 130 memories" in status.render()


def test_status_shows_how_each_summary_was_made() -> None:
    status = MemoryStatus(
        name="Ada", type="agent", memories=200, boundary=128, windows=Windows(64, 64),
        short_term=SummaryInfo(64, 128, 300, "2026-01-01T00:00:00.000000Z", "extractive"),
        long_term=SummaryInfo(0, 64, 500, "2026-01-01T00:00:00.000000Z"),
    )  # fmt: skip
    data = status.to_json()
    assert data["short_term"]["method"] == "extractive"
    assert data["long_term"]["method"] == "llm"
    lines = status.render().splitlines()
    short = next(line for line in lines if "short-term summary" in line)
    assert short.endswith("; extractive (the summarizer's replies were rejected)")
    assert "extractive" not in next(line for line in lines if "long-term summary" in line)


# --- chunk selection ------------------------------------------------------------------


def _next_chunk_firings(w: Windows, up_to: int) -> list[int]:
    """Like _firing_counts, but through next_chunk: every chunk commits at once."""
    fired, boundary = [], 0
    for m in range(1, up_to + 1):
        while (chunk := next_chunk(m, boundary, w)) is not None:
            assert chunk == (boundary, boundary + w.recent)
            fired.append(m)
            boundary = chunk[1]
    return fired


def test_next_chunk_with_default_windows_fires_at_129_193_257() -> None:
    assert _next_chunk_firings(Windows(), 257) == [129, 193, 257]


@given(st.integers(1, 30), st.integers(1, 30))
def test_next_chunk_triggers_are_at_i_plus_r_plus_1_plus_k_r(immediate: int, recent: int) -> None:
    fired = _next_chunk_firings(Windows(immediate, recent), 10 * (immediate + recent))
    assert fired == [immediate + recent + 1 + k * recent for k in range(len(fired))]
    assert len(fired) >= 8


def test_due_chunk_is_the_next_r_memories_once_the_tail_passes_i_plus_r() -> None:
    w = Windows(64, 64)
    assert due_chunk(128, 0, w) is None
    assert due_chunk(129, 0, w) == (0, 64)
    assert due_chunk(300, 64, w) == (64, 128)


def test_forced_target_is_m_minus_i_or_none_when_nothing_to_compact() -> None:
    w = Windows(64, 64)
    assert forced_target(100, 0, w) == 36
    assert forced_target(64, 0, w) is None
    assert forced_target(100, 36, w) is None
    assert forced_target(101, 36, w) == 37


def test_next_chunk_with_a_small_forced_target_is_shorter_than_r() -> None:
    w = Windows(64, 64)
    assert next_chunk(100, 0, w, 36) == (0, 36)
    assert next_chunk(100, 36, w, 36) is None
    assert next_chunk(100, 0, w) is None


def test_next_chunk_walks_a_forced_target_in_chunks_of_at_most_r() -> None:
    w = Windows(64, 64)
    memories = 150 + w.immediate
    assert forced_target(memories, 0, w) == 150
    chunks, boundary = [], 0
    while (chunk := next_chunk(memories, boundary, w, 150)) is not None:
        chunks.append(chunk)
        boundary = chunk[1]
    assert chunks == [(0, 64), (64, 128), (128, 150)]


def test_a_forced_chunk_is_never_longer_than_r() -> None:
    """Unreachable through forced_target (a target past b + R means a chunk is due),
    but next_chunk caps whatever target it is given."""
    assert next_chunk(128, 0, Windows(64, 64), 100) == (0, 64)


def test_a_stale_forced_target_never_shortens_a_due_chunk() -> None:
    """The target was fixed when @compact-memories was given; the stream grew since."""
    w = Windows(64, 64)
    assert next_chunk(200, 64, w, 66) == (64, 128)
    assert next_chunk(150, 64, w, 66) == (64, 66)


def test_backlog_counts_what_the_prompt_does_not_show() -> None:
    w = Windows(64, 64)
    assert backlog(128, 0, w) == 0
    assert backlog(300, 0, w) == 192  # the block starts at 3R, the first start leaving <= I + R
    assert verbatim_count(300, 0, w) == 108
    assert verbatim_count(129, 0, w) == 65  # one past I + R: the block starts at R
    assert verbatim_count(192, 0, w) == 128  # ... and stays there for R memories
    assert verbatim_count(193, 0, w) == 65
    assert verbatim_count(193, 64, w) == 129 - 64  # a commit of [0, 64) leaves it in place


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 5000), st.integers(0, 5000))
def test_a_backlogged_block_starts_on_a_chunk_boundary_and_shows_at_least_i_plus_one(
    immediate: int, recent: int, memories: int, boundary: int
) -> None:
    w = Windows(immediate, recent)
    boundary = min(boundary, memories)
    shown = verbatim_count(memories, boundary, w)
    if memories - boundary > w.span:
        assert immediate + 1 <= shown <= w.span
        assert (memories - shown - boundary) % recent == 0
        # one more memory moves the start only when the block is full again
        after = verbatim_count(memories + 1, boundary, w)
        assert after == shown + 1 or (shown == w.span and after == shown + 1 - recent)


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 5000), st.integers(0, 5000))
def test_backlog_and_verbatim_add_up_to_the_uncovered_tail(
    immediate: int, recent: int, memories: int, boundary: int
) -> None:
    w = Windows(immediate, recent)
    boundary = min(boundary, memories)
    assert backlog(memories, boundary, w) >= 0
    assert backlog(memories, boundary, w) + verbatim_count(memories, boundary, w) == (
        memories - boundary
    )


@dataclass
class _Stream:
    """A tiny model of one agent's stream and its compaction worker: one chunk in flight
    at most; an idle worker takes the failed chunk again, or else next_chunk."""

    windows: Windows
    memories: int = 0
    boundary: int = 0
    target: int | None = None
    in_flight: Chunk | None = None
    retry: Chunk | None = None
    committed: list[Chunk] = field(default_factory=list)

    def append(self, count: int) -> None:
        self.memories += count

    def commit(self) -> None:
        if self.in_flight is not None:
            self.committed.append(self.in_flight)
            self.boundary = self.in_flight[1]
            self.in_flight = None

    def fail(self) -> None:
        self.retry, self.in_flight = self.in_flight, None

    def force(self) -> None:
        target = forced_target(self.memories, self.boundary, self.windows)
        if target is not None:
            assert target > self.boundary
            self.target = max(target, self.target or 0)

    def work(self) -> None:
        """An idle worker picks its next chunk and checks it against the rule."""
        if self.in_flight is not None:
            return
        m, b, w = self.memories, self.boundary, self.windows
        if self.retry is not None:
            chunk, self.retry = self.retry, None
            assert chunk[0] == b, "a failure leaves the boundary where it was"
            if len(range(*chunk)) == w.recent:
                assert next_chunk(m, b, w, self.target) == chunk, "the schedule drifted"
        else:
            picked = next_chunk(m, b, w, self.target)
            if picked is None:
                assert not compaction_due(m, b, w)
                assert self.target is None or self.target <= b
                return
            chunk = picked
        start, end = chunk
        assert start == b
        assert end <= m - w.immediate, "a chunk never takes the immediate window"
        if due_chunk(m, b, w) == chunk:
            assert end - start == w.recent
        else:
            assert self.target is not None
            assert 1 <= end - start <= w.recent
            assert end <= self.target
        self.in_flight = chunk

    def check(self) -> None:
        m, b, w = self.memories, self.boundary, self.windows
        assert 0 <= b <= m
        assert b == 0 or b <= m - w.immediate
        assert backlog(m, b, w) + verbatim_count(m, b, w) == m - b
        ends = [0] + [end for _, end in self.committed]
        assert [start for start, _ in self.committed] == ends[:-1], "a gap or an overlap"
        assert ends[-1] == b, "committed ranges are exactly [0, b)"
        assert all(start < end for start, end in self.committed)


_OPS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 50)),
    st.tuples(st.sampled_from(["commit", "commit", "fail", "force"]), st.just(0)),
)


@settings(max_examples=300)
@given(st.integers(1, 30), st.integers(1, 30), st.lists(_OPS, max_size=80))
def test_compaction_rule_under_appends_commits_failures_and_forcing(
    immediate: int, recent: int, ops: list[tuple[str, int]]
) -> None:
    stream = _Stream(Windows(immediate, recent))
    for op, count in ops:
        if op == "append":
            stream.append(count)
        else:
            getattr(stream, op)()
        stream.work()
        stream.check()
    while stream.in_flight is not None:  # drain: the LLM comes back and everything commits
        stream.commit()
        stream.work()
        stream.check()
    assert not compaction_due(stream.memories, stream.boundary, stream.windows)
    assert backlog(stream.memories, stream.boundary, stream.windows) == 0
    if stream.target is not None:
        assert stream.boundary >= stream.target


@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 400))
def test_forcing_then_draining_leaves_exactly_the_immediate_window(
    immediate: int, recent: int, memories: int
) -> None:
    w = Windows(immediate, recent)
    stream = _Stream(w, memories=memories)
    stream.force()
    stream.work()
    while stream.in_flight is not None:
        stream.commit()
        stream.work()
        stream.check()
    assert stream.boundary == max(0, memories - immediate)
    assert verbatim_count(memories, stream.boundary, w) == min(memories, immediate)


# --- the real Compactor under a flaky summarizer -----------------------------------------

REJECTED = {
    "empty": "\n\n",
    "echo": "",  # the prompt's own instructions
    "refusal": "I'm sorry, but as an AI I cannot summarize these memories.",
    "cut": "I noted many things and then I",
    "loop": "I noted it. I noted it. I noted it. I noted it.",
}
RAISED: dict[str, Exception] = {
    "oserror": OSError(28, "No space left on device"),
    "valueerror": ValueError("a bad value"),
    "unicode": UnicodeEncodeError("utf-8", "\udc80", 0, 1, "surrogates not allowed"),
    "llm": LLMUnavailableError("the summarizer is down"),
    "vault": VaultError("cannot write the summary"),
}


def _note(number: int) -> str:
    """What Bo thinks at its ``number``-th memory: two words of its own (``glimab`` ...),
    so that summaries have words to be about and every chunk's differ from the others'."""

    def word(n: int) -> str:
        return "glim" + chr(97 + n % 26) + chr(97 + n // 26 % 26)

    return f"the {word(number)} is near the {word(number + 300)}."


SERVER_DOWN = frozenset({"llm"})
"""The outcomes that are the summarizer's server failing (``SummarizerHealth``)."""
_OUTCOMES = st.sampled_from(["ok", "ok", "ok", *REJECTED, *RAISED])


@dataclass
class FlakySummarizer:
    """Answers each call with the next scripted outcome ("ok" once they run out):
    a good summary, each kind of bad one, or each kind of exception. It logs what
    it was asked for: (step, the boundary at the call, the outcome)."""

    outcomes: list[str]
    boundary: Callable[[], int]
    log: list[tuple[str, int, str]] = field(default_factory=list)

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        outcome = self.outcomes.pop(0) if self.outcomes else "ok"
        step = "merge" if prompt.endswith(MERGE_CUE) else "chunk"
        self.log.append((step, self.boundary(), outcome))
        if outcome in RAISED:
            raise RAISED[outcome]
        text = REJECTED.get(outcome) or fake_summary(prompt)  # (one about its memories)
        if outcome == "echo":
            text = prompt.split("\n\n", 1)[0]
        return Generation(text=text, done_reason="length" if outcome == "cut" else "stop")

    async def aclose(self) -> None:
        return None


_STEPS = st.one_of(
    st.tuples(st.just("append"), st.integers(1, 10)),
    st.tuples(st.just("yield"), st.integers(1, 30)),
    st.tuples(st.just("force"), st.just(0)),
)


async def _drive(folder: Path, steps: list[tuple[str, int]], outcomes: list[str]) -> None:
    world = folder / "world.yaml"
    world.write_text(FIXTURE_WORLD, encoding="utf-8")
    sim = Simulation.open(folder / "vault", world)
    try:
        bo = sim.minds["bo"]
        llm = FlakySummarizer(list(outcomes), lambda: bo.boundary)

        async def no_wait(delay: float) -> None:
            assert 0 < delay <= sim.compactor.max_delay
            await asyncio.sleep(0)

        sim.compactor.sleep = no_wait
        sim.start_compaction(llm, {"bo": "tiny"})
        appended = 0
        for op, count in steps:
            if op == "append" and appended + count < 120:  # Bea (windows 64/64) never compacts
                for _ in range(count):
                    sim.execute(sim.character("Bo"), f"think Note {bo.count}: {_note(bo.count)}")
                appended += count
            elif op == "force":
                sim.execute(sim.character("Bo"), "@compact-memories")
                appended += 1
            for _ in range(count if op == "yield" else 1):
                await asyncio.sleep(0)
            _check_in_flight(sim)
        await sim.compactor.settle(60)
        _check_after(sim, llm)
    finally:
        sim.close()


def _check_in_flight(sim: Simulation) -> None:
    for mind in sim.minds.values():
        worker = sim.compactor.workers.get(mind.character.id)
        if mind.in_flight:
            assert worker is not None
            assert worker.task is not None
            assert not worker.task.done()


def _check_after(sim: Simulation, llm: FlakySummarizer) -> None:
    bo = sim.minds["bo"]
    assert not any(mind.in_flight for mind in sim.minds.values())
    assert sim.compactor.workers == {}
    assert not compaction_due(bo.count, bo.boundary, bo.windows), "the waterfall caught up"
    # committed ranges: contiguous from 0 up to b, exactly one history file each
    history = bo.store.history()
    ranges = [(s.covers_from, s.covers_to) for _, s in history]
    ends = [0] + [end for _, end in ranges]
    assert [start for start, _ in ranges] == ends[:-1], "a gap or an overlap"
    assert ends[-1] == bo.boundary == bo.store.load().boundary
    assert len(set(ranges)) == len(ranges) == len({path for path, _ in history})
    # every failed attempt counted, and always with a reason (an attempt asks for the
    # merge and the chunk's summary side by side: one or both of its calls failed)
    failed = [entry for entry in llm.log if entry[2] != "ok"]
    assert bo.failures == sim.compactor.tally.failed
    assert bo.failures <= len(failed) <= 2 * bo.failures
    state = sim.vault.read_state(bo.character.folder)
    assert state.failures == bo.failures
    assert not state.in_flight
    if bo.failures:
        assert bo.last_error is not None
        assert state.last_error == bo.last_error
    # extractive only after MAX_REJECTIONS rejected replies on that step, and then no more calls
    for step in ("chunk", "merge"):
        by_key: dict[int, list[str]] = {}
        for kind, at, outcome in llm.log:
            if kind == step:
                by_key.setdefault(at, []).append(outcome)
        for outcomes in by_key.values():
            rejected = [i for i, outcome in enumerate(outcomes) if outcome in REJECTED]
            assert len(rejected) <= MAX_REJECTIONS
            if len(rejected) == MAX_REJECTIONS:
                assert rejected[-1] == len(outcomes) - 1, "asked again after the last rejection"
    answers = [o for _, _, o in llm.log if o in SERVER_DOWN or o == "ok" or o in REJECTED]
    down = max(
        (len(list(run)) for failed, run in groupby(o in SERVER_DOWN for o in answers) if failed),
        default=0,
    )  # fmt: skip  (an answer ends a run of failures)
    at_once_before = 0
    for _, summary in history:
        rejections = sum(
            1
            for kind, at, outcome in llm.log
            if kind == "chunk" and at == summary.covers_from and outcome in REJECTED
        )
        # or made at once, extractively, by the memory bound (then maybe upgraded later),
        # or while the bound outran the model (twice at once before: within the test's
        # seconds), or while the summarizer was failing (server errors in a row)
        at_once = summary.memory_count - summary.covers_from > bound(bo.windows, "agent")
        outran = at_once_before >= 2
        at_once_before += at_once
        if summary.upgraded:
            assert at_once
            assert summary.method == "llm"
        elif summary.method == "llm":
            assert rejections < MAX_REJECTIONS
        else:
            assert rejections >= MAX_REJECTIONS or at_once or outran or down >= FAILING_AFTER
        assert summary.covers_to <= summary.memory_count <= bo.count
    longterm, recent = bo.summaries.longterm, bo.summaries.recent
    if longterm is not None and recent is not None:
        assert longterm.covers_to == recent.covers_from
        assert longterm.memory_count <= recent.memory_count


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STEPS, min_size=1, max_size=25), st.lists(_OUTCOMES, max_size=40))
@example(
    [("force", 0), ("append", 3), ("force", 0), ("append", 1), ("append", 7), ("force", 0)], []
)  # the fake's merge named only words the recent memories share: "keeps nothing"
def test_the_real_compactor_keeps_the_waterfall_whole_under_a_flaky_summarizer(
    steps: list[tuple[str, int]], outcomes: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(_drive(Path(folder), steps, outcomes))
