"""A knowledge bank you can trust (issue 30): an undo while a pass waits on its model
stays undone, an undo rewrites the handbook, the tiers mean what they say, no entry is
longer than the cap, and a prompt never shows more entries than its reply may answer.
Ada lives in the fixture world; a scripted model answers at the HTTP-free boundary of
``Generator`` (extraction and consolidation told apart by their cues)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from helpers import run

from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.ollama import OllamaBackend
from engine.llm.ollama_server import Completion, Refusal
from engine.llm.request import Generation, LLMRequest
from engine.llm.stub_server import StubOllama
from engine.memory.knowledge import CONTENT_MAX, Earlier, Entry, Stamp
from engine.memory.knowledge_grammar import OPERATIONS_MAX
from engine.memory.knowledge_ops import Change
from engine.memory.knowledge_prompts import CONSOLIDATION_CUE, EXTRACTION_CUE
from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation
from engine.vault.knowledge_store import PassRecord

TWO = json.dumps([
    {"type": "fact", "content": "The yard well has been dry since spring 2026.", "tags": ["well"]},
    {"type": "mistake", "content": "Do not send anyone to the yard well for water.", "tags": ["well"]},
])  # fmt: skip
ADD_TWO = json.dumps(
    {"operations": [{"action": "ADD", "candidate": 0}, {"action": "ADD", "candidate": 1}]}
)
RIVER = json.dumps(
    [{"type": "fact", "content": "The river by the mill runs clean.", "tags": ["river"]}]
)


class Model:
    """Knowledge replies from two scripts; a consolidation may wait on ``gate``."""

    def __init__(self, extract: list[str], consolidate: list[str]) -> None:
        self.extract, self.consolidate = list(extract), list(consolidate)
        self.gate: asyncio.Event | None = None
        self.waiting = asyncio.Event()
        self.prompts: list[str] = []

    async def generate(self, request: LLMRequest) -> Generation:
        prompt = request.prompt()
        self.prompts.append(prompt)
        if prompt.rstrip().endswith(CONSOLIDATION_CUE):
            if self.gate is not None:
                self.waiting.set()
                await self.gate.wait()
            text = self.consolidate.pop(0)
        elif prompt.rstrip().endswith(EXTRACTION_CUE):
            text = self.extract.pop(0)
        else:
            text = ""  # a handbook prompt: the rules write it
        return Generation(text=text, prompt_tokens=len(prompt) // 4, completion_tokens=9)


def _folder(vault_dir: Path) -> Path:
    return vault_dir / "agents" / "Ada" / "knowledge"


def _bank(vault_dir: Path) -> list[dict[str, Any]]:
    path = _folder(vault_dir) / "long-term-memory.json"
    return json.loads(path.read_text()) if path.exists() else []


def _log(vault_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (_folder(vault_dir) / "log.jsonl").read_text().splitlines()]


def _start(sim: Simulation, model: Model) -> None:
    sim.knowledge.first_delay = sim.knowledge.max_delay = 0.001
    sim.start_compaction(model, {c.id: "tiny" for c in sim.world.characters.values()})


async def _pass(sim: Simulation, *lines: str) -> None:
    for line in lines:
        run(sim, "Ada", line)
    run(sim, "Ada", "@consolidate")
    await sim.settle_memory(5)


def _summary(vault_dir: Path) -> str:
    return (vault_dir / "agents" / "Ada" / "handbook" / "memory_summary.md").read_text()


async def test_an_undo_while_a_pass_waits_on_its_model_is_never_reverted(
    sim: Simulation, vault_dir: Path
) -> None:
    merge = {"action": "UPDATE", "id": 1, "content": "The yard well is dry; the river runs clean."}
    model = Model(
        [TWO, RIVER],
        [ADD_TWO, json.dumps({"operations": [merge, {"action": "ADD", "candidate": 0}]})],
    )
    _start(sim, model)
    await _pass(sim, "note Well -> The yard well is dry.")
    assert len(_bank(vault_dir)) == 2
    model.gate = asyncio.Event()
    run(sim, "Ada", "say The river by the mill runs clean.")
    run(sim, "Ada", "@consolidate")
    await asyncio.wait_for(model.waiting.wait(), 5)  # the pass has loaded the bank
    undone = run(sim, "Ada", "@knowledge undo")
    assert undone.ok, undone.text
    assert _bank(vault_dir) == []
    model.gate.set()
    await sim.settle_memory(5)
    contents = [e["content"] for e in _bank(vault_dir)]
    assert contents == ["The river by the mill runs clean."], "nothing undone came back"
    log = _log(vault_dir)
    second = [x for x in log if x["pass"] != log[0]["pass"] and x["op"] != "UNDO"]
    assert [x["op"] for x in second] == ["ADD"], "the UPDATE of an undone entry did not apply"
    assert run(sim, "Ada", "@knowledge undo").ok
    assert _bank(vault_dir) == []
    assert not run(sim, "Ada", "@knowledge undo").ok, "the first pass stays undone"


class HeldStub(StubOllama):
    """The loopback stub; while ``hold`` is clear, a consolidation prompt waits on it."""

    def __init__(self, knowledge: list[str]) -> None:
        super().__init__(models=["tiny"], knowledge=knowledge)
        self.hold = threading.Event()
        self.hold.set()
        self.held = threading.Event()

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        if str(body.get("prompt", "")).rstrip().endswith(CONSOLIDATION_CUE) \
                and not self.hold.is_set():  # fmt: skip
            self.held.set()
            self.hold.wait(10)
        return super().answer(body)


async def test_an_undo_of_the_entry_a_pass_updates_keeps_the_pass_new_fact(
    sim: Simulation, vault_dir: Path
) -> None:
    """Over loopback HTTP: the second pass's reply merges its one candidate (a wolf) into
    entry 1 and SKIPs it; an undo meanwhile removes entry 1. The merged text (which holds
    the undone entry's words) stays out; the wolf is added as the candidate said it."""
    wolf = json.dumps([{"type": "observation", "content": "A wolf was seen near the quarry.",
                        "tags": ["wolf"]}])  # fmt: skip
    merge = {
        "action": "UPDATE",
        "id": 1,
        "content": "The yard well has been dry since spring 2026; a wolf was seen near the quarry.",
    }
    with HeldStub([TWO, ADD_TWO, wolf, json.dumps({"operations": [
            merge, {"action": "SKIP", "candidate": 0}]})]) as stub:  # fmt: skip
        sim.knowledge.first_delay = sim.knowledge.max_delay = 0.001
        dispatcher = Dispatcher([Endpoint(stub.url, OllamaBackend(stub.url), slots=2)])
        sim.start_compaction(dispatcher, {c.id: "tiny" for c in sim.world.characters.values()})
        await _pass(sim, "note Well -> The yard well is dry.")
        assert len(_bank(vault_dir)) == 2
        stub.hold.clear()
        run(sim, "Ada", "say I saw a wolf near the quarry!")
        run(sim, "Ada", "@consolidate")
        asked = await asyncio.to_thread(stub.held.wait, 10)
        assert asked, "the second pass never asked to consolidate"
        assert run(sim, "Ada", "@knowledge undo").ok
        assert _bank(vault_dir) == []
        stub.hold.set()
        await sim.settle_memory(10)
        await dispatcher.aclose()
    contents = [e["content"] for e in _bank(vault_dir)]
    assert contents == ["A wolf was seen near the quarry."]
    log = _log(vault_dir)
    second = [x for x in log if x["pass"] != log[0]["pass"] and x["op"] != "UNDO"]
    assert [(x["op"], x["candidate"]) for x in second] == [("ADD", 0)]
    assert "wolf" in _summary(vault_dir)
    record = max((_folder(vault_dir) / "passes").glob("*.md"))
    assert "status: changed" in record.read_text()


async def test_an_undo_writes_the_handbook_again_and_the_next_prompt_follows(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([TWO], [ADD_TWO])
    _start(sim, model)
    await _pass(sim, "note Well -> The yard well is dry.")
    assert "Do not send anyone to the yard well" in _summary(vault_dir)
    assert "Do not send anyone to the yard well" in build_prompt(sim, sim.world.characters["ada"])
    said = run(sim, "Ada", "@knowledge undo")
    assert "the handbook is written again" in said.text
    assert "Do not send anyone" not in _summary(vault_dir)
    assert "Do not send anyone" not in build_prompt(sim, sim.world.characters["ada"])


async def test_a_handbook_the_model_wrote_from_a_bank_since_undone_is_not_kept(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([TWO], [ADD_TWO])
    _start(sim, model)
    assert sim.knowledge.handbook is not None
    sim.knowledge.handbook.method = "llm"
    held = asyncio.Event()
    reached = asyncio.Event()
    answer = model.generate

    async def slow_handbook(request: LLMRequest) -> Generation:
        if request.purpose == "handbook":
            reached.set()
            await held.wait()
        return await answer(request)

    model.generate = slow_handbook  # type: ignore[method-assign]
    for line in ("note Well -> The yard well is dry.", "@consolidate"):
        run(sim, "Ada", line)
    await asyncio.wait_for(reached.wait(), 5)
    assert run(sim, "Ada", "@knowledge undo").ok
    held.set()
    await sim.settle_memory(5)
    assert "Do not send anyone" not in _summary(vault_dir)
    state = json.loads((vault_dir / "agents" / "Ada" / "handbook" / "handbook.json").read_text())
    assert state["method"] == "rules"


async def test_selective_and_heavy_cut_add_no_candidate_the_reply_does_not_name(
    sim: Simulation, vault_dir: Path
) -> None:
    merged = {"action": "UPDATE", "id": 1, "content": "The yard well is dry; the river runs clean."}
    model = Model([TWO, RIVER], [ADD_TWO, json.dumps({"operations": [merged]})])
    _start(sim, model)
    await _pass(sim, "note Well -> The yard well is dry.")
    sim.knowledge.context_tokens = 10  # HEAVY_CUT
    await _pass(sim, "say The river by the mill runs clean.")
    contents = [e["content"] for e in _bank(vault_dir)]
    assert contents == [
        "The yard well is dry; the river runs clean.",
        "Do not send anyone to the yard well for water.",
    ]


async def test_heavy_cut_never_ends_with_a_bigger_bank(sim: Simulation, vault_dir: Path) -> None:
    model = Model([TWO, RIVER], [ADD_TWO, "no JSON at all"])  # the fallback adds every candidate
    _start(sim, model)
    await _pass(sim, "note Well -> The yard well is dry.")
    sim.knowledge.context_tokens = 10
    await _pass(sim, "note River -> The river by the mill runs clean.")
    assert len(_bank(vault_dir)) == 2


async def test_no_entry_is_longer_than_the_cap_whatever_the_model_writes(
    sim: Simulation, vault_dir: Path
) -> None:
    sentence = "The yard well has been dry since the spring of 2026 and nobody knows why. "
    huge = (sentence * 1000).strip()
    model = Model([json.dumps([{"type": "fact", "content": huge, "tags": ["well"]}])],
                  [json.dumps({"operations": [{"action": "ADD", "candidate": 0}]})])  # fmt: skip
    _start(sim, model)
    sim.knowledge.constrain = False
    await _pass(sim, "note Well -> The yard well is dry.")
    (entry,) = [e for e in _bank(vault_dir) if e["content"].startswith("The yard well has")]
    assert len(entry["content"]) <= CONTENT_MAX
    assert entry["content"].endswith("nobody knows why.")  # cut at a sentence
    (line,) = [x for x in _log(vault_dir) if x["id"] == entry["id"]]
    assert line["cut_from"] == len(huge)
    assert (
        f"cut from {len(huge)} characters"
        in next((_folder(vault_dir) / "passes").glob("*.md")).read_text()
    )


async def test_a_consolidation_prompt_shows_no_more_entries_than_its_reply_may_answer(
    sim: Simulation, vault_dir: Path
) -> None:
    store = sim.knowledge.store(sim.minds["ada"])
    now = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00.000000Z")
    bank = [Entry(id=f"ltm-{n}-a{n}", type="fact", content=f"Room {n} of the mill holds {n} sacks.",
                  tags=["mill"], created=now, updated=now) for n in range(1, 61)]  # fmt: skip
    done = PassRecord.model_validate({"pass": "20260101-080000", "status": "changed",
                                      "started": now, "finished": now})  # fmt: skip
    store.commit_pass(done.pass_id, "GENEROUS", [Change(op="ADD", id=e.id, after=e) for e in bank],
                      done, [])  # fmt: skip
    model = Model([TWO], [json.dumps({"operations": []})])
    _start(sim, model)
    await _pass(sim, "say The yard well is dry.")
    (prompt,) = [p for p in model.prompts if p.rstrip().endswith(CONSOLIDATION_CUE)]
    lines = prompt.splitlines()
    shown = [x for x in lines if x.startswith("- [") and not x.startswith("- [candidate")]
    candidates = [x for x in lines if x.startswith("- [candidate")]
    assert len(shown) + len(candidates) <= OPERATIONS_MAX
    assert f"({60 - len(shown)} more entries not shown are kept as they are)" in prompt
    assert len(_bank(vault_dir)) == 60 + 2


async def test_the_tier_counts_what_the_prompt_shows_not_the_history_of_updates(
    sim: Simulation, vault_dir: Path
) -> None:
    now = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00.000000Z")
    worn = [
        Entry(id=f"ltm-{n}-a{n}", type="fact", content=f"Room {n} of the mill holds {n} sacks.",
              tags=["mill"], created=now, updated=now, access_count=30,
              history=[Earlier(content=f"Room {n} held {k} sacks of grain and flour once. " * 3,
                               tags=["mill"], until=now, by_pass=f"p{k}") for k in range(5)])
        for n in range(1, 21)
    ]  # fmt: skip
    sim.knowledge.store(sim.minds["ada"]).save(worn)
    model = Model([TWO], [ADD_TWO])
    _start(sim, model)
    sim.knowledge.context_tokens = 2_000
    await _pass(sim, "say The yard well is dry.")
    (prompt,) = [p for p in model.prompts if p.rstrip().endswith(CONSOLIDATION_CUE)]
    assert "Tier: GENEROUS." in prompt
    assert len(_bank(vault_dir)) == 22
