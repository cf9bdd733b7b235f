"""The handbook from the shell, against the loopback Ollama stub and real ``mudsim``
processes: three runs of a world in which the agents fetch water again and again give
each a handbook whose routing index points at a MEMORY.md cluster and at a skill for it;
the fourth run's prompts carry the profile and the tips; ``mudsim handbook`` lists the
files; a handbook file that does not read is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import mudsim

from engine.cli import main
from engine.llm.stub_server import StubOllama
from engine.memory.handbook import (
    PROFILE_WORDS,
    SUMMARY_TOKENS,
    TIPS,
    TIPS_MAX,
    estimate_tokens,
    numbered_items,
    routing_rows,
    sections,
    skill_problems,
)

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

ROUTINE = ["go north", "examine the old well", "note Water -> I filled the pail at the well."]
PROCEDURE = json.dumps(
    [{"type": "procedure", "tags": ["well", "water"],
      "content": "To fetch water: go north to the yard, then examine the old well, then "
                 "note how much water there is"}]
)  # fmt: skip


def _run(world_file: Path, vault_dir: Path, turns: int = 3) -> None:
    ran = mudsim("run", world_file, "--vault", vault_dir, "--headless", "--turns", turns)
    assert ran.returncode == 0, ran.stderr


def test_three_runs_of_a_routine_give_a_handbook_with_a_cluster_and_a_skill(
    world_file: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _ in range(3):
        with StubOllama(replies=ROUTINE, models=["gemma3:4b"], knowledge=[PROCEDURE] * 20) as stub:
            monkeypatch.setenv("MUDSIM_LLM_URL", stub.url)
            _run(world_file, vault_dir)
    folder = vault_dir / "agents" / "Ada" / "handbook"
    summary = (folder / "memory_summary.md").read_text()
    found = sections(summary)
    assert len(found["Profile"].split()) <= PROFILE_WORDS
    assert 0 < len(numbered_items(found[TIPS])) <= TIPS_MAX
    assert estimate_tokens(summary) < SUMMARY_TOKENS
    rows = {topic: location for topic, location, _ in routing_rows(summary)}
    assert rows["Water"] == "MEMORY.md > Water"  # the tag the bank's entries share most
    assert "## Water" in (folder / "MEMORY.md").read_text()
    skill = folder / "skills" / "fetch-water" / "SKILL.md"
    assert rows["fetch-water"] == "skills/fetch-water/SKILL.md"
    assert skill_problems("fetch-water", skill.read_text()) == []
    assert "`go north to the yard`" in skill.read_text()
    state = json.loads((folder / "handbook.json").read_text())
    assert state["method"] == "rules"  # the stub's handbook replies are empty: the fallback
    assert "not usable" in state["fallback"]

    with StubOllama(replies=ROUTINE, models=["gemma3:4b"], knowledge=[PROCEDURE] * 20) as stub:
        monkeypatch.setenv("MUDSIM_LLM_URL", stub.url)
        _run(world_file, vault_dir, turns=1)
        prompts = [str(r["prompt"]) for r in stub.requests if str(r["prompt"]).endswith("~Ada>")]
    assert prompts
    assert "## Handbook" in prompts[0]
    assert "1. To fetch water: go north to the yard" in prompts[0]


def test_the_handbook_verb_lists_the_files_and_names_a_broken_record(
    world_file: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    with StubOllama(replies=ROUTINE, models=["gemma3:4b"], knowledge=[PROCEDURE] * 20) as stub:
        monkeypatch.setenv("MUDSIM_LLM_URL", stub.url)
        _run(world_file, vault_dir)
    assert main(["handbook", "--vault", str(vault_dir), "--agent", "Ada"]) == 0
    out = capsys.readouterr().out
    assert "Ada's handbook (" in out
    assert "memory_summary.md" in out
    assert "MEMORY.md" in out
    assert "Written by the rules at 2026-01-01T" in out
    assert main(["handbook", "--vault", str(vault_dir), "--agent", "Ada", "--json"]) == 0
    shape = json.loads(capsys.readouterr().out)
    assert [Path(f["path"]).name for f in shape["files"]] == ["memory_summary.md", "MEMORY.md"]
    assert all(f["bytes"] > 0 for f in shape["files"])
    (vault_dir / "agents" / "Ada" / "handbook" / "handbook.json").write_text("[1, 2")
    assert main(["handbook", "--vault", str(vault_dir), "--agent", "Ada"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "handbook.json is not valid JSON" in err


def test_no_handbook_yet_says_when_one_comes(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = mudsim("do", world_file, "--vault", vault_dir, "--as", "Pat", "look")
    assert done.returncode == 0, done.stderr
    assert main(["handbook", "--vault", str(vault_dir), "--agent", "Bo"]) == 0
    assert "Bo has no handbook yet" in capsys.readouterr().out
    assert main(["handbook", "--vault", str(vault_dir), "--agent", "Nobody"]) == 2
