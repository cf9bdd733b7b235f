"""Small stumbles of the first hour (issue 32): a report that says "1 candidate", and the
README's pandas snippets installable through the extra they name."""

from __future__ import annotations

import tomllib
from pathlib import Path

from helpers import REPO, mudsim

from engine.memory.knowledge import Entry, Stamp
from engine.memory.knowledge_ops import Change
from engine.sim.knowledge_report import knowledge_report
from engine.vault.knowledge_store import KnowledgeStore, PassRecord


def test_one_candidate_is_one_candidate(world_file: Path, vault_dir: Path) -> None:
    done = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "look")
    assert done.returncode == 0, done.stderr
    now = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00.000000Z")
    entry = Entry(id="ltm-1-a1", type="fact", content="The well is dry.", created=now, updated=now)
    record = PassRecord.model_validate({"pass": "20260101-080000", "status": "changed",
                                        "started": now, "finished": now, "candidates": 1})  # fmt: skip
    store = KnowledgeStore(vault_dir / "agents" / "Ada" / "knowledge")
    store.commit_pass(record.pass_id, "GENEROUS", [Change(op="ADD", id=entry.id, after=entry)],
                      record, [("fact", entry.content, [])])  # fmt: skip
    report = knowledge_report(vault_dir, "Ada")
    assert ": 1 candidate, 1 ADD" in report


def test_the_analysis_extra_installs_pandas_for_the_readmes_snippets() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    analysis = project["project"]["optional-dependencies"]["analysis"]
    assert any(requirement.startswith("pandas") for requirement in analysis)
    assert "import pandas" in (REPO / "README.md").read_text(encoding="utf-8")
