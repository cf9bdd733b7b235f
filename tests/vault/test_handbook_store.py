"""The handbook's files: written with the previous version of each kept as ``.prev``,
undone one write back, redacted, and a write cut short by a failing file (or a SIGKILL)
finished by the next one without losing what undo needs."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO, mudsim_env

from engine.errors import VaultError
from engine.memory.handbook import Handbook, render_summary
from engine.memory.knowledge import Stamp
from engine.vault.handbook_store import HandbookState, HandbookStore

NOW = Stamp(sim="2026-01-02T08:00", at="2026-11-25T10:00:00Z")


def book(tip: str, skills: dict[str, str] | None = None) -> Handbook:
    summary = render_summary("Wren, a cook.", [tip], [])
    return Handbook(summary, f"# Wren's memory\n\nAbout {tip}\n", skills or {})


def state(through: str = "p1") -> HandbookState:
    return HandbookState(method="rules", mode="RULES", through_pass=through, updated=NOW)


@pytest.fixture
def store(tmp_path: Path) -> HandbookStore:
    return HandbookStore(tmp_path / "agents" / "Wren" / "handbook")


def test_the_first_write_creates_the_files_and_undo_removes_them(store: HandbookStore) -> None:
    written = store.write(book("Knead first.", {"bake-bread": "# Skill: Bake\n"}), state())
    assert sorted(written.created) == ["MEMORY.md", "handbook.json", "memory_summary.md",
                                       "skills/bake-bread/SKILL.md"]  # fmt: skip
    assert store.skills() == ["bake-bread"]
    assert "1. Knead first." in (store.summary_text() or "")
    undone = store.undo()
    assert undone is not None
    assert sorted(undone.removed) == ["MEMORY.md", "handbook.json", "memory_summary.md",
                                      "skills/bake-bread/SKILL.md"]  # fmt: skip
    assert store.read() is None
    assert store.skills() == []
    assert store.undo() is None


def test_undo_puts_the_previous_write_back_once(store: HandbookStore) -> None:
    store.write(book("Old tip.", {"old-skill": "# Skill: Old\n"}), state("p1"))
    store.write(book("New tip.", {"new-skill": "# Skill: New\n"}), state("p2"))
    assert store.skills() == ["new-skill"]
    assert (store.folder / "memory_summary.md.prev").is_file()
    undone = store.undo()
    assert undone is not None
    assert "skills/new-skill/SKILL.md" in undone.removed
    assert "1. Old tip." in (store.summary_text() or "")
    assert store.skills() == ["old-skill"]
    assert (store.state() or state()).through_pass == "p1"
    assert store.undo() is None, "undo goes back one write, not to nothing"
    assert "1. Old tip." in (store.summary_text() or "")


def test_secrets_never_reach_the_files(store: HandbookStore) -> None:
    key = "sk-proj-" + "a1B2c3D4e5" * 4
    store.write(book(f"The door code is password=hunter2 and the key {key}."), state())
    for path in store.folder.rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert "hunter2" not in text
            assert key not in text


def test_a_write_cut_short_is_finished_by_the_next_and_undo_still_goes_back(
    store: HandbookStore,
) -> None:
    store.write(book("Old tip."), state("p1"))
    blocker = store.folder / "skills" / "bake-bread"
    blocker.parent.mkdir()
    blocker.write_text("a file where the skill's folder must go")
    with pytest.raises(VaultError, match=r"cannot create the folder .*bake-bread"):
        store.write(book("New tip.", {"bake-bread": "# Skill: Bake\n"}), state("p2"))
    assert (store.folder / ".writing").is_file()
    assert "1. Old tip." in (store.summary_text() or "")
    with pytest.raises(VaultError, match="interrupted"):
        store.undo()
    blocker.unlink()
    store.write(book("New tip.", {"bake-bread": "# Skill: Bake\n"}), state("p2"))
    assert not (store.folder / ".writing").exists()
    assert "1. New tip." in (store.summary_text() or "")
    undone = store.undo()
    assert undone is not None
    assert undone.removed == ["skills/bake-bread/SKILL.md"]
    assert "1. Old tip." in (store.summary_text() or "")
    assert (store.state() or state()).through_pass == "p1"


KILL_SCRIPT = """
import sys
from pathlib import Path
from engine.memory.handbook import Handbook, render_summary
from engine.memory.knowledge import Stamp
from engine.vault.handbook_store import HandbookState, HandbookStore
store = HandbookStore(Path(sys.argv[1]))
summary = render_summary("Wren, a cook.", ["New tip."], [])
store.write(Handbook(summary, "# New memory\\n", {"bake-bread": "# Skill: Bake\\n"}),
            HandbookState(method="rules", mode="RULES", through_pass="p2",
                          updated=Stamp(sim="2026-01-02T08:00", at="2026-11-25T10:00:00Z")))
"""


@pytest.mark.parametrize("point", ["handbook-mid-write:1", "handbook-mid-write:2"])
def test_a_kill_mid_write_leaves_files_that_read_and_the_next_write_finishes(
    store: HandbookStore, point: str
) -> None:
    store.write(book("Old tip."), state("p1"))
    killed = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(store.folder)], cwd=REPO,
        env=mudsim_env(point), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert store.read() is not None  # every file reads: old or new, never half
    store.write(book("New tip.", {"bake-bread": "# Skill: Bake\n"}), state("p2"))
    store.undo()
    assert "1. Old tip." in (store.summary_text() or "")
    assert store.skills() == []


def test_a_broken_record_is_named(store: HandbookStore) -> None:
    store.write(book("Tip."), state())
    (store.folder / "handbook.json").write_text('{"method": "guess"}')
    with pytest.raises(VaultError, match=r"handbook\.json is not a handbook record"):
        store.state()


def test_a_write_that_changes_nothing_writes_nothing_and_undo_still_reaches_back(
    store: HandbookStore,
) -> None:
    store.write(book("Old tip."), state("p1"))
    store.write(book("New tip."), state("p2"))
    before = {p: p.stat().st_mtime_ns for p in store.folder.rglob("*") if p.is_file()}
    assert store.write(book("New tip."), state("p3")).through_pass == "p2"
    assert {p: p.stat().st_mtime_ns for p in store.folder.rglob("*") if p.is_file()} == before
    store.undo()
    assert "1. Old tip." in (store.summary_text() or "")
