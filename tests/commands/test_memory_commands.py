"""think, note, @overwrite-note, recall, @memory-status."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import memories, run

from engine.memory.record import MemoryKind
from engine.sim.simulation import Simulation


def notes_dir(vault_dir: Path, who: str) -> Path:
    return vault_dir / "agents" / who / "notes"


def test_think_is_a_private_thought(sim: Simulation) -> None:
    result = run(sim, "Pat", "think Moss knows the ledger")
    assert result.ok
    assert result.text == "You think: Moss knows the ledger"
    record = sim.minds[sim.character("Pat").id].tail[-1]
    assert record.kind is MemoryKind.THOUGHT
    assert record.text == "You think: Moss knows the ledger"
    assert memories(sim, "Ada") == ["Pat pauses in thought."]


def test_think_nothing_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "think")
    assert not result.ok
    assert result.text == "Think what?"
    record = sim.minds[sim.character("Pat").id].tail[-1]
    assert record.failed
    assert record.kind is MemoryKind.RESULT


def test_note_appends_entries_to_one_file(sim: Simulation, vault_dir: Path) -> None:
    first = run(sim, "Pat", "note Moss -> Librarian.")
    second = run(sim, "Pat", "note Moss -> Knows the ledger.")
    assert first.ok
    assert second.ok
    assert second.text == "You add to your note 'Moss'."
    content = (notes_dir(vault_dir, "Pat") / "Moss.md").read_text(encoding="utf-8")
    assert "title: Moss" in content
    assert content.endswith("Librarian.\n\n---\n\nKnows the ledger.\n")
    assert memories(sim, "Ada") == ["Pat jots something down."] * 2


def test_note_keeps_the_reason_in_the_file(sim: Simulation, vault_dir: Path) -> None:
    run(sim, "Pat", "note Plans -> Find the key. | I keep forgetting")
    content = (notes_dir(vault_dir, "Pat") / "Plans.md").read_text(encoding="utf-8")
    assert "reason: I keep forgetting" in content
    assert content.endswith("Find the key.\n")


def test_note_without_an_arrow_fails(sim: Simulation, vault_dir: Path) -> None:
    result = run(sim, "Pat", "note Moss is a librarian")
    assert not result.ok
    assert result.text == "A note needs a title and some text, with -> between them."
    assert result.hint == "Write it as: note <title> -> <text>"
    assert not notes_dir(vault_dir, "Pat").exists()


@pytest.mark.parametrize("title", ["../", "///", "..", "_-_"])
def test_note_with_an_unsafe_title_is_refused(
    sim: Simulation, vault_dir: Path, tmp_path: Path, title: str
) -> None:
    before = set(tmp_path.rglob("*"))
    result = run(sim, "Pat", f"note {title} -> gotcha")
    assert not result.ok
    assert result.text == f"'{title}' cannot be a note title: it needs letters or digits."
    written = set(tmp_path.rglob("*")) - before
    assert written <= {vault_dir / "agents" / "Pat" / "memories.jsonl"}


def test_note_title_cannot_leave_the_notes_folder(sim: Simulation, vault_dir: Path) -> None:
    assert run(sim, "Pat", "note ../../secret -> hidden").ok
    (written,) = notes_dir(vault_dir, "Pat").iterdir()  # inside the folder, and not
    assert re.fullmatch(r"secret-[0-9a-f]{8}\.md", written.name)  # the note "secret"'s file


def test_overwrite_note_replaces_the_text(sim: Simulation, vault_dir: Path) -> None:
    run(sim, "Pat", "note Moss -> one")
    run(sim, "Pat", "note Moss -> two")
    result = run(sim, "Pat", "@overwrite-note Moss -> three")
    assert result.ok
    assert result.text == "You rewrite your note 'Moss'."
    content = (notes_dir(vault_dir, "Pat") / "Moss.md").read_text(encoding="utf-8")
    assert content.endswith("---\nthree\n")
    assert "one" not in content
    assert "two" not in content


@pytest.mark.parametrize("args", ["Moss ->", "-> text", "Moss three"])
def test_overwrite_note_needs_title_and_text(sim: Simulation, vault_dir: Path, args: str) -> None:
    result = run(sim, "Pat", f"@overwrite-note {args}")
    assert not result.ok
    assert result.hint == "Write it as: @overwrite-note <title> -> <text>"
    assert not notes_dir(vault_dir, "Pat").exists()


def test_recall_without_notes_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "recall")
    assert not result.ok
    assert result.text == "You have no notes yet."
    assert memories(sim, "Ada") == []


def test_recall_alone_shows_the_latest_note(sim: Simulation) -> None:
    run(sim, "Pat", "note Moss -> Librarian; knows the ledger.")
    run(sim, "Pat", "note Plans -> Find the attic key.")
    result = run(sim, "Pat", "recall")
    assert result.ok
    assert result.text == "Your latest note (2 in all):\n- Plans: Find the attic key."
    assert memories(sim, "Ada")[-1] == "Pat pauses to recall something."


def test_recall_finds_notes_by_words(sim: Simulation) -> None:
    run(sim, "Pat", "note Moss -> Librarian; knows the ledger.")
    run(sim, "Pat", "note Plans -> Find the attic key.")
    result = run(sim, "Pat", "recall LEDGER")
    assert result.ok
    assert result.text == (
        "What you recall about 'LEDGER':\n- Moss: Librarian; knows the ledger.  (note 'Moss')"
    )


def test_recall_with_no_match_fails(sim: Simulation) -> None:
    run(sim, "Pat", "note Moss -> Librarian.")
    result = run(sim, "Pat", "recall dragon")
    assert not result.ok
    assert result.text == "Nothing you know mentions 'dragon'."


def test_memory_status_of_yourself(sim: Simulation) -> None:
    run(sim, "Pip", "say hi")
    result = run(sim, "Pip", "@memory-status")
    assert result.ok
    assert result.text.startswith("Memory of Pip (player)\n  memories recorded: 1;")
    assert run(sim, "Pip", "@memory-status Pip").ok


def test_memory_status_of_another_is_refused_to_a_player(sim: Simulation) -> None:
    result = run(sim, "Pip", "@memory-status Ada")
    assert not result.ok
    assert result.text == "Only builders may look at another character's memory."
    assert "Memory of Ada" not in result.shown


@pytest.mark.parametrize("who", ["Bea", "Pat"])
def test_memory_status_of_another_is_allowed_to_builders(sim: Simulation, who: str) -> None:
    result = run(sim, who, "@memory-status Ada")
    assert result.ok
    assert result.text.startswith("Memory of Ada (agent)")


def test_memory_status_of_an_unknown_character_fails(sim: Simulation) -> None:
    result = run(sim, "Bea", "@memory-status Zed")
    assert not result.ok
    assert result.text == "You don't see any character called 'Zed'."
