"""Every prompt the engine sends fits its model's context (issue 42, item 6): a world
with a 100 KB room description, agents that talk in Chinese, small summarizer and
consolidator contexts, run headless against the loopback stub over HTTP (a server: the
engine fits by its estimate). Every request that reaches the server (turns, chunk
summaries, merges, knowledge extraction and consolidation, the handbook, a dream) fits
``num_ctx`` less ``num_predict`` as the embedded model's tokenizer counts it; and the
status says what the last prompt left out."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from engine.llm.stub_server import StubOllama
from engine.memory.dream import CUE as DREAM_CUE
from engine.memory.handbook_prompts import CUE as HANDBOOK_CUE
from engine.memory.knowledge_prompts import CONSOLIDATION_CUE, EXTRACTION_CUE
from engine.memory.summary_prompts import CHUNK_CUE, MERGE_CUE
from engine.memory.tokens import TokenCounter, estimate_tokens
from engine.sim.run import RunOptions, run_headless
from engine.sim.status import read_status

SAID = "我在花园里散步，和艾达说话，告诉她榅桲还没有成熟。天气很冷，风从北方吹来。"
HALL = "Copper lanterns hang from the beam; the floor is cold stone and always damp. "

WORLD = f"""\
name: Overflow
rooms:
  - id: hall
    name: The Copper Hall
    description: "{HALL * 1_300}"
    exits: {{north: yard}}
  - id: yard
    name: The Yard
    description: A muddy yard.
characters:
  - name: Ada
    type: agent
    location: hall
    profile: 一个细心的园丁。
    immediate_window: 4
    recent_window: 4
  - name: Bo
    type: agent
    location: hall
    profile: 一个安静的铁匠。
    immediate_window: 4
    recent_window: 4
"""

LLM_MD = """\
---
profiles:
  summarizer:
    options: {num_ctx: 1024, num_predict: 200}
  consolidator:
    options: {num_ctx: 2048, num_predict: 400}
---
"""
MEMORY_MD = """\
---
handbook: llm
dream_interval: 0
---
"""
REPLIES = [f"say {SAID * 6}", "look", f"note 花园 -> {SAID * 20}", "dream", f"say {SAID * 3}"]
CANDIDATES = json.dumps(
    [{"type": "fact", "content": SAID * 4, "tags": ["花园"]},
     {"type": "observation", "content": SAID * 5, "tags": ["天气"]}], ensure_ascii=False
)  # fmt: skip


@pytest.fixture(scope="module")
def smollm2() -> TokenCounter | None:
    """The embedded model's tokenizer, when installed (else the estimate stands in)."""
    try:
        from engine.llm.local import embedded_tokens

        return embedded_tokens()
    except ImportError:
        return None


def _kind(prompt: str) -> str:
    end = prompt.rstrip()
    for cue, kind in ((MERGE_CUE, "merge"), (CHUNK_CUE, "chunk"),
                      (EXTRACTION_CUE, "extraction"), (CONSOLIDATION_CUE, "consolidation"),
                      (HANDBOOK_CUE, "handbook"), (DREAM_CUE, "dream")):  # fmt: skip
        if end.endswith(cue):
            return kind
    return "turn" if end.endswith((">", "~Ada>", "~Bo>")) else "other"


async def test_every_request_fits_its_context_by_the_embedded_tokenizer(
    tmp_path: Path, smollm2: TokenCounter | None
) -> None:
    world = tmp_path / "overflow.yaml"
    world.write_text(WORLD, encoding="utf-8")
    vault = tmp_path / "vault"
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "llm.md").write_text(LLM_MD, encoding="utf-8")
    (vault / "config" / "memory_compaction.md").write_text(MEMORY_MD, encoding="utf-8")
    with StubOllama(replies=REPLIES, models=["tiny"], summary="<related>",
                    knowledge=[CANDIDATES], record=True) as stub:  # fmt: skip
        options = RunOptions(world, vault, stub.url, "tiny", turns=8, seed=1)
        await run_headless(options, {}, io.StringIO())
        requests = list(stub.requests)

    kinds: dict[str, int] = {}
    for body in requests:
        prompt, settings = str(body["prompt"]), body.get("options") or {}
        kind = _kind(prompt)
        kinds[kind] = kinds.get(kind, 0) + 1
        room = int(settings["num_ctx"]) - int(settings["num_predict"])
        counted = smollm2.count(prompt) if smollm2 is not None else estimate_tokens(prompt)
        assert counted <= room, f"a {kind} prompt of {counted} tokens for {room}"
        assert estimate_tokens(prompt) <= room
    assert kinds.get("other", 0) == 0, kinds
    for kind in ("turn", "chunk", "merge", "extraction", "consolidation", "handbook", "dream"):
        assert kinds.get(kind, 0) >= 1, (kind, kinds)

    # the turns' prompts kept memories beside the cut description, and status says so
    statuses = {s.name: s for s in read_status(vault)}
    for name in ("Ada", "Bo"):
        status = statuses[name]
        assert "room description" in status.cut_in_last_prompt
        assert "the last prompt cut short: " in status.render()
        assert status.to_json()["cut_in_last_prompt"] == list(status.cut_in_last_prompt)
