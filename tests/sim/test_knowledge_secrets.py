"""No secret of the redaction corpus (``tests/memory/secret_corpus.py``) reaches a prompt
of a knowledge pass or its handbook, nor a file under the agent's ``knowledge/`` and
``handbook/``, though Ada notes and says every one of them and the model (a recording
backend) echoes every one back: into its extraction candidates, into the entries its
consolidation adds, and into the handbook's tips. A world that allows fiction
(``fiction_secrets``) keeps the safe's code its story tells, never an API key."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import run
from secret_corpus import FICTION, SECRETS, STRIPE_LIVE

from engine.llm.request import Generation, LLMRequest
from engine.memory.handbook import Cluster, render_cluster, render_summary
from engine.memory.knowledge_prompts import EXTRACTION_CUE
from engine.sim.simulation import Simulation
from engine.vault.config_files import write_missing_defaults
from engine.vault.files import read_front_matter, write_front_matter

ONE_LINE = [" ".join(s.text.split()) for s in SECRETS]
"""The corpus as a command line can say it (a private key's lines joined by spaces)."""


def _chunks(texts: list[str], limit: int = 380) -> list[str]:
    """``texts`` joined into entries of at most ``limit`` characters (an entry holds 400)."""
    chunks = [""]
    for text in texts:
        if chunks[-1] and len(chunks[-1]) + len(text) + 1 > limit:
            chunks.append("")
        chunks[-1] = f"{chunks[-1]} {text}".strip()
    return chunks


class EchoingModel:
    """Echoes ``texts`` back wherever a reply can carry them; records every prompt."""

    def __init__(self, texts: list[str]) -> None:
        self.chunks = _chunks(texts)
        self.calls: list[tuple[LLMRequest, str]] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.calls.append((request, prompt))
        return Generation(text=self._answer(request, prompt), prompt_tokens=9, completion_tokens=9)

    def _answer(self, request: LLMRequest, prompt: str) -> str:
        if request.role == "handbook":
            tips = [f"Remember: {chunk}" for chunk in self.chunks]
            summary = render_summary("Ada, a careful gardener.", tips,
                                     [("Keys", "MEMORY.md > Keys", "keys")])  # fmt: skip
            memory = "# Ada's memory\n\n" + render_cluster(
                Cluster("Keys", ["knowledge/passes/x.md"], ["keys"], self.chunks)
            )
            return json.dumps({"memory_summary": summary, "memory_md": memory, "skills": []})
        if request.role != "consolidator":
            return "I lived a quiet day."
        if prompt.rstrip().endswith(EXTRACTION_CUE):
            return json.dumps(
                [{"type": "fact", "content": chunk, "tags": ["keys", chunk[:30]]}
                 for chunk in self.chunks]
            )  # fmt: skip
        return json.dumps(
            {"operations": [{"action": "ADD", "candidate": n, "content": chunk}
                            for n, chunk in enumerate(self.chunks)]}
        )  # fmt: skip

    def prompts(self) -> list[str]:
        return [prompt for _, prompt in self.calls]


def _files(folder: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            yield path, path.read_text(encoding="utf-8")


async def _pass_with(sim: Simulation, model: EchoingModel, texts: list[str]) -> None:
    sim.knowledge.first_delay = sim.knowledge.max_delay = 0.001
    sim.start_compaction(model, {c.id: "tiny" for c in sim.world.characters.values()})
    assert sim.knowledge.handbook is not None
    sim.knowledge.handbook.method = "llm"
    for n, text in enumerate(texts):
        assert run(sim, "Ada", f"note Keys {n} -> {text}").ok
        assert run(sim, "Ada", f"say {text}").ok
    run(sim, "Ada", "@consolidate")
    await sim.settle_memory(10)


async def test_no_corpus_secret_reaches_a_prompt_or_a_file(
    sim: Simulation, vault_dir: Path
) -> None:
    model = EchoingModel(ONE_LINE)
    await _pass_with(sim, model, ONE_LINE)
    roles = {request.role for request, _ in model.calls}
    assert {"consolidator", "handbook"} <= roles  # a pass ran, and wrote the handbook by model
    ada = vault_dir / "agents" / "Ada"
    bank = json.loads((ada / "knowledge" / "long-term-memory.json").read_text())
    assert len(bank) >= len(model.chunks)  # the echoed entries are in, redacted
    assert "[redacted]" in (ada / "handbook" / "memory_summary.md").read_text()
    for secret in SECRETS:
        for prompt in model.prompts():
            assert secret.secret not in prompt, (secret.form, secret.text)
        for folder in (ada / "knowledge", ada / "handbook"):
            for path, text in _files(folder):
                assert secret.secret not in text, (secret.form, str(path))


@pytest.fixture
def fiction_sim(vault_dir: Path, world_file: Path) -> Iterator[Simulation]:
    config = vault_dir / "config"
    write_missing_defaults(config)
    meta, body = read_front_matter(config / "memory_compaction.md")
    write_front_matter(config / "memory_compaction.md", {**meta, "fiction_secrets": True}, body)
    simulation = Simulation.open(vault_dir, world_file)
    yield simulation
    simulation.close()


async def test_a_world_that_allows_fiction_keeps_the_story_s_secret_but_no_key(
    fiction_sim: Simulation, vault_dir: Path
) -> None:
    told = [FICTION, f"The shop pays with {STRIPE_LIVE} every morning."]
    model = EchoingModel(told)
    await _pass_with(fiction_sim, model, told)
    ada = vault_dir / "agents" / "Ada"
    bank = (ada / "knowledge" / "long-term-memory.json").read_text()
    assert "The code to the safe is 4512." in bank
    assert "The code to the safe is 4512." in (ada / "handbook" / "memory_summary.md").read_text()
    extraction = [p for p in model.prompts() if p.rstrip().endswith(EXTRACTION_CUE)]
    assert extraction
    assert "The code to the safe is 4512." in extraction[0]
    for prompt in model.prompts():
        assert STRIPE_LIVE not in prompt
    for folder in (ada / "knowledge", ada / "handbook"):
        for path, text in _files(folder):
            assert STRIPE_LIVE not in text, str(path)
