"""Low-level vault files: folder entries made durable, a folder fsync that fails is an
error, and temporary files left by an interrupted atomic write are removed when the
vault's owner opens it (never by a lock-free read)."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import VaultError
from engine.sim.simulation import Simulation
from engine.sim.status import read_status
from engine.vault.files import (
    atomic_write_text,
    is_temp_name,
    read_front_matter,
    read_json,
    remove_stale_temp_files,
)
from engine.vault.vault import Vault


def interrupted_write(path: Path, text: str = "half of a new version") -> Path:
    """The temporary file an atomic write of ``path`` leaves when the process is killed
    before its rename: same folder, same naming."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return Path(tmp)


def folder_fsync_fails(monkeypatch: pytest.MonkeyPatch, error: int) -> None:
    real = os.fsync

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(error, os.strerror(error))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


# -- folder fsync -------------------------------------------------------------------


def test_an_atomic_write_fsyncs_the_folder_of_the_new_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folders: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            folders.append(status.st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    target = tmp_path / "new" / "deeper" / "file.md"
    atomic_write_text(target, "hello\n")
    assert target.read_text(encoding="utf-8") == "hello\n"
    for folder in (target.parent, target.parent.parent, tmp_path):
        assert folder.stat().st_ino in folders, f"{folder} was not fsynced"


def test_a_folder_fsync_that_fails_with_an_io_error_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "file.md"
    folder_fsync_fails(monkeypatch, errno.EIO)
    with pytest.raises(VaultError, match=f"fsync of {tmp_path} failed"):
        atomic_write_text(target, "hello\n")


def test_a_file_system_that_cannot_fsync_folders_is_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "file.md"
    folder_fsync_fails(monkeypatch, errno.EINVAL)
    atomic_write_text(target, "hello\n")
    assert target.read_text(encoding="utf-8") == "hello\n"


# -- stale temporary files ------------------------------------------------------------


def test_opening_a_vault_removes_temp_files_of_interrupted_writes(
    vault_dir: Path, world_file: Path
) -> None:
    Simulation.open(vault_dir, world_file).close()
    world = vault_dir / "world" / "world.yaml"
    ada = vault_dir / "agents" / "Ada"
    stale = [
        interrupted_write(world),
        interrupted_write(ada / "memory-state.json"),
        interrupted_write(ada / "summaries" / "recent.md"),
        interrupted_write(ada / "notes" / "Plans.md"),
    ]
    kept = {
        vault_dir / "notes.tmp": "a user's file",
        vault_dir / ".hidden.tmp": "not one of ours: no random part",
        vault_dir / "agents" / "Ada" / "notes" / "x.abcdefgh.tmp": "not hidden",
        vault_dir / ".obsidian" / ".workspace.abcdefgh.tmp": "inside a hidden folder",
    }
    for path, text in kept.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    before = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file() and p not in stale}

    read_status(vault_dir)
    assert all(path.exists() for path in stale), "a lock-free read removes nothing"

    sim = Simulation.open(vault_dir, world_file)
    sim.close()
    assert not any(path.exists() for path in stale)
    after = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file()}
    assert after == before, "every other file is untouched"


def test_remove_stale_temp_files_says_what_it_removed(tmp_path: Path) -> None:
    stale = interrupted_write(tmp_path / "a" / "b.md")
    (tmp_path / "a" / "b.md").write_text("the real file\n", encoding="utf-8")
    assert remove_stale_temp_files(tmp_path) == [stale]
    assert remove_stale_temp_files(tmp_path) == []
    assert (tmp_path / "a" / "b.md").read_text(encoding="utf-8") == "the real file\n"


def test_the_vault_lock_cleans_before_anything_is_written(tmp_path: Path) -> None:
    stale = interrupted_write(tmp_path / "vault" / "world" / "world.yaml")
    lock = Vault(tmp_path / "vault").lock()
    try:
        assert not stale.exists()
    finally:
        lock.release()


NAMES = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), exclude_characters="/\\"),
    min_size=1,
    max_size=30,
).filter(lambda name: name not in {".", ".."})


RANDOM_PARTS = st.text("abcdefghijklmnopqrstuvwxyz0123456789_", min_size=8, max_size=8)
"""What ``tempfile.mkstemp`` puts between its prefix and suffix."""


@settings(max_examples=200, deadline=None)
@given(name=NAMES, random_part=RANDOM_PARTS)
def test_temp_names_are_recognised_and_real_names_are_not(name: str, random_part: str) -> None:
    candidate = f".{name}.{random_part}.tmp"
    assert is_temp_name(candidate)
    if not name.startswith("."):
        assert not is_temp_name(name)
        assert not is_temp_name(f"{name}.tmp")


# -- hostile front matter and JSON: one VaultError naming the file, never a crash -----

BILLION_LAUGHS = (
    "---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n---\n"
)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("---\na: " + "[" * 200_000 + "\n---\n", "nested more than 64 levels deep"),
        ("---\n" + "".join(f"{' ' * i}k:\n" for i in range(100)) + "---\n", "nested more"),
        (BILLION_LAUGHS, "aliases expand to more than 200,000 values"),
        ("---\na: &a [*a]\n---\n", "an alias is used inside the value it names"),
        ("---\n{1: 2}\n---\n", "keys are not all words"),
    ],
    ids=["deep-flow", "deep-block", "billion-laughs", "self-alias", "number-keys"],
)
def test_hostile_front_matter_is_one_error_naming_the_file(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "agent.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(VaultError, match=why) as caught:
        read_front_matter(path)
    assert str(path) in str(caught.value)
    assert path.read_text(encoding="utf-8") == text


def test_json_nested_too_deep_is_one_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory-state.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(VaultError, match="nested too deep") as caught:
        read_json(path)
    assert str(path) in str(caught.value)


@given(st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=60), max_size=4))
def test_any_text_survives_a_yaml_round_trip(data: dict[str, str]) -> None:
    """What mudsim writes as YAML it reads back unchanged, line breaks of every kind
    (\\n, \\r, NEL, U+2028 ...) and control characters included."""
    from engine.vault.files import dump_yaml
    from engine.world.safe_yaml import load_yaml

    assert (load_yaml(dump_yaml(data)) or {}) == data


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_vault_files_get_the_mode_the_umask_gives(tmp_path: Path, umask: int, mode: int) -> None:
    """Like git and editors: 0666 less the umask (mkstemp alone would make 0600)."""
    from engine.vault.files import file_mode

    before = os.umask(umask)
    file_mode.cache_clear()
    try:
        atomic_write_text(tmp_path / "world.yaml", "name: x\n")
    finally:
        os.umask(before)
        file_mode.cache_clear()
    assert stat.S_IMODE((tmp_path / "world.yaml").stat().st_mode) == mode
