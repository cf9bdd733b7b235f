"""Do summaries keep up with agents acting back to back? (``python scripts/bench.py fairness``)

The real Scheduler, Thinkers, Compactor and Dispatcher; each agent alone in a room,
thinking back to back (so every turn is one memory, its own), windows 4/4 (I = R = 4),
against a model that answers at once (or after ``delay`` seconds). Two set-ups from
issue 13: 5 agents on one slot, 3 agents on a 4-slot server; each with the dispatcher's
aging (``bypass_limit`` 4) and, for comparison, strict priority (what main did before).

Per run: the largest M - b any agent reached (the target is at most I + 2R = 12: never
more than one due chunk waiting), the most turn dispatches a summary request waited
through (target: at most 4), the summaries' share of the calls, turns per second.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench_common import REPEATS

from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.request import Generation, LLMRequest, Priority
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation

WINDOW = 4
TURNS_PER_AGENT = 60
SETUPS = ((5, 1), (3, 4))
"""(agents, slots)."""


def fairness_world(agents: int, window: int = WINDOW) -> str:
    lines = ["name: Fairness", "rooms:"]
    for n in range(agents):
        lines += [f"  - id: r{n}", f"    name: Room {n}", "    description: A bare room."]
    lines.append("characters:")
    for n in range(agents):
        lines += [f"  - name: Agent{n}", "    type: agent", f"    location: r{n}",
                  "    profile: A thinker.", f"    immediate_window: {window}",
                  f"    recent_window: {window}"]  # fmt: skip
    return "\n".join(lines) + "\n"


class PromptModel:
    """Answers after ``delay`` s: a new thought for a turn, one fixed summary otherwise."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.turns = 0
        self.summaries = 0

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(self.delay)
        request.prompt()
        if request.role == "actor":
            self.turns += 1
            text = f"think Thought number {self.turns}."
        else:
            self.summaries += 1
            text = "I sat alone and thought about many things."
        return Generation(text=text, prompt_tokens=10, completion_tokens=5)

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True)
class FairnessRun:
    peak_unsummarized: int
    """The largest M - b any agent reached."""
    most_bypassed: int
    """The most turn dispatches one summary request waited through."""
    summary_share: float
    turns_per_second: float


async def fairness_run(
    agents: int, slots: int, *, bypass_limit: int | None = 4, delay: float = 0.0,
    turns_per_agent: int = TURNS_PER_AGENT,
) -> FairnessRun:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "fair.yaml"
        world.write_text(fairness_world(agents), encoding="utf-8")
        sim = Simulation.open(Path(tmp) / "vault", world)
        model = PromptModel(delay)
        dispatcher = Dispatcher([Endpoint("model", model, slots=slots)], bypass_limit=bypass_limit)
        ids = list(sim.minds)
        sim.start_compaction(dispatcher, dict.fromkeys(ids, "tiny"))
        thinkers = make_thinkers(sim, dict.fromkeys(ids, "tiny"))
        scheduler = Scheduler(sim, dispatcher, thinkers, seed=1, speed=1e6)
        peak = 0

        def watch(happening: Happening) -> None:
            nonlocal peak
            if isinstance(happening, Turn):
                peak = max(peak, *(m.count - m.boundary for m in sim.minds.values()))
                if sum(scheduler.turns_taken.values()) >= turns_per_agent * agents:
                    scheduler.stop()

        scheduler.listen(watch)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            await scheduler.run()
            elapsed = loop.time() - started
            await scheduler.finish(5)
            await sim.compactor.drain(5)
            await dispatcher.aclose()
        finally:
            sim.close()
        calls = model.turns + model.summaries
        return FairnessRun(
            peak_unsummarized=peak,
            most_bypassed=dispatcher.fairness.most_bypassed[Priority.SUMMARY],
            summary_share=model.summaries / calls if calls else 0.0,
            turns_per_second=sum(scheduler.turns_taken.values()) / elapsed,
        )


def bench_fairness() -> dict[str, float]:
    out: dict[str, float] = {}
    for agents, slots in SETUPS:
        for label, limit in (("aging", 4), ("strict", None)):
            runs = [
                asyncio.run(fairness_run(agents, slots, bypass_limit=limit)) for _ in range(REPEATS)
            ]
            key = f"{agents}on{slots}_{label}"
            peaks = [float(r.peak_unsummarized) for r in runs]
            out[f"{key}_peak_unsummarized"] = statistics.median(peaks)
            out[f"{key}_peak_unsummarized_min"] = min(peaks)
            out[f"{key}_peak_unsummarized_max"] = max(peaks)
            out[f"{key}_most_bypassed"] = statistics.median(r.most_bypassed for r in runs)
            out[f"{key}_summary_share_pct"] = 100 * statistics.median(r.summary_share for r in runs)
            out[f"{key}_turns_per_s"] = statistics.median(r.turns_per_second for r in runs)
    return out


if __name__ == "__main__":
    for name, value in bench_fairness().items():
        print(f"{name:40} {value:10.1f}")
