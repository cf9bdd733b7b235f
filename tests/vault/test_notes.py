"""The notes store keeps what it parsed only while the files on disk stay the same."""

from __future__ import annotations

from pathlib import Path

from engine.vault.notes import NoteStore


def test_all_sees_its_own_writes_and_edits_made_on_disk(tmp_path: Path) -> None:
    store = NoteStore(tmp_path / "notes")
    assert store.all() == []
    store.append("Quinces", "Ripe after the frost.")
    assert [n.body for n in store.all()] == ["Ripe after the frost."]
    assert store.all() == store.all()  # served from what was parsed
    store.append("Quinces", "Ada wants some.")
    assert store.all()[0].body.endswith("Ada wants some.")
    path = store.path_for("Quinces")
    path.write_text(path.read_text().replace("Ada wants some.", "Bo wants them all."))
    assert store.all()[0].body.endswith("Bo wants them all.")
    path.unlink()
    assert store.all() == []


def test_the_list_returned_is_the_callers_own(tmp_path: Path) -> None:
    store = NoteStore(tmp_path / "notes")
    store.append("A", "one")
    store.all().clear()
    assert len(store.all()) == 1
