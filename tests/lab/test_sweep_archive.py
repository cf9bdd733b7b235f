"""A run's folder as an archive (a Ray node that cannot write into OUT): it comes back
whole, or not at all; an archive that reaches outside its folder is refused."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from engine.lab.sweep.archive import pack, unpack


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_a_run_folder_comes_back_whole(tmp_path: Path) -> None:
    run = tmp_path / "node" / "key"
    (run / "vault" / "agents" / "Ada").mkdir(parents=True)
    (run / "vault" / "agents" / "Ada" / "memories.jsonl").write_bytes(b'{"seq":0}\n' * 100)
    (run / "narrative.txt").write_text("[The Hall] Ada looks around.\n")
    (run / "empty").mkdir()
    target = tmp_path / "out" / "runs" / "key"
    unpack(pack(run), target)
    assert _tree(target) == _tree(run)
    assert (target / "empty").is_dir()
    assert not (target.parent / "key.unpacking").exists()
    with pytest.raises(ValueError, match="already there"):
        unpack(pack(run), target)


def test_an_archive_reaching_outside_its_folder_leaves_nothing(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        data = b"owned"
        info = tarfile.TarInfo("../../escaped.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    target = tmp_path / "out" / "runs" / "key"
    target.parent.mkdir(parents=True)
    with pytest.raises(tarfile.TarError):
        unpack(buffer.getvalue(), target)
    assert list(target.parent.iterdir()) == []
    assert not list(tmp_path.rglob("escaped.txt"))
