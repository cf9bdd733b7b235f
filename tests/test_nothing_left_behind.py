"""Nothing left behind by a failure (issue 32): a command that fails before anyone made a
memory removes the vault folder it made; a folder that is not a vault and is not empty
is refused in one line with nothing written; ``status`` of such a folder says so."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import REPO, mudsim

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_run_whose_server_is_unreachable_leaves_no_vault(
    world_file: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "V"
    done = mudsim("run", world_file, "--vault", vault, "--headless", "--turns", "1",
                  "--llm", "http://127.0.0.1:1")  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert not vault.exists()


def test_do_as_nobody_leaves_no_vault(world_file: Path, tmp_path: Path) -> None:
    vault = tmp_path / "V"
    done = mudsim("do", world_file, "--vault", vault, "--as", "Nobody", "look")
    assert done.returncode == 2, done.stderr
    assert not vault.exists()


def test_a_vault_that_was_there_stays_whatever_fails(world_file: Path, tmp_path: Path) -> None:
    vault = tmp_path / "V"
    assert mudsim("do", world_file, "--vault", vault, "--as", "Ada", "look").returncode == 0
    before = _files(vault / "world")
    done = mudsim("do", world_file, "--vault", vault, "--as", "Nobody", "look")
    assert done.returncode == 2
    assert _files(vault / "world") == before


def test_a_folder_that_is_not_a_vault_is_refused_and_left_as_it_is(
    world_file: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "readme.txt").write_text("mine\n", encoding="utf-8")
    for argv in (("run", world_file, "--vault", folder, "--headless", "--turns", "1",
                  "--llm", "fake:look"), ("do", world_file, "--vault", folder, "look")):  # fmt: skip
        done = mudsim(*argv)
        assert done.returncode == 2, done.stderr
        assert "is not a mudsim vault and is not empty" in done.stderr
        assert done.stderr.count("\n") == 1
        assert _files(folder) == {"readme.txt": b"mine\n"}
    status = mudsim("status", "--vault", folder)
    assert status.returncode == 2
    assert "is not a mudsim vault" in status.stderr
    assert "seed it" not in status.stderr


def test_the_readmes_vaults_are_ignored_by_git() -> None:
    for name in ("my-vault", "V"):
        checked = subprocess.run(["git", "check-ignore", "-q", name], cwd=REPO, check=False)
        assert checked.returncode == 0, name
