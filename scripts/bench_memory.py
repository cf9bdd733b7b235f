"""Benchmarks of memory at scale (run by ``bench.py memory``): prompt size as memories
grow, the cost of one append as M grows, resuming a big vault, and resuming one agent
whose journal is a thousand times longer."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from bench_common import REPEATS

from engine.llm.fake import ScriptedBackend
from engine.memory.record import MemoryKind, MemoryRecord, utc_now
from engine.memory.waterfall import Windows
from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation
from engine.vault.summaries import Summary, SummaryStore

ONE_AGENT = """\
name: Memory bench
rooms:
  - {id: cell, name: The Cell, description: Four walls and a window.}
characters:
  - {name: Hermit, type: agent, location: cell, profile: A patient thinker.}
"""


async def _grow(sim: Simulation, upto: int, sizes: dict[int, int], marks: set[int]) -> None:
    hermit = sim.character("Hermit")
    mind = sim.minds[hermit.id]
    while mind.count < upto:
        sim.execute(hermit, f"think Thought number {mind.count}, about the window and the light.")
        if mind.count % 16 == 0:
            await asyncio.sleep(0)  # let the compaction worker run
        if mind.count in marks:
            await sim.compactor.settle(30)
            sizes[mind.count] = len(build_prompt(sim, hermit))


def _hermit(folder: Path) -> Simulation:
    """A new vault with one agent alone, compacting through the instant scripted backend."""
    world = folder / "one.yaml"
    world.write_text(ONE_AGENT, encoding="utf-8")
    sim = Simulation.open(folder / "vault", world)
    sim.start_compaction(ScriptedBackend(), {"hermit": "bench"})
    return sim


async def _prompt_sizes(folder: Path) -> dict[int, int]:
    sim = _hermit(folder)
    try:
        sizes: dict[int, int] = {}
        await _grow(sim, 10_000, sizes, {200, 1_000, 1_032, 9_992, 10_000})
        return sizes
    finally:
        sim.close()


async def _append_costs(folder: Path) -> dict[int, float]:
    """Microseconds per memory (record + the compaction check) around M = 1k and 10k."""
    sim = _hermit(folder)
    try:
        mind = sim.minds["hermit"]
        costs: dict[int, float] = {}
        for mark in (1_000, 10_000):
            while mind.count < mark:
                _remember(sim, mind.count)
                if mind.count % 16 == 0:
                    await asyncio.sleep(0)
            await sim.compactor.settle(30)
            start = time.perf_counter()
            for _ in range(1_000):
                _remember(sim, mind.count)
            costs[mark] = (time.perf_counter() - start) / 1_000 * 1e6
            await sim.compactor.settle(30)
        return costs
    finally:
        sim.close()


def _remember(sim: Simulation, n: int) -> None:
    mind = sim.minds["hermit"]
    mind.record(
        MemoryKind.OBSERVATION, f"Rain taps the window ({n}).", location="cell", occupants=[]
    )
    sim.compactor.poke(mind)


def _big_vault(root: Path, agents: int, memories: int) -> tuple[Path, Path]:
    """A seeded vault whose agents each have ``memories`` memories, compacted up to
    the last I + R (written directly: making them through the engine would take long)."""
    lines = ["name: Big", "rooms:", "  - {id: hall, name: The Hall}", "characters:"]
    lines += [
        f"  - {{name: Agent{a}, type: agent, location: hall, profile: A talker.}}"
        for a in range(agents)
    ]
    world = root / "big.yaml"
    world.write_text("\n".join(lines) + "\n", encoding="utf-8")
    vault = root / "vault"
    Simulation.open(vault, world).close()
    at = utc_now()
    windows = Windows()
    boundary = (memories - windows.span) // windows.recent * windows.recent
    for a in range(agents):
        folder = vault / "agents" / f"Agent{a}"
        folder.mkdir(parents=True, exist_ok=True)
        _write_journal(folder / "memories.jsonl", memories, f"Agent{(a + 1) % agents}", at)
        store = SummaryStore(folder / "summaries")
        longterm = Summary("Long ago I arrived here.", 0, boundary - 64, memories, at)
        store.commit(
            longterm, Summary("Lately I talked a lot.", boundary - 64, boundary, memories, at)
        )
    return world, vault


def _write_journal(path: Path, memories: int, speaker: str, at: str) -> None:
    """``memories`` records of ``speaker`` talking, written as plain bytes from one
    record's JSON (a million in a few seconds; pydantic per line would take a minute)."""
    sample = MemoryRecord(seq=123456789, at=at, kind=MemoryKind.OBSERVATION, location="hall",
                          text=f'{speaker} says, "Remember 987654321."', occupants=[speaker])  # fmt: skip
    template = sample.to_json().replace(b"123456789", b"%d").replace(b"987654321", b"%d") + b"\n"
    assert MemoryRecord.from_json(template % (7, 7)).seq == 7
    with open(path, "wb") as journal:
        for first in range(0, memories, 10_000):
            seqs = range(first, min(first + 10_000, memories))
            journal.write(b"".join(template % (seq, seq) for seq in seqs))


