"""``bench.py knowledge``: a knowledge pass over a big bank, in prompts of bounded size.

An agent whose bank holds 500, 1,000 or 2,000 entries (facts about 8 topics, each about
a house and a day) consolidates 12 candidates: one real pass in a real simulation on a
temporary vault, the consolidator's ``num_ctx`` the default 8,192 tokens less its 1,200
for the reply, the model an in-process script that answers at once (so the figures are
the engine's own). Each candidate is consolidated against its few nearest entries
(mem0's pattern), so the prompt does not grow with the bank. Figures, per bank size
(medians over repeats):

- ``prompt_tokens``: the consolidation prompt at 3 characters a token (the pass's own
  cautious estimate), against ``limit_tokens`` (num_ctx less the reply). Target: under it.
- ``entries_shown``: entries the prompt shows (at most 40 operations less one per
  candidate).
- ``nearest_found``: of the 2 candidates that paraphrase one entry each, how many saw it.
- ``pass_ms``: the whole pass, from ``@consolidate`` to its commit.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench_common import REPEATS, world_yaml

from engine.llm.request import Generation, LLMRequest
from engine.memory.knowledge import Entry, Stamp
from engine.memory.knowledge_ops import Change
from engine.memory.knowledge_prompts import CONSOLIDATION_CUE, EXTRACTION_CUE
from engine.sim.simulation import Simulation
from engine.vault.knowledge_store import PassRecord

SIZES = (500, 1_000, 2_000)
TOPICS = ("well", "mill", "river", "forge", "bakery", "orchard", "bridge", "tower")
NOW = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00.000000Z")
NEEDLES = (
    (41, "Old Wren hides the tower key under the blue stone.", "Wren hides the tower key under a blue stone."),
    (77, "The baker sells rye bread only on market days.", "Rye bread is sold on market days by the baker."),
)  # fmt: skip


class _Script:
    """Extraction: 12 candidates (2 of them paraphrase a needle); consolidation: SKIP all."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    async def generate(self, request: LLMRequest) -> Generation:
        prompt = request.prompt()
        self.prompts.append(prompt)
        if prompt.rstrip().endswith(EXTRACTION_CUE):
            found = [{"type": "fact", "content": said, "tags": []} for _, _, said in NEEDLES]
            found += [{"type": "fact", "content": f"The {t} was quiet on day {k}.", "tags": [t]}
                      for k, t in enumerate(TOPICS[:6] * 2)][:10]  # fmt: skip
            text = json.dumps(found)
        elif prompt.rstrip().endswith(CONSOLIDATION_CUE):
            text = json.dumps(
                {"operations": [{"action": "SKIP", "candidate": k} for k in range(12)]}
            )
        else:
            text = ""
        return Generation(text=text, prompt_tokens=len(prompt) // 3, completion_tokens=9)


def _bank(size: int) -> list[Entry]:
    bank = [
        Entry(
            id=f"ltm-{n}-b{n}",
            type="fact",
            tags=[TOPICS[n % 8]],
            created=NOW,
            updated=NOW,
            content=f"The {TOPICS[n % 8]} near house {n} was checked on day {n % 97}.",
        )
        for n in range(1, size + 1)
    ]
    for n, content, _ in NEEDLES:
        bank[n - 1] = bank[n - 1].model_copy(update={"content": content})
    return bank


async def _one_pass(size: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "bench.yaml"
        world.write_text(world_yaml(1, 1), encoding="utf-8")
        sim = Simulation.open(Path(tmp) / "vault", world)
        mind = next(iter(sim.minds.values()))
        store = sim.knowledge.store(mind)
        bank = _bank(size)
        seeded = PassRecord.model_validate({"pass": "20260101-080000", "status": "changed",
                                            "started": NOW, "finished": NOW})  # fmt: skip
        store.commit_pass(seeded.pass_id, "GENEROUS",
                          [Change(op="ADD", id=e.id, after=e) for e in bank], seeded, [])  # fmt: skip
        script = _Script()
        sim.start_compaction(script, {c.id: "bench" for c in sim.world.characters.values()})
        sim.execute(mind.character, "say The tower key and the rye bread, again.")
        start = time.perf_counter()
        sim.execute(mind.character, "@consolidate")
        await sim.settle_memory(60)
        elapsed = time.perf_counter() - start
        sim.close()
    (prompt,) = [p for p in script.prompts if p.rstrip().endswith(CONSOLIDATION_CUE)]
    shown = [x for x in prompt.splitlines() if x.startswith("- [") and "[candidate" not in x]
    found = sum(any(content in x for x in shown) for _, content, _ in NEEDLES)
    options = sim.settings.llm.options_for("consolidator")
    limit = int(options.get("num_ctx", 8192)) - int(options.get("num_predict", 1200))
    return {"prompt_tokens": len(prompt) / 3, "limit_tokens": limit,
            "entries_shown": len(shown), "nearest_found": found, "pass_ms": elapsed * 1000}  # fmt: skip


def bench_knowledge() -> dict[str, float | dict[str, float]]:
    out: dict[str, float | dict[str, float]] = {}
    for size in SIZES:
        runs = [asyncio.run(_one_pass(size)) for _ in range(REPEATS)]
        figures = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        figures["pass_ms_min"] = min(r["pass_ms"] for r in runs)
        figures["pass_ms_max"] = max(r["pass_ms"] for r in runs)
        out[f"bank_{size}"] = figures
    return out
