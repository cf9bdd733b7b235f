"""Retrieval from the shell: ``mudsim recall`` reads a vault without its lock and shows
the best five with their scores; ``mudsim agent new`` adds an agent whose bank starts with
the other agents' knowledge that fits its role and keywords (each copy naming its
source), as one undoable pass; bad names are one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import REPO, mudsim

from engine.cli import main
from engine.memory.knowledge import Entry, Source, Stamp
from engine.vault.knowledge_store import KnowledgeStore

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default


def _cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _seed(world_file: Path, vault_dir: Path) -> None:
    done = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada",
                  "note Well -> The yard well runs dry in August.")  # fmt: skip
    assert done.returncode == 0, done.stderr
    stamp = Stamp(sim="2026-01-01T08:00", at="2026-11-25T10:00:00Z")

    def entry(n: int, kind: str, text: str, tags: list[str]) -> Entry:
        return Entry(id=f"ltm-{n}-b{n}", type=kind, content=text, tags=tags,  # type: ignore[arg-type]
                     source=Source(passes=["20261125-100000"]), created=stamp, updated=stamp)  # fmt: skip

    KnowledgeStore(vault_dir / "agents" / "Ada" / "knowledge").save([
        entry(1, "procedure", "To draw water: lower the pail slowly, then wind the rope back.", ["well", "water"]),
        entry(2, "fact", "Ada's roses need water every morning.", ["garden"]),
        entry(3, "mistake", "Do not lean over the well wall: the stones are loose.", ["well"]),
    ])  # fmt: skip
    KnowledgeStore(vault_dir / "agents" / "Bo" / "knowledge").save([
        entry(1, "fact", "The smithy fire needs charcoal, not wood.", ["forge"]),
        entry(2, "observation", "The well rope was mended by Bo in spring.", ["well", "rope"]),
    ])  # fmt: skip


def test_recall_from_the_shell_shows_the_best_with_scores(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(world_file, vault_dir)
    code, out, _ = _cli(capsys, "recall", "--vault", vault_dir, "--agent", "Ada", "well", "water")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "What Ada recalls about 'well water':"
    assert "To draw water: lower the pail slowly" in lines[1]
    assert "(knowledge ltm-1-b1 (procedure); rel " in lines[1]
    assert any("(note 'Well'; rel" in line for line in lines)
    assert len(lines) <= 6
    code, out, _ = _cli(capsys, "recall", "--vault", vault_dir, "--agent", "Ada", "dragons")
    assert (code, out.strip()) == (0, "Nothing Ada knows mentions 'dragons'.")
    code, _, err = _cli(capsys, "recall", "--vault", vault_dir, "--agent", "Nobody", "well")
    assert code == 2
    assert err.count("\n") == 1


def test_a_new_agent_starts_with_the_others_relevant_knowledge(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(world_file, vault_dir)
    code, out, err = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, "--name",
                          "Nell", "--role", "water carrier", "--keywords", "well", "rope")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == f"Added Nell (agent) in The Hall, {vault_dir}."
    bank = json.loads(
        (vault_dir / "agents" / "Nell" / "knowledge" / "long-term-memory.json").read_text()
    )
    contents = [e["content"] for e in bank]
    assert "Do not lean over the well wall: the stones are loose." in contents
    assert "The well rope was mended by Bo in spring." in contents
    assert "The smithy fire needs charcoal, not wood." not in contents
    sources = {e["content"]: e["source"]["copied_from"] for e in bank}
    assert sources["The well rope was mended by Bo in spring."] == ["Bo:ltm-2-b2"]
    agent = (vault_dir / "agents" / "Nell" / "agent.md").read_text()
    assert "occupation: water carrier" in agent
    assert "type: agent" in agent
    look = mudsim("do", world_file, "--vault", vault_dir, "--as", "Nell", "@knowledge",
                  "@knowledge undo", "@knowledge")  # fmt: skip
    assert look.returncode == 0, look.stderr
    assert "Your knowledge bank: " in look.stdout
    assert "Your knowledge bank is empty." in look.stdout


def test_from_limits_the_donors_and_bad_names_are_refused(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(world_file, vault_dir)
    code, out, _ = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, "--name",
                        "Wynn", "--keywords", "well", "--from", "Bo")  # fmt: skip
    assert code == 0
    assert "Seeded 1 knowledge entry from Bo (1):" in out
    for argv, why in (
        (["--name", "Ada"], "already a character called 'Ada'"),
        (["--name", "Rook", "--from", "Pat"], "Pat is a player"),
        (["--name", "Rook", "--from", "Nobody"], "no single character called 'Nobody'"),
        (["--name", "???"], "???"),
    ):
        code, _, err = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, *argv)
        assert code == 2, argv
        assert why in err
        assert err.count("\n") == 1


def test_an_embedder_profile_makes_each_turn_embed_over_the_stub(
    world_file: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.llm.stub_server import StubOllama

    (vault_dir / "config").mkdir(parents=True)
    (vault_dir / "config" / "llm.md").write_text(
        "---\nprofiles:\n  embedder:\n    model: tiny-embed\n---\nEmbeddings on.\n"
    )
    with StubOllama(replies=["note Lamp -> The brass lamp needs oil."],
                    models=["gemma3:4b", "tiny-embed"]) as stub:  # fmt: skip
        monkeypatch.setenv("MUDSIM_LLM_URL", stub.url)
        ran = mudsim("run", world_file, "--vault", vault_dir, "--headless", "--turns", "2")
        assert ran.returncode == 0, ran.stderr
        assert stub.hits["/api/embed"] >= 4  # each turn: its situation (and new items)


def test_one_keyword_in_common_is_enough_to_seed_and_no_match_is_said_as_such(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 30, item 13: two facts of Bo's with "vorpelwick" are seeded for that one
    keyword; a keyword none of Bo's entries holds is said to match nothing, not that Bo
    knows nothing."""
    _seed(world_file, vault_dir)
    stamp = Stamp(sim="2026-01-01T08:00", at="2026-11-25T10:00:00Z")
    store = KnowledgeStore(vault_dir / "agents" / "Bo" / "knowledge")
    store.save([*store.load(), *[
        Entry(id=f"ltm-{n}-v{n}", type="fact", content=text, tags=["travel"],
              source=Source(passes=["20261125-100000"]), created=stamp, updated=stamp)
        for n, text in ((7, "Vorpelwick lies two days east of the ford."),
                        (8, "The road to Vorpelwick floods every spring."))
    ]])  # fmt: skip
    code, out, err = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, "--name",
                          "Wynn", "--keywords", "vorpelwick", "--from", "Bo")  # fmt: skip
    assert code == 0, err
    assert "Seeded 2 knowledge entries from Bo (2):" in out
    assert "Vorpelwick lies two days east of the ford." in out
    code, out, err = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, "--name",
                          "Rook", "--keywords", "zanzibarite", "--from", "Bo")  # fmt: skip
    assert code == 0, err
    assert "Nothing to seed its knowledge with: no entry of Bo matches 'zanzibarite'." in out
    assert "knows nothing" not in out