def bench_resume(small: int = 1_000, big: int = 1_000_000) -> dict[str, float]:
    """Opening a vault whose one agent has ``small`` vs ``big`` memories, compacted up to
    the last I + R: a resume reads the journal's tail backwards, so the two must be
    within 2x (the journal's size must not matter)."""
    out: dict[str, float] = {}
    for memories in (small, big):
        with tempfile.TemporaryDirectory() as tmp:
            world, vault = _big_vault(Path(tmp), 1, memories)
            Simulation.open(vault, world).close()  # warm: imports, page cache
            times = []
            for _ in range(3 * REPEATS):  # a resume is quick: more repeats, steadier median
                start = time.perf_counter()
                sim = Simulation.open(vault, world)
                times.append(time.perf_counter() - start)
                assert sim.minds["agent0"].count == memories
                sim.close()
        out[f"resume_ms_1x{memories}"] = statistics.median(times) * 1e3
        out[f"resume_ms_1x{memories}_min"] = min(times) * 1e3
        out[f"resume_ms_1x{memories}_max"] = max(times) * 1e3
    out["resume_ratio_big_to_small"] = out[f"resume_ms_1x{big}"] / out[f"resume_ms_1x{small}"]
    return out


def bench_memory() -> dict[str, float]:
    """Prompt characters at 200, 1,000 and 10,000 memories (the ratio must stay <= 1.2),
    and at 200, 1,032 and 9,992, which sit at the same point of the compaction cycle;
    the cost of one append at M = 1,000 and 10,000 (must not grow); resuming a vault of
    50 agents x 20,000 memories (target <= 3 s); resuming one agent with 1,000,000
    memories vs 1,000 (target: within 2x)."""
    with tempfile.TemporaryDirectory() as tmp:
        sizes = asyncio.run(_prompt_sizes(Path(tmp)))
    literal = [sizes[200], sizes[1_000], sizes[10_000]]
    # 200, 1,032 and 9,992 sit at the same place in the 64-memory cycle (M - b = 72)
    aligned = [sizes[200], sizes[1_032], sizes[9_992]]
    costs: dict[int, list[float]] = {1_000: [], 10_000: []}
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as tmp:
            for mark, cost in asyncio.run(_append_costs(Path(tmp))).items():
                costs[mark].append(cost)
    resumes = []
    with tempfile.TemporaryDirectory() as tmp:
        world, vault = _big_vault(Path(tmp), 50, 20_000)
        for _ in range(REPEATS):
            start = time.perf_counter()
            sim = Simulation.open(vault, world)
            resumes.append(time.perf_counter() - start)
            assert all(mind.count == 20_000 for mind in sim.minds.values())
            sim.close()
    return {
        "prompt_chars_at_200": sizes[200],
        "prompt_chars_at_1000": sizes[1_000],
        "prompt_chars_at_10000": sizes[10_000],
        "prompt_ratio": max(literal) / min(literal),
        "prompt_chars_at_1032": sizes[1_032],
        "prompt_chars_at_9992": sizes[9_992],
        "prompt_ratio_same_phase": max(aligned) / min(aligned),
        "append_us_at_1000": statistics.median(costs[1_000]),
        "append_us_at_10000": statistics.median(costs[10_000]),
        "resume_s_50x20000": statistics.median(resumes),
        "resume_s_50x20000_min": min(resumes),
        "resume_s_50x20000_max": max(resumes),
    } | bench_resume()
