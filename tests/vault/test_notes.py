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


# -- titles keep their letters (issue 14, item 13) --------------------------------------


def test_titles_in_any_script_are_notes_of_their_own(tmp_path: Path) -> None:
    from engine.vault.notes import NoteStore

    store = NoteStore(tmp_path / "notes")
    titles = ["Café", "Cafè", "Caf", "日本", "Привет", "Moss", "moss", "a b", "a_b", "con"]
    for title in titles:
        store.append(title, f"about {title}")
    files = list((tmp_path / "notes").iterdir())
    assert len(files) == len(titles)
    assert len({f.name.casefold() for f in files}) == len(titles)  # macOS and Windows too
    assert {"Café.md", "Cafè.md", "Caf.md", "日本.md", "Привет.md", "Moss.md"} <= {
        f.name for f in files
    }
    for title in titles:
        note = store.read(title)
        assert note is not None
        assert (note.title, note.body) == (title, f"about {title}")
    decomposed = "Cafe\u0301"  # the same title, typed another way
    store.append(decomposed, "more")
    note = store.read("Café")
    assert note is not None
    assert note.body == "about Café\n\n---\n\nmore"
    assert len(list((tmp_path / "notes").iterdir())) == len(titles)


def test_a_note_whose_file_name_is_not_its_titles_is_still_found(tmp_path: Path) -> None:
    """A vault written before titles kept their letters (or a file a person renamed)."""
    from engine.vault.files import write_front_matter
    from engine.vault.notes import NoteStore

    folder = tmp_path / "notes"
    write_front_matter(folder / "Caf.md", {"title": "Café"}, "old entry")
    store = NoteStore(folder)
    store.append("Café", "new entry")
    assert [f.name for f in folder.iterdir()] == ["Caf.md"]
    note = store.read("Café")
    assert note is not None
    assert note.body == "old entry\n\n---\n\nnew entry"
