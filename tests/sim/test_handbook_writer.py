"""The handbook written after knowledge passes, in a simulation: by the rules, by the
model (INIT, then INCREMENTAL with only the new records), its fallbacks (a reply that is
not a handbook is asked once more, then the rules write it; so does a failed call), a
write the disk refuses, and what a turn's prompt carries of it. Ada in the fixture world;
a recording backend plays the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import run, set_actor

from engine.errors import LLMUnavailableError
from engine.llm.request import Generation, LLMRequest, Priority
from engine.memory.handbook import (
    Cluster,
    estimate_tokens,
    render_cluster,
    render_skill,
    render_summary,
    routing_rows,
)
from engine.memory.handbook_prompts import CUE
from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation

PROCEDURE = "To draw water: go north to the yard, then examine the old well, then fill the pail"


def extracted(content: str = PROCEDURE, kind: str = "procedure") -> str:
    return json.dumps([{"type": kind, "content": content, "tags": ["well", "water"]}])


def handbook_reply(tip: str = "Check the well before dawn.", skill: bool = False) -> str:
    summary = render_summary("Ada, a careful gardener.", [tip],
                             [("Well", "MEMORY.md > Well", "well, water")])  # fmt: skip
    memory = "# Ada's memory\n\n" + render_cluster(
        Cluster("Well", ["knowledge/passes/x.md"], ["well"], [tip])
    )
    skills = []
    if skill:
        text = render_skill("draw-water", "Draw water", PROCEDURE, ["well"], "When thirsty.",
                            ["`go north`", "`examine the old well`"], [], [])  # fmt: skip
        skills.append({"name": "draw-water", "skill_md": text + f"\n{PROCEDURE}\n"})
    return json.dumps({"memory_summary": summary, "memory_md": memory, "skills": skills})


class Model:
    """Extraction gets ``knowledge`` (consolidation too: its items hold no operation, so
    every new candidate is added); handbook requests get ``handbook`` in order."""

    def __init__(
        self, knowledge: str = "[]", handbook: list[str | Exception] | None = None
    ) -> None:
        self.knowledge = knowledge
        self.handbook = list(handbook or [])
        self.calls: list[tuple[LLMRequest, str]] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.calls.append((request, prompt))
        if request.role == "handbook":
            answer = self.handbook.pop(0) if self.handbook else ""
            if isinstance(answer, Exception):
                raise answer
            return Generation(text=answer, prompt_tokens=len(prompt) // 4, completion_tokens=9)
        if request.role == "consolidator":
            return Generation(text=self.knowledge, prompt_tokens=9, completion_tokens=9)
        return Generation(text="I lived a quiet day.", prompt_tokens=1, completion_tokens=1)

    def handbook_prompts(self) -> list[tuple[LLMRequest, str]]:
        return [(r, p) for r, p in self.calls if r.role == "handbook"]


def _handbook(vault_dir: Path) -> Path:
    return vault_dir / "agents" / "Ada" / "handbook"


def _section(prompt: str) -> str:
    """The prompt's handbook section ("" when it has none)."""
    if "## Handbook\n" not in prompt:
        return ""
    rest = prompt.split("## Handbook\n", 1)[1]
    return rest.split("\n---\n", 1)[0].split("\n## ", 1)[0]


def _start(sim: Simulation, model: Model, method: str = "llm") -> None:
    sim.knowledge.first_delay = sim.knowledge.max_delay = 0.001
    sim.start_compaction(model, {c.id: "tiny" for c in sim.world.characters.values()})
    assert sim.knowledge.handbook is not None
    sim.knowledge.handbook.method = method  # type: ignore[assignment]


async def _pass(sim: Simulation, note: str = "note Well -> Dry again.") -> None:
    run(sim, "Ada", note)
    run(sim, "Ada", "look")
    run(sim, "Ada", "@consolidate")
    await sim.settle_memory(5)


async def test_the_rules_write_the_handbook_after_a_pass_with_no_model_call(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "rules")
    await _pass(sim)
    assert model.handbook_prompts() == []
    summary = (_handbook(vault_dir) / "memory_summary.md").read_text()
    assert "A careful gardener." in summary
    assert "1. The yard well has been dry since spring." in summary
    assert "## Well" in (_handbook(vault_dir) / "MEMORY.md").read_text()
    state = json.loads((_handbook(vault_dir) / "handbook.json").read_text())
    assert (state["method"], state["fallback"]) == ("rules", None)


async def test_auto_means_the_rules_for_the_embedded_model(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "auto")
    assert sim.knowledge.handbook is not None
    sim.knowledge.handbook.embedded = True
    await _pass(sim)
    assert model.handbook_prompts() == []
    assert (_handbook(vault_dir) / "memory_summary.md").is_file()


async def test_the_model_writes_init_then_incremental_with_only_the_new_record(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"),
                  [handbook_reply("First tip."), handbook_reply("Second tip.")])  # fmt: skip
    _start(sim, model)
    await _pass(sim)
    await _pass(sim, "note Rain -> It rained on the yard.")
    (first_request, first), (_, second) = model.handbook_prompts()
    assert first_request.priority is Priority.CONSOLIDATION
    assert first_request.options["num_predict"] >= 3_000
    assert first.rstrip().endswith(CUE)
    assert "Mode: INIT" in first
    records = sorted(p.stem for p in (vault_dir / "agents/Ada/knowledge/passes").glob("*.md"))
    assert f"### knowledge/passes/{records[0]}.md" in first
    assert "Mode: INCREMENTAL" in second
    assert "1. First tip." in second  # the existing summary
    assert f"### knowledge/passes/{records[1]}.md" in second
    assert f"### knowledge/passes/{records[0]}.md" not in second
    assert "1. Second tip." in (_handbook(vault_dir) / "memory_summary.md").read_text()
    state = json.loads((_handbook(vault_dir) / "handbook.json").read_text())
    assert (state["method"], state["mode"], state["through_pass"]) == ("llm", "INCREMENTAL",
                                                                      records[1])  # fmt: skip