def test_knows_nothing_yet_only_when_the_bank_is_empty(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = mudsim("do", world_file, "--vault", vault_dir, "--as", "Ada", "look")
    assert done.returncode == 0, done.stderr
    code, out, err = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, "--name",
                          "Wynn", "--keywords", "well", "--from", "Bo")  # fmt: skip
    assert code == 0, err
    assert "Nothing to seed its knowledge with: Bo knows nothing yet." in out


def test_a_new_agent_takes_the_windows_the_worlds_agents_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world, vault = REPO / "worlds" / "pocket.yaml", tmp_path / "v"
    done = mudsim("do", world, "--vault", vault, "--as", "Wren", "look")
    assert done.returncode == 0, done.stderr
    code, _, err = _cli(capsys, "agent", "new", world, "--vault", vault, "--name", "Fern")
    assert code == 0, err
    agent = (vault / "agents" / "Fern" / "agent.md").read_text()
    assert "immediate_window: 16" in agent
    assert "recent_window: 16" in agent


IRREGULAR = [
    ("wolves", "A wolf was seen near the quarry."),
    ("loaves", "A loaf of rye costs two coins at the mill."),
    ("mice", "A mouse lives in the granary wall."),
    ("children", "The miller's child fishes by the weir."),
    ("bought", "Tam will buy wool at the fair."),
    ("ran", "Deer run across the ford at dusk."),
]


def test_irregular_words_recall_and_seed_by_their_lemma(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(world_file, vault_dir)
    stamp = Stamp(sim="2026-01-01T08:00", at="2026-11-25T10:00:00Z")
    KnowledgeStore(vault_dir / "agents" / "Bo" / "knowledge").save([
        Entry(id=f"ltm-{n}-c{n}", type="fact", content=text, source=Source(passes=["20261125-100000"]),
              created=stamp, updated=stamp)
        for n, (_, text) in enumerate(IRREGULAR, start=1)
    ])  # fmt: skip
    for word, text in IRREGULAR:
        code, out, _ = _cli(capsys, "recall", "--vault", vault_dir, "--agent", "Bo", word)
        assert code == 0
        assert text in out.splitlines()[1], (word, out)
    code, out, err = _cli(capsys, "agent", "new", world_file, "--vault", vault_dir, "--name",
                          "Nell", "--role", "baker", "--keywords", "loaves")  # fmt: skip
    assert code == 0, err
    bank = json.loads(
        (vault_dir / "agents" / "Nell" / "knowledge" / "long-term-memory.json").read_text()
    )
    assert [e["content"] for e in bank] == ["A loaf of rye costs two coins at the mill."]
