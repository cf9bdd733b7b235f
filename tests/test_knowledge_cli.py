"""The knowledge bank from the shell, against the loopback Ollama stub: ``do
"@consolidate"`` returns with the pass done, ``mudsim knowledge`` lists it, ``status``
shows it; a real process killed between the two phases or during the commit leaves a
bank that is old or new and loads; the same world run twice adds no exact duplicate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import mudsim

from engine.cli import main
from engine.llm.stub_server import StubOllama

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

NOTE = "note Well -> The yard well is dry; it has been since spring."
EXTRACTED = json.dumps(
    [
        {
            "type": "fact",
            "content": "The yard well has been dry since spring 2026.",
            "tags": ["well"],
        },
        {
            "type": "skill",
            "content": "Write down what a place lacks before leaving it.",
            "tags": [],
        },
    ]
)
ADD_BOTH = json.dumps(
    {"operations": [{"action": "ADD", "candidate": 0}, {"action": "ADD", "candidate": 1}]}
)


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubOllama]:
    with StubOllama(
        replies=["look"], models=["gemma3:4b"], knowledge=[EXTRACTED, ADD_BOTH]
    ) as server:
        monkeypatch.setenv("MUDSIM_LLM_URL", server.url)
        yield server


def _bank(vault_dir: Path) -> list[dict[str, object]]:
    path = vault_dir / "agents" / "Ada" / "knowledge" / "long-term-memory.json"
    return json.loads(path.read_text()) if path.exists() else []


def _cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_do_consolidate_returns_with_the_pass_done_and_the_shell_lists_it(
    stub: StubOllama, world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(
        capsys, "do", world_file, "--vault", vault_dir, "--as", "Ada", NOTE, "@consolidate"
    )
    assert code == 0, err
    assert "Consolidating Ada's knowledge from 1 note and memories #0-#0." in out
    sent = [b for b in stub.requests if str(b.get("prompt", "")).rstrip().endswith("JSON array:")]
    assert "The yard well is dry; it has been since spring." in sent[0]["prompt"]
    assert sent[0]["format"]["type"] == "array"  # the schema rides along as Ollama's format
    code, out, err = _cli(capsys, "knowledge", "--vault", vault_dir, "--agent", "Ada")
    assert code == 0, err
    assert "Ada's knowledge bank: 2 entries" in out
    assert "(fact, 0 accesses) The yard well has been dry since spring 2026. [tags: well]" in out
    assert "candidates, 2 ADD" in out
    code, out, _ = _cli(
        capsys, "knowledge", "--vault", vault_dir, "--agent", "Ada", "--type", "skill", "--json"
    )
    data = json.loads(out)
    assert [e["type"] for e in data["entries"]] == ["skill"]
    assert data["last_pass"]["status"] == "changed"
    code, out, _ = _cli(capsys, "status", "--vault", vault_dir, "--agent", "Ada", "--json")
    (ada,) = json.loads(out)["agents"]
    assert ada["knowledge"]["entries"] == 2
    assert ada["knowledge"]["tier"] == "GENEROUS"
    assert ada["knowledge"]["last_status"] == "changed"


def test_the_shell_refuses_an_unknown_agent_and_a_corrupt_bank_in_one_line(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(capsys, "do", world_file, "--vault", vault_dir, "look")[0] == 0
    code, _, err = _cli(capsys, "knowledge", "--vault", vault_dir, "--agent", "Zed")
    assert code == 2
    assert err.count("\n") == 1
    folder = vault_dir / "agents" / "Ada" / "knowledge"
    folder.mkdir(parents=True)
    (folder / "long-term-memory.json").write_text("{not json")
    code, _, err = _cli(capsys, "knowledge", "--vault", vault_dir, "--agent", "Ada")
    assert code == 2
    assert "long-term-memory.json is not a valid knowledge bank" in err
    assert err.count("\n") == 1
    code, out, _ = _cli(capsys, "status", "--vault", vault_dir, "--agent", "Ada")
    assert code == 0
    assert "knowledge problem: " in out
    assert "Ada/knowledge/long-term-memory.json is not a valid knowledge bank" in out


@pytest.mark.parametrize(
    ("point", "added"),
    [("knowledge-between-phases", 0), ("knowledge-after-log", 0), ("knowledge-after-bank", 2)],
)
def test_a_kill_leaves_the_bank_old_or_new_and_the_next_pass_goes_on(
    stub: StubOllama, world_file: Path, vault_dir: Path, point: str, added: int
) -> None:
    first = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", NOTE, "@consolidate")
    assert first.returncode == 0, first.stderr
    before = _bank(vault_dir)
    assert len(before) == 2
    stub.knowledge = [
        json.dumps(
            [{"type": "observation", "content": "Pat thanks people warmly.", "tags": ["pat"]}]
        ),
        json.dumps({"operations": [{"action": "ADD", "candidate": 0}]}),
    ]
    killed = mudsim(
        "do",
        world_file,
        "--vault",
        vault_dir,
        "--as",
        "Ada",
        "look",
        "@consolidate",
        crash_at=point,
    )
    assert killed.returncode == -9
    after = _bank(vault_dir)  # loads: old or new, never half
    assert len(after) == 2 + (1 if added else 0)
    stub.knowledge = [
        json.dumps(
            [{"type": "observation", "content": "Pat thanks people warmly.", "tags": ["pat"]}]
        ),
        json.dumps({"operations": [{"action": "ADD", "candidate": 0}]}),
    ]
    again = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "@consolidate")
    assert again.returncode == 0, again.stderr
    contents = [e["content"] for e in _bank(vault_dir)]
    assert contents.count("Pat thanks people warmly.") == 1  # no exact duplicate either way


def test_the_same_world_run_twice_adds_no_exact_duplicates(
    world_file: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [NOTE, "look", "say Hello, Pat."]
    for _ in range(2):
        with StubOllama(
            replies=script, models=["gemma3:4b"], knowledge=[EXTRACTED, ADD_BOTH] * 3
        ) as server:
            monkeypatch.setenv("MUDSIM_LLM_URL", server.url)
            ran = mudsim("run", world_file, "--vault", vault_dir, "--headless", "--turns", "3")
            assert ran.returncode == 0, ran.stderr
    contents = [e["content"] for e in _bank(vault_dir)]
    assert sorted(contents) == sorted(set(contents))
    assert "The yard well has been dry since spring 2026." in contents
    records = list((vault_dir / "agents" / "Ada" / "knowledge" / "passes").glob("*.md"))
    assert len(records) == 2  # one pass at the end of each run
