"""A knowledge pass and an undo killed at every crash point, in real ``mudsim``
processes against the loopback Ollama stub: afterwards the bank, its log, the pass
records and the handbook agree, and the next pass neither reads memories again nor
skips any (issue 30: one commit point for a pass)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import mudsim

from engine.llm.stub_server import StubOllama
from engine.memory.knowledge import BANK
from engine.memory.knowledge_view import bank_digest
from engine.vault.files import read_front_matter

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

NOTE = "note Well -> The yard well is dry; it has been since spring."
FIRST = [
    json.dumps([
        {"type": "fact", "content": "The yard well has been dry since spring 2026.", "tags": ["well"]},
        {"type": "skill", "content": "Write down what a place lacks before leaving it.", "tags": []},
    ]),
    json.dumps({"operations": [{"action": "ADD", "candidate": 0}, {"action": "ADD", "candidate": 1}]}),
]  # fmt: skip
SECOND = [
    json.dumps([{"type": "observation", "content": "Pat thanks people warmly.", "tags": ["pat"]}]),
    json.dumps({"operations": [{"action": "UPDATE", "id": 1, "content":
                                "The yard well has been dry since spring 2026; the river has water."},
                               {"action": "ADD", "candidate": 0}]}),
]  # fmt: skip
PASS_POINTS = [
    "knowledge-between-phases",
    "knowledge-after-plan",
    "knowledge-after-log",
    "knowledge-after-bank",
    "knowledge-after-record",
    "handbook-mid-write",
]
UNDO_POINTS = ["undo-after-plan", "undo-after-log", "undo-after-bank"]


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOllama]:
    with StubOllama(replies=["look"], models=["gemma3:4b"], knowledge=list(FIRST)) as server:
        monkeypatch.setenv("MUDSIM_LLM_URL", server.url)
        yield server


def _folder(vault_dir: Path) -> Path:
    return vault_dir / "agents" / "Ada" / "knowledge"


def _agreeing(vault_dir: Path) -> list[dict[str, Any]]:
    """Check that bank, log, records and handbook tell one story; the bank."""
    folder = _folder(vault_dir)
    assert not (folder / ".committing.json").exists()
    bank = json.loads((folder / "long-term-memory.json").read_text())
    lines = [json.loads(x) for x in (folder / "log.jsonl").read_text().splitlines()]
    undone = {x["pass"] for x in lines if x["op"] == "UNDO"}
    replayed: dict[str, str] = {}
    for x in lines:
        if x["op"] == "UNDO" or x["pass"] in undone:
            continue
        if x["op"] == "DELETE":
            replayed.pop(x["id"])
        else:
            replayed[x["id"]] = x["after"]["content"]
    assert replayed == {e["id"]: e["content"] for e in bank}, "the log replays to the bank"
    records = {}
    for path in sorted((folder / "passes").glob("*.md")):
        meta, _ = read_front_matter(path)
        records[meta["pass"]] = meta
    for pass_id, count in Counter(x["pass"] for x in lines if x["op"] != "UNDO").items():
        assert pass_id in records, f"pass {pass_id} is in the log with no record"
        ops = Counter(x["op"] for x in lines if x["pass"] == pass_id and x["op"] != "UNDO")
        assert records[pass_id]["operations"] == dict(ops)
        assert sum(ops.values()) == count
    done = [r for r in records.values() if r["status"] != "failed" and r.get("memories")]
    for earlier, later in itertools.pairwise(done):
        assert later["memories"][0] == earlier["memories"][1], "no memory read twice or skipped"
    handbook = vault_dir / "agents" / "Ada" / "handbook"
    state = json.loads((handbook / "handbook.json").read_text())
    assert state["bank_digest"] == bank_digest(BANK.validate_python(bank))
    assert not (handbook / ".writing").exists()
    return bank


@pytest.mark.parametrize("point", PASS_POINTS)
def test_a_pass_killed_at_any_point_is_wholly_in_or_out_and_all_files_agree(
    stub: StubOllama, world_file: Path, vault_dir: Path, point: str
) -> None:
    first = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", NOTE, "@consolidate")
    assert first.returncode == 0, first.stderr
    _agreeing(vault_dir)
    stub.knowledge = list(SECOND)
    killed = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "say Pat, thank you.",
                    "@consolidate", crash_at=point)  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    stub.knowledge = list(SECOND)
    again = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "@consolidate")
    assert again.returncode == 0, again.stderr
    bank = _agreeing(vault_dir)
    contents = [e["content"] for e in bank]
    assert contents.count("Pat thanks people warmly.") == 1
    assert len(bank) == 3
    summary = (vault_dir / "agents" / "Ada" / "handbook" / "memory_summary.md").read_text()
    assert "since spring 2026; the river has water" in summary


@pytest.mark.parametrize("point", UNDO_POINTS)
def test_an_undo_killed_at_any_point_is_done_once_and_the_handbook_follows(
    stub: StubOllama, world_file: Path, vault_dir: Path, point: str
) -> None:
    first = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", NOTE, "@consolidate")
    assert first.returncode == 0, first.stderr
    stub.knowledge = list(SECOND)
    second = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "say Pat, thank you.",
                    "@consolidate")  # fmt: skip
    assert second.returncode == 0, second.stderr
    killed = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "@knowledge undo",
                    crash_at=point)  # fmt: skip
    assert killed.returncode == -9, killed.stderr
    after = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "@knowledge")
    assert after.returncode == 0, after.stderr
    bank = _agreeing(vault_dir)
    assert [e["content"] for e in bank] == [
        "The yard well has been dry since spring 2026.",
        "Write down what a place lacks before leaving it.",
    ]
    summary = (vault_dir / "agents" / "Ada" / "handbook" / "memory_summary.md").read_text()
    assert "Pat thanks people warmly" not in summary
    assert "the river has water" not in summary
    log = (_folder(vault_dir) / "log.jsonl").read_text()
    assert log.count('"UNDO"') == 1


def _bo_knows(vault_dir: Path) -> None:
    stamp = {"sim": "2026-01-01T08:00", "at": "2026-11-25T10:00:00Z"}
    bank = [{"id": "ltm-1-b1", "type": "fact", "content": "The well rope was mended by Bo in spring.",
             "tags": ["well", "rope"], "created": stamp, "updated": stamp}]  # fmt: skip
    folder = vault_dir / "agents" / "Bo" / "knowledge"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "long-term-memory.json").write_text(json.dumps(bank))


@pytest.mark.parametrize(
    ("point", "added"),
    [
        ("knowledge-seed-before-world", False),
        ("knowledge-after-plan", False),  # the seed's plan: written before the character
        ("knowledge-seed-after-world", True),
        ("knowledge-after-log", True),
        ("knowledge-after-bank", True),
        ("knowledge-after-record", True),
    ],
)
def test_agent_new_killed_at_any_point_adds_the_agent_with_its_seed_or_not_at_all(
    world_file: Path, vault_dir: Path, point: str, added: bool
) -> None:
    seeded = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "look")
    assert seeded.returncode == 0, seeded.stderr
    _bo_knows(vault_dir)
    argv = ("agent", "new", world_file, "--vault", vault_dir, "--name", "Nell", "--keywords",
            "rope", "--from", "Bo")  # fmt: skip
    killed = mudsim(*argv, crash_at=point)
    assert killed.returncode == -9, killed.stderr
    world = (vault_dir / "world" / "world.yaml").read_text()
    assert ("Nell" in world) is added
    if not added:
        again = mudsim(*argv)  # the name is free, and the cut-short seed goes
        assert again.returncode == 0, again.stderr
        assert "Seeded 1 knowledge entry from Bo (1):" in again.stdout
    look = mudsim("do", world_file, "--vault", vault_dir, "--as", "Nell", "@knowledge")
    assert look.returncode == 0, look.stderr
    assert "The well rope was mended by Bo in spring." in look.stdout
    folder = vault_dir / "agents" / "Nell" / "knowledge"
    assert not (folder / ".committing.json").exists()
    log = [json.loads(x) for x in (folder / "log.jsonl").read_text().splitlines()]
    assert [x["op"] for x in log] == ["ADD"]
    (record,) = (folder / "passes").glob("*.md")
    assert record.stem == log[0]["pass"]
    bank = json.loads((folder / "long-term-memory.json").read_text())
    assert [e["id"] for e in bank] == [log[0]["id"]]