@pytest.mark.parametrize(
    "answers",
    [
        ["not json at all", "{still not"],
        [json.dumps({"memory_summary": "## Profile\nAda.", "memory_md": "x", "skills": []})] * 2,
        [LLMUnavailableError("the server is down")],
    ],
)
async def test_an_unusable_reply_is_asked_once_more_then_the_rules_write_it(
    sim: Simulation, vault_dir: Path, answers: list[str | Exception]
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"), answers)
    _start(sim, model)
    await _pass(sim)
    calls = 1 if isinstance(answers[0], Exception) else 2
    assert len(model.handbook_prompts()) == calls
    state = json.loads((_handbook(vault_dir) / "handbook.json").read_text())
    assert state["method"] == "rules"
    assert "not usable" in state["fallback"]
    assert (
        "1. The yard well has been dry since spring."
        in (_handbook(vault_dir) / "memory_summary.md").read_text()
    )
    assert sim.knowledge.handbook is not None
    assert sim.knowledge.handbook.tally.fallbacks == 1


async def test_a_model_skill_without_three_passes_behind_it_is_left_out(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted(), [handbook_reply(skill=True)])
    _start(sim, model)
    await _pass(sim)
    assert not (_handbook(vault_dir) / "skills").exists()
    summary = (_handbook(vault_dir) / "memory_summary.md").read_text()
    assert [row[0] for row in routing_rows(summary)] == ["Well"]


async def test_a_procedure_repeated_in_three_passes_becomes_a_skill(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted())
    _start(sim, model, "rules")
    for day in range(3):
        await _pass(sim, f"note Day -> Day {day}: I fetched water again.")
    skill = _handbook(vault_dir) / "skills" / "draw-water" / "SKILL.md"
    assert skill.is_file()
    assert "1. `go north to the yard`" in skill.read_text()
    assert "@skill" in run(sim, "Ada", "@handbook").text
    assert "# Skill: Draw water" in run(sim, "Ada", "@skill draw").text


async def test_a_handbook_the_disk_refuses_is_counted_and_the_pass_stands(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "rules")
    _handbook(vault_dir).parent.mkdir(parents=True, exist_ok=True)
    _handbook(vault_dir).write_text("a file where the handbook folder must go")
    warned: list[str] = []
    sim.knowledge.warn = warned.append
    await _pass(sim)
    assert sim.knowledge.tally.passes == 1
    assert sim.knowledge.tally.failed == 0
    assert sim.knowledge.handbook is not None
    assert sim.knowledge.handbook.tally.failed == 1
    assert any("the handbook of Ada was not written" in w for w in warned)
    assert (
        len(json.loads((vault_dir / "agents/Ada/knowledge/long-term-memory.json").read_text())) == 1
    )


async def test_a_bank_from_before_the_handbook_gets_one_on_the_next_pass(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "rules")
    await _pass(sim)
    for path in sorted(_handbook(vault_dir).rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    run(sim, "Ada", "@consolidate")  # nothing new since the pass
    await sim.settle_memory(5)
    assert (_handbook(vault_dir) / "memory_summary.md").is_file()


async def test_the_next_turn_prompt_carries_the_profile_and_first_tips(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "rules")
    run(sim, "Ada", "@set-profile A careful gardener who hums.")
    await _pass(sim)
    prompt = build_prompt(sim, sim.character("Ada"))
    section = _section(prompt)
    assert prompt.index("## Handbook") < prompt.index("---")  # before the memories
    assert "1. The yard well has been dry since spring." in section
    assert "A woman with soil on her boots." in section
    assert "A careful gardener who hums." not in section  # the prompt's first line has it


async def test_handbook_tokens_zero_leaves_it_out_and_a_small_budget_cuts_it(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "rules")
    await _pass(sim)
    (_handbook(vault_dir) / "memory_summary.md").write_text(
        render_summary("Ada.", [f"Tip number {n} about the well." for n in range(80)], [])
    )
    budgets = {}
    for tokens in (0, 20, 300):
        set_actor(sim, handbook_tokens=tokens)
        budgets[tokens] = _section(build_prompt(sim, sim.character("Ada")))
    assert budgets[0] == ""
    assert len(budgets[20]) <= 20 * 3.5
    assert "Tip number 1 about" in budgets[300]
    assert "Tip number 70" not in budgets[300]


async def test_the_prompt_with_the_handbook_still_fits_num_ctx(
    sim: Simulation, vault_dir: Path
) -> None:
    model = Model(extracted("The yard well has been dry since spring.", "fact"))
    _start(sim, model, "rules")
    await _pass(sim)
    for index in range(300):
        run(sim, "Ada", f"think A long thought number {index} " + "about wells " * 20)
    set_actor(sim, options={**sim.settings.llm.profiles["actor"].options, "num_ctx": 1024})
    prompt = build_prompt(sim, sim.character("Ada"))
    assert "## Handbook" in prompt
    assert estimate_tokens(prompt) <= 1024
