"""A private ``config/<name>.md`` file: parsed again only when it changed, written 0600
and atomically, its errors naming the file, and changed under ``logs/<name>.lock``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict

from engine.errors import VaultError
from engine.vault.private_config_file import PrivateConfigFile


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    word: str


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    words: list[_Entry] = []


class _Counted:
    """The file's words, counting how often they are made from a parse."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, parsed: _File) -> list[str]:
        self.calls += 1
        return [e.word for e in parsed.words]


def _words_file(root: Path) -> tuple[PrivateConfigFile[_File, str], _Counted]:
    items = _Counted()
    return PrivateConfigFile(root, "words", _File, items, "# Words\n"), items


def test_no_file_is_an_empty_list_and_its_paths_follow_the_name(tmp_path: Path) -> None:
    file, items = _words_file(tmp_path)
    assert file.path == tmp_path / "config" / "words.md"
    assert file.lock_path == tmp_path / "logs" / "words.lock"
    assert file.load() == []
    assert items.calls == 0


def test_a_written_list_reads_back_and_only_its_owner_may_read_it(tmp_path: Path) -> None:
    file, _items = _words_file(tmp_path)
    file.write({"words": [{"word": "alpha"}, {"word": "beta"}]})
    assert file.load() == ["alpha", "beta"]
    text = file.path.read_text(encoding="utf-8")
    assert text.startswith("---\nwords:\n- word: alpha\n")
    assert text.endswith("---\n# Words\n")
    if os.name != "nt":
        assert stat.S_IMODE(file.path.stat().st_mode) == 0o600
    assert [p.name for p in file.path.parent.iterdir()] == ["words.md"]  # no temporary file


def test_the_file_is_parsed_again_only_when_it_changed(tmp_path: Path) -> None:
    file, items = _words_file(tmp_path)
    file.write({"words": [{"word": "alpha"}]})
    first = file.load()
    first.append("not in the file")  # the caller's copy, not the cache
    assert file.load() == ["alpha"]
    assert items.calls == 1

    file.write({"words": [{"word": "alpha"}, {"word": "gamma"}]})  # by another store
    assert file.load() == ["alpha", "gamma"]
    assert items.calls == 2


def test_a_file_that_does_not_fit_the_model_is_one_error_naming_it(tmp_path: Path) -> None:
    file, _items = _words_file(tmp_path)
    file.path.parent.mkdir(parents=True)
    file.path.write_text("---\nwords:\n- word: alpha\n  colour: red\n---\n", encoding="utf-8")
    with pytest.raises(VaultError, match=r"words\.md, words\.0\.colour: Extra inputs"):
        file.load()
    file.path.write_text("---\nwords: 3\n---\n", encoding="utf-8")
    with pytest.raises(VaultError, match=r"words\.md, words: Input should be a valid list"):
        file.load()


def test_an_error_of_the_items_reaches_the_caller_and_is_not_cached(tmp_path: Path) -> None:
    def no_twins(parsed: _File) -> list[str]:
        words = [e.word for e in parsed.words]
        if len(set(words)) < len(words):
            raise VaultError("a word twice")
        return words

    file = PrivateConfigFile(tmp_path, "words", _File, no_twins, "")
    file.write({"words": [{"word": "alpha"}, {"word": "alpha"}]})
    with pytest.raises(VaultError, match="a word twice"):
        file.load()
    file.write({"words": [{"word": "alpha"}]})
    assert file.load() == ["alpha"]


def test_a_file_that_cannot_be_written_is_an_error_naming_it(tmp_path: Path) -> None:
    file, _items = _words_file(tmp_path)
    file.path.mkdir(parents=True)  # a folder where the file should be
    with pytest.raises(VaultError, match=r"cannot write .*words\.md"):
        file.write({"words": []})


def test_the_lock_makes_its_folder_and_keeps_others_out(tmp_path: Path) -> None:
    file, _items = _words_file(tmp_path)
    with file.locked():
        assert file.lock_path.parent.is_dir()
        with pytest.raises(Timeout):
            FileLock(file.lock_path, timeout=0).acquire()
    other = FileLock(file.lock_path, timeout=0)
    other.acquire()  # free again once the change is done
    other.release()
