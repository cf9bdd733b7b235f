"""Knowledge passes end to end in a simulation: Ada (an agent) notes, talks and acts in
the fixture world; a recording backend plays the model (extraction and consolidation
told apart by the prompt's cue); the bank, its log and pass records are real files."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import run

from engine.agents.knowledge_inputs import gather_inputs
from engine.errors import LLMUnavailableError
from engine.llm.request import Generation, LLMRequest, Priority
from engine.memory.knowledge_prompts import EXTRACTION_CUE
from engine.sim.simulation import Simulation
from engine.vault.files import read_front_matter

EXTRACTED = json.dumps(
    [
        {"type": "fact", "content": "The well in the yard has been dry since spring 2026.",
         "tags": ["Well", "yard"]},
        {"type": "mistake", "content": "Do not draw water from the yard well; it is dry.",
         "tags": ["well"]},
    ]
)  # fmt: skip
ADD_BOTH = json.dumps(
    {"operations": [{"action": "ADD", "candidate": 0}, {"action": "ADD", "candidate": 1}]}
)


class Model:
    """Answers knowledge prompts from two scripts; records every request and prompt."""

    def __init__(self, extract: list[str | Exception], consolidate: list[str | Exception]) -> None:
        self.extract, self.consolidate = list(extract), list(consolidate)
        self.calls: list[tuple[LLMRequest, str]] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.calls.append((request, prompt))
        if request.role != "consolidator":
            return Generation(text="I lived a quiet day.", prompt_tokens=1, completion_tokens=1)
        script = self.extract if prompt.rstrip().endswith(EXTRACTION_CUE) else self.consolidate
        answer = script.pop(0) if script else "[]"
        if isinstance(answer, Exception):
            raise answer
        return Generation(text=answer, prompt_tokens=len(prompt) // 4, completion_tokens=9)

    def prompts(self, cue: str = EXTRACTION_CUE) -> list[str]:
        return [p for r, p in self.calls if r.role == "consolidator" and p.rstrip().endswith(cue)]


def _knowledge(vault_dir: Path) -> Path:
    return vault_dir / "agents" / "Ada" / "knowledge"


def _bank(vault_dir: Path) -> list[dict[str, object]]:
    path = _knowledge(vault_dir) / "long-term-memory.json"
    return json.loads(path.read_text()) if path.exists() else []


def _start(sim: Simulation, model: Model) -> None:
    sim.knowledge.first_delay = sim.knowledge.max_delay = 0.001
    sim.start_compaction(model, {c.id: "tiny" for c in sim.world.characters.values()})


def _ada_lives(sim: Simulation) -> None:
    run(sim, "Ada", "note Well -> The yard well is dry; it has been since spring.")
    run(sim, "Ada", "say Pat, the well is dry.")
    run(sim, "Pat", "say Thank you, Ada. I will fetch water from the river.")
    run(sim, "Ada", "look")


async def _consolidate(sim: Simulation, who: str = "Ada") -> str:
    said = run(sim, who, "@consolidate").text
    await sim.settle_memory(5)
    return said


async def test_a_pass_turns_notes_talk_and_memories_into_typed_entries(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED], [ADD_BOTH])
    _start(sim, model)
    _ada_lives(sim)
    said = await _consolidate(sim)
    assert said == "Consolidating Ada's knowledge from 1 note and memories #0-#3."
    (prompt,) = model.prompts()
    assert "The yard well is dry; it has been since spring." in prompt  # the note, whole
    assert 'Pat says, "Thank you, Ada. I will fetch water from the river."' in prompt
    assert "A careful gardener." not in prompt  # the profile is not a note
    request = next(r for r, p in model.calls if p == prompt)
    assert request.priority is Priority.CONSOLIDATION
    assert request.constrain is True
    assert request.constraint is not None
    bank = _bank(vault_dir)
    assert [(e["type"], e["tags"]) for e in bank] == [
        ("fact", ["well", "yard"]),
        ("mistake", ["well"]),
    ]
    assert all(str(e["id"]).startswith("ltm-") for e in bank)
    assert bank[0]["source"]["notes"] == ["Well"]  # type: ignore[index]
    assert bank[0]["created"]["sim"] == sim.clock.reading()  # type: ignore[index]
    log = [
        json.loads(line) for line in (_knowledge(vault_dir) / "log.jsonl").read_text().splitlines()
    ]
    assert [line["op"] for line in log] == ["ADD", "ADD"]
    (record,) = (_knowledge(vault_dir) / "passes").glob("*.md")
    assert "status: changed" in record.read_text()
    listed = run(sim, "Ada", "@knowledge").text
    assert "Your knowledge bank: 2 entries" in listed
    assert "(mistake, 0 accesses) Do not draw water from the yard well" in listed
    assert "tier GENEROUS" in run(sim, "Ada", "@memory-status").text


async def test_the_bank_is_never_shown_to_extraction_and_a_second_pass_adds_no_duplicate(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED, EXTRACTED], [ADD_BOTH, ADD_BOTH])
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    run(sim, "Ada", "note Well -> Still dry today.")
    await _consolidate(sim)
    contents = [e["content"] for e in _bank(vault_dir)]
    assert contents.count("The well in the yard has been dry since spring 2026.") == 1
    assert len(contents) == 3  # the two again are skipped (exact duplicates); the note's
    assert contents[-1] == "Well: Still dry today."  # new entry, which no candidate carried
    second = model.prompts()[1]
    assert "long-term-memory" not in second
    assert "Do not draw water" not in second  # the bank is consolidation's business
    assert "Still dry today." in second
    consolidation = model.prompts("JSON object:")[1]
    assert "Do not draw water from the yard well" in consolidation  # shown as [k] lines
    assert "ltm-" not in consolidation  # small numbers, mapped back


async def test_with_no_notes_at_all_a_pass_still_reads_memories(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED], [ADD_BOTH])
    _start(sim, model)
    run(sim, "Ada", "look")
    await _consolidate(sim)
    (prompt,) = model.prompts()
    assert "The Hall" in prompt
    assert len(_bank(vault_dir)) == 2


async def test_nothing_new_means_no_call(sim: Simulation) -> None:
    model = Model([], [])
    _start(sim, model)
    assert await _consolidate(sim) == "Nothing new for Ada since the last knowledge pass."
    assert model.calls == []


async def test_garbage_extraction_is_asked_again_then_recorded_failed_and_retried(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(["I cannot do that."] * 6, [])
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    assert len(model.prompts()) == 6  # 3 attempts of 2 asks
    assert not (_knowledge(vault_dir) / "long-term-memory.json").exists()
    records = sorted((_knowledge(vault_dir) / "passes").glob("*.md"))
    assert len(records) == 3
    assert all("status: failed" in r.read_text() for r in records)
    assert "did not parse" in records[-1].read_text()
    status = run(sim, "Ada", "@memory-status").text
    assert "knowledge passes failed: 3; last error: the extraction reply did not parse" in status


async def test_an_unreachable_model_fails_the_pass_and_changes_nothing(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([LLMUnavailableError("the server is down")] * 3, [])
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    assert _bank(vault_dir) == []
    assert sim.knowledge.tally.failed == 3


@pytest.mark.parametrize(
    "failure",
    [["nonsense", "more nonsense"], [LLMUnavailableError("gone")], ['{"operations": 7}'] * 2],
)
async def test_a_consolidation_that_fails_adds_every_candidate(
    sim: Simulation, vault_dir: Path, failure: list[str | Exception]
) -> None:
    model = Model([EXTRACTED], failure)
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    assert [e["type"] for e in _bank(vault_dir)] == ["fact", "mistake"]
    (record,) = (_knowledge(vault_dir) / "passes").glob("*.md")
    assert str(read_front_matter(record)[0]["fallback"]).endswith(": every candidate added")


async def test_operations_are_applied_as_returned(sim: Simulation, vault_dir: Path) -> None:
    model = Model(
        [EXTRACTED, json.dumps([{"type": "fact", "content": "The river is clean.", "tags": []}])],
        [
            ADD_BOTH,
            json.dumps({"operations": [
                {"action": "UPDATE", "id": 1, "content": "The yard well refilled in May 2026."},
                {"action": "DELETE", "id": 2},
                {"action": "KEEP", "id": 99},
                {"action": "SKIP", "candidate": 0},
            ]}),
        ],
    )  # fmt: skip
    _start(sim, model)
    sim.knowledge.context_tokens = 10  # a full bank (HEAVY_CUT): deletions are expected
    _ada_lives(sim)
    await _consolidate(sim)
    run(sim, "Ada", "say The river is clean.")
    await _consolidate(sim)
    (entry,) = _bank(vault_dir)
    assert entry["content"] == "The yard well refilled in May 2026."
    assert entry["history"][0]["content"].startswith("The well in the yard")  # type: ignore[index]
    assert len(entry["source"]["passes"]) == 2  # type: ignore[index]


async def test_undo_restores_the_bank_before_the_last_pass(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(
        [EXTRACTED, EXTRACTED],
        [ADD_BOTH, json.dumps({"operations": [{"action": "DELETE", "id": 1}]})],
    )
    _start(sim, model)
    sim.knowledge.context_tokens = 10  # HEAVY_CUT: a lone DELETE stands
    _ada_lives(sim)
    await _consolidate(sim)
    after_first = _bank(vault_dir)
    run(sim, "Ada", "look")
    await _consolidate(sim)
    assert len(_bank(vault_dir)) == 1
    undone = run(sim, "Ada", "@knowledge undo")
    assert undone.ok
    assert "1 entry put back, 0 removed" in undone.text
    assert _bank(vault_dir) == after_first
    assert run(sim, "Ada", "@knowledge undo").ok  # the first pass: back to empty
    assert _bank(vault_dir) == []
    assert not run(sim, "Ada", "@knowledge undo").ok


async def test_secrets_reach_neither_the_model_nor_the_vault(
    sim: Simulation, vault_dir: Path
) -> None:
    leaked = json.dumps(
        [{"type": "fact", "content": "The vault key is sk-proj-abcdefghijklmnop1234567890",
          "tags": ["password=hunter22"]}]
    )  # fmt: skip
    model = Model([leaked], ["not json"])
    _start(sim, model)
    run(sim, "Ada", "note Keys -> db is postgres://ada:s3cretpw@db.example/app, password=hunter22")
    await _consolidate(sim)
    sent = "\n".join(p for _, p in model.calls)
    for secret in ("s3cretpw", "hunter22", "abcdefghijklmnop1234567890"):
        assert secret not in sent
        for path in _knowledge(vault_dir).rglob("*"):
            if path.is_file():
                assert secret not in path.read_text(), path
    assert "s3cretpw" in (vault_dir / "agents" / "Ada" / "notes" / "Keys.md").read_text()


async def test_every_consolidate_every_memories_a_pass_starts_by_itself(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED], [ADD_BOTH])
    _start(sim, model)
    sim.knowledge.every = 5
    for _ in range(4):
        run(sim, "Ada", "look")
    await asyncio.sleep(0.01)
    assert model.prompts() == []
    run(sim, "Ada", "look")
    await sim.settle_memory(5)
    assert len(model.prompts()) == 1
    assert len(_bank(vault_dir)) == 2


async def test_the_end_of_a_run_passes_every_agent_with_something_new(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED], [ADD_BOTH])
    _start(sim, model)
    _ada_lives(sim)
    await sim.wind_down_memory(5)
    assert len(_bank(vault_dir)) == 2
    assert not (vault_dir / "agents" / "Pat" / "knowledge").exists()  # players have none


async def test_a_corrupt_bank_fails_the_pass_and_is_never_overwritten(
    sim: Simulation, vault_dir: Path
) -> None:
    folder = _knowledge(vault_dir)
    folder.mkdir(parents=True)
    (folder / "long-term-memory.json").write_text('[{"id": "oops"')
    model = Model([EXTRACTED] * 3, [ADD_BOTH] * 3)
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    assert (folder / "long-term-memory.json").read_text() == '[{"id": "oops"'
    listed = run(sim, "Ada", "@knowledge")
    assert not listed.ok
    assert "long-term-memory.json is not a valid knowledge bank" in listed.text
    assert "knowledge passes failed: 3" in run(sim, "Ada", "@memory-status").text


async def test_builders_may_consolidate_others_and_players_may_not(sim: Simulation) -> None:
    _start(sim, Model([], []))
    refused = run(sim, "Pip", "@consolidate Ada")
    assert not refused.ok
    assert "Only builders" in refused.text
    assert run(sim, "Bea", "@knowledge Ada facts").text == (
        "Ada's knowledge bank is empty. It fills at the end of a run, every few hundred "
        "memories, and on @consolidate."
    )


async def test_a_weak_models_fragments_are_dropped_and_its_notes_still_reach_the_bank(
    sim: Simulation, vault_dir: Path
) -> None:
    """What SmolLM2-135M writes under the schema: transcript fragments and bare titles."""
    fragments = json.dumps(
        [{"type": "mistake", "content": "[1] You add to your note 'Bread' [2], 3, you say,",
          "tags": []}, {"type": "fact", "content": "Bread", "tags": []}]
    )  # fmt: skip
    model = Model([fragments], [])
    _start(sim, model)
    run(sim, "Ada", "note Bread -> The oven must be hot before dawn or the loaves stay flat.")
    await _consolidate(sim)
    (entry,) = _bank(vault_dir)
    assert entry["content"] == "Bread: The oven must be hot before dawn or the loaves stay flat."
    assert (entry["type"], entry["tags"]) == ("fact", ["bread"])


async def test_a_fragment_in_an_operation_is_set_aside(sim: Simulation, vault_dir: Path) -> None:
    model = Model(
        [EXTRACTED],
        [json.dumps({"operations": [
            {"action": "ADD", "candidate": 0, "content": "Well"},
            {"action": "ADD", "type": "fact", "content": "[2] yes"},
            {"action": "SKIP", "candidate": 1},
        ]})],
    )  # fmt: skip
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    (entry,) = _bank(vault_dir)  # candidate 0 as the model extracted it; the junk ADD gone
    assert entry["content"] == "The well in the yard has been dry since spring 2026."


async def test_a_note_the_consolidation_skips_is_kept_all_the_same(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(["[]"], [json.dumps({"operations": [{"action": "SKIP", "candidate": 0}]})])
    _start(sim, model)
    run(sim, "Ada", "note Bread -> The oven must be hot before dawn or the loaves stay flat.")
    await _consolidate(sim)
    (entry,) = _bank(vault_dir)
    assert entry["content"].startswith("Bread: The oven must be hot")  # type: ignore[union-attr]
    (line,) = (_knowledge(vault_dir) / "log.jsonl").read_text().splitlines()
    assert json.loads(line)["candidate"] == 0


async def test_a_commit_the_disk_refuses_is_a_failed_pass_and_the_bank_stays(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED] * 3, [ADD_BOTH] * 3)
    _start(sim, model)
    _ada_lives(sim)
    (_knowledge(vault_dir) / "log.jsonl").mkdir(parents=True)  # the log cannot be written
    await _consolidate(sim)
    assert _bank(vault_dir) == []
    assert sim.knowledge.tally.failed == 3
    assert "knowledge passes failed: 3" in run(sim, "Ada", "@memory-status").text


async def test_with_room_to_spare_only_a_superseded_entry_may_be_deleted(
    sim: Simulation, vault_dir: Path
) -> None:
    """GENEROUS: "rarely DELETE, only what is wrong or superseded", kept by rule."""
    merge = {"operations": [
        {"action": "UPDATE", "id": 1,
         "content": "The yard well in the yard has been dry since spring 2026; do not draw from it."},
        {"action": "DELETE", "id": 2},
    ]}  # fmt: skip
    model = Model(
        [EXTRACTED, EXTRACTED, EXTRACTED],
        [ADD_BOTH, json.dumps({"operations": [{"action": "DELETE", "id": 1}]}), json.dumps(merge)],
    )
    _start(sim, model)
    _ada_lives(sim)
    await _consolidate(sim)
    run(sim, "Ada", "look")
    await _consolidate(sim)
    assert len(_bank(vault_dir)) == 2  # a lone DELETE is set aside
    run(sim, "Ada", "look")
    await _consolidate(sim)
    (entry,) = _bank(vault_dir)  # a merge: the UPDATE carries what the DELETE removes
    assert str(entry["content"]).endswith("do not draw from it.")


def test_conversations_come_from_the_newest_memories_only(
    sim: Simulation, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first pass over a long journal does not read all of it for 20 lines a partner."""
    monkeypatch.setattr("engine.agents.knowledge_inputs.TALK_SCANNED", 3)
    for n in range(5):
        run(sim, "Pat", f"say Line {n}.")
    ada = sim.minds["ada"]
    inputs = gather_inputs(
        ada, sim.vault.notes(ada.character.folder), sim.vault.journal_path(ada.character.folder),
        since_seq=0, since_at=None, warn=lambda _: None,
    )  # fmt: skip
    assert inputs.conversations == {
        "Pat": ['Pat says, "Line 2."', 'Pat says, "Line 3."', 'Pat says, "Line 4."']
    }
    assert inputs.memories == (0, 5)


async def test_a_summary_file_that_does_not_read_fails_the_pass_and_says_so(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model([EXTRACTED], [ADD_BOTH])
    _start(sim, model)
    _ada_lives(sim)
    summaries = vault_dir / "agents" / "Ada" / "summaries"
    summaries.mkdir(parents=True, exist_ok=True)
    (summaries / "recent-20260101-080000.md").write_text("---\n: not: yaml: [\n---\nbody")
    said = run(sim, "Ada", "@consolidate").text
    assert said.startswith("Ada's knowledge cannot be consolidated: ")
    await sim.wind_down_memory(5)  # the end of a run tries all the same, and fails
    assert model.calls == []
    failed = sim.knowledge.tally.failed
    assert failed >= 1  # (a retry may start before the drain says stop)
    status = run(sim, "Ada", "@memory-status").text
    assert f"knowledge passes failed: {failed}; last error: " in status
    assert "has invalid front matter" in status
