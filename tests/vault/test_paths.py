"""Names to file names: ``safe_name`` makes ``[A-Za-z0-9_-]`` only (Latin accents
dropped, other scripts in Punycode) and never yields a name that could leave its folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import UnsafeNameError
from engine.vault.notes import NoteStore
from engine.world.folder_names import MAX_NAME_LENGTH, safe_name

SAFE = re.compile(r"^[A-Za-z0-9_-]+$")

# Text that is mostly made of the characters that matter for paths.
PATHISH = st.lists(
    st.sampled_from([*"./\\\x00 \t\n_-~:*?aZ9é😀", "..", "../", "/..", "\u00a0"]),
    max_size=30,
).map("".join)
NAMES = st.one_of(st.text(max_size=200), PATHISH)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Ada", "Ada"),
        ("The Traveler", "The_Traveler"),
        ("  The Traveler  ", "The_Traveler"),
        ("../etc", "etc"),
        ("../../etc/passwd", "etcpasswd"),
        ("a/b\\c", "abc"),
        ("Moss's notes!", "Mosss_notes"),
        ("x-y_z 9", "x-y_z_9"),
        ("Zoë", "Zoe"),
        ("é", "e"),
        ("Łukasz", "Lukasz"),
        ("Ｗｒｅｎ", "Wren"),
        ("李", "xn--7qv"),
        ("Ivan Иван", "xn--ivan_-8ven1c7b"),
        ("a\x00b", "ab"),
        ("C:\\Windows", "CWindows"),
        ("note.md", "notemd"),
    ],
)
def test_safe_name_keeps_only_safe_characters(name: str, expected: str) -> None:
    assert safe_name(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "../",
        "..",
        "...",
        "/",
        "//",
        "\x00",
        "\\",
        "_",
        "-",
        "_-_",
        "./..",
        "😀",
        "\u0301",
    ],
)
def test_names_with_nothing_usable_left_raise(name: str) -> None:
    with pytest.raises(UnsafeNameError):
        safe_name(name)


def test_the_error_says_what_the_name_was_for() -> None:
    with pytest.raises(UnsafeNameError, match="note title"):
        safe_name("../", what="note title")


def test_long_names_are_cut_to_the_maximum_length() -> None:
    assert safe_name("a" * 500) == "a" * MAX_NAME_LENGTH


@settings(deadline=None)
@given(NAMES)
def test_safe_name_either_raises_or_returns_a_safe_stem(name: str) -> None:
    try:
        stem = safe_name(name)
    except UnsafeNameError:
        return
    assert stem
    assert SAFE.match(stem), stem
    assert ".." not in stem
    assert "/" not in stem
    assert "\x00" not in stem
    assert len(stem) <= MAX_NAME_LENGTH
    assert safe_name(stem) == stem, "a safe name is its own file name"


@pytest.fixture(scope="module")
def notes_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("vault") / "agents" / "Ada" / "notes"
    folder.mkdir(parents=True)
    return folder


@settings(deadline=None)
@given(NAMES)
def test_a_note_path_always_stays_inside_the_notes_folder(notes_folder: Path, title: str) -> None:
    store = NoteStore(notes_folder)
    try:
        path = store.path_for(title)
    except UnsafeNameError:
        return
    resolved = path.resolve()
    assert resolved.parent == notes_folder.resolve()
    assert resolved.is_relative_to(notes_folder.resolve())
    assert resolved.suffix == ".md"
    assert resolved.name != ".md"


@pytest.mark.parametrize("title", ["../../agent", "../Bo/notes/x", "/etc/passwd", "..\\..\\x"])
def test_hostile_note_titles_are_written_inside_the_notes_folder(
    tmp_path: Path, title: str
) -> None:
    folder = tmp_path / "agents" / "Ada" / "notes"
    store = NoteStore(folder)
    store.append(title, "some text")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) == 1
    assert written[0].parent == folder
    assert store.read(title) is not None
    assert store.read(title).body == "some text"  # type: ignore[union-attr]


@given(st.text(min_size=1, max_size=60), st.text(min_size=1, max_size=60))
def test_two_different_titles_never_share_a_note_file(first: str, second: str) -> None:
    from engine.errors import UnsafeNameError
    from engine.vault.paths import note_file_stem, note_title

    try:
        stems = note_file_stem(first), note_file_stem(second)
    except UnsafeNameError:
        return
    assert (stems[0] == stems[1]) == (note_title(first) == note_title(second))
    for stem in stems:
        assert "/" not in stem
        assert "\\" not in stem
        assert "\x00" not in stem
        assert stem not in (".", "..")
        assert not stem.startswith(".")
        assert len(stem.encode("utf-8")) <= 200
