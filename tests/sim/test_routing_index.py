"""The handbook's routing index is read (issue 44, seed 004): memory_summary.md's Routing
Index and MEMORY.md's clusters, as they are on disk, add the words a skill or an entry
is found by, in the in-world ``recall``, ``mudsim recall`` and the turn's retrieval. A
person's edit of the index counts at once."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run

from engine.memory.handbook import Cluster, render_memory_md, render_skill, render_summary
from engine.memory.knowledge import Entry, Source, Stamp
from engine.sim.bootstrap import recall_report
from engine.sim.simulation import Simulation
from engine.vault.knowledge_store import KnowledgeStore

SKILL = "bank-the-fire"
STAMP = Stamp(sim="2026-01-01T08:00", at="2026-11-25T10:00:00Z")
BREAD = "Rye dough needs a whole night to rise."


def _handbook(vault_dir: Path, skill_row: str, cluster_keywords: list[str]) -> None:
    folder = vault_dir / "agents" / "Ada" / "handbook"
    (folder / "skills" / SKILL).mkdir(parents=True, exist_ok=True)
    (folder / "skills" / SKILL / "SKILL.md").write_text(render_skill(
        SKILL, "Bank the fire", "Keep coals alive overnight.", ["coals"],
        "Before sleeping.", ["Rake the coals together.", "Cover them with ash."], [], []))  # fmt: skip
    routes = [("Fire", f"skills/{SKILL}/SKILL.md", skill_row), ("Bread", "MEMORY.md > Bread", "")]
    (folder / "memory_summary.md").write_text(render_summary("Ada keeps the inn.", [], routes))
    bullet = f"{BREAD} (fact; learned 2026-01-01)"
    (folder / "MEMORY.md").write_text(
        render_memory_md("Ada", [Cluster("Bread", [], cluster_keywords, [bullet])])
    )


def _bank(vault_dir: Path) -> None:
    entry = Entry(id="ltm-1-aaaaaa", type="fact", content=BREAD, source=Source(),
                  created=STAMP, updated=STAMP)  # fmt: skip
    KnowledgeStore(vault_dir / "agents" / "Ada" / "knowledge").save([entry])


def test_a_skill_and_an_entry_are_found_only_through_the_routing_index(
    sim: Simulation, vault_dir: Path
) -> None:
    _bank(vault_dir)
    for words in ("hearth", "sourdough"):
        assert not run(sim, "Ada", f"recall {words}").ok  # no routing index yet
    _handbook(vault_dir, "hearth, embers", ["sourdough", "baking"])
    found = run(sim, "Ada", "recall hearth")
    assert found.ok, found.text
    assert "skill bank-the-fire" in found.text
    found = run(sim, "Ada", "recall sourdough")
    assert found.ok, found.text
    assert BREAD in found.text
    report = "\n".join(recall_report(vault_dir, "Ada", "embers"))
    assert "skill bank-the-fire" in report


def test_a_person_s_edit_of_the_index_counts_at_once(sim: Simulation, vault_dir: Path) -> None:
    _bank(vault_dir)
    _handbook(vault_dir, "hearth", ["sourdough"])
    assert run(sim, "Ada", "recall hearth").ok
    _handbook(vault_dir, "chimney", ["leaven"])  # a person rewrites the keywords
    assert not run(sim, "Ada", "recall hearth").ok
    assert "skill bank-the-fire" in run(sim, "Ada", "recall chimney").text
    assert BREAD in run(sim, "Ada", "recall leaven").text
    assert json.loads((vault_dir / "agents/Ada/knowledge/long-term-memory.json").read_text())
