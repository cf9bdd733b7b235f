"""Importing Miniworld memory files (``agents/<Name>/memories/*.md``) is resumable: an
import cut off half-way (an append that fails, a kill) goes on where it stopped on the
next load, importing no file twice and losing none; once done the folder is renamed
``memories.imported``."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from helpers import mudsim

import engine
from engine.errors import VaultError
from engine.memory.record import MemoryRecord
from engine.sim.simulation import Simulation
from engine.vault.journal import Journal, read_records

REPO = Path(engine.__file__).resolve().parent.parent
FILES = 6


def write_memories(vault_dir: Path, name: str = "Bo", count: int = FILES) -> Path:
    folder = vault_dir / "agents" / name / "memories"
    folder.mkdir(parents=True)
    for n in reversed(range(count)):  # written out of order: the file name decides
        (folder / f"20250101-1000{n:02d}-memory.md").write_text(
            f"---\ntimestamp: 2025-01-01T10:00:{n:02d}Z\ntype: memory\n---\n# Memory\n\nOld memory {n}.\n"
        )
    (folder / "20250101-100003-empty.md").write_text("---\ntype: memory\n---\n# Memory\n\n")
    return folder


def journal_texts(vault_dir: Path, name: str = "Bo") -> list[str]:
    path = vault_dir / "agents" / name / "memories.jsonl"
    return [r.text for r in read_records(path, warn=pytest.fail)]


def expected(count: int = FILES) -> list[str]:
    return [f"Old memory {n}." for n in range(count)]


def test_an_import_cut_off_by_a_failing_append_resumes_without_doubles(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Simulation.open(vault_dir, world_file).close()  # seed; Bo has no memories yet
    folder = write_memories(vault_dir)
    real_append = Journal.append
    appended: list[int] = []

    def failing(self: Journal, record: MemoryRecord) -> None:
        if len(appended) == 3:
            raise VaultError(f"cannot write {self.path}: No space left on device")
        real_append(self, record)
        appended.append(record.seq)

    monkeypatch.setattr(Journal, "append", failing)
    with pytest.raises(VaultError, match="No space left"):
        Simulation.open(vault_dir, world_file)
    monkeypatch.undo()
    assert journal_texts(vault_dir) == expected(3)
    assert folder.is_dir(), "not marked done"

    sim = Simulation.open(vault_dir, world_file)
    try:
        bo = sim.minds["bo"]
        assert [m.text for m in bo.tail] == expected()
        assert [m.seq for m in bo.tail] == list(range(FILES))
        assert {m.kind.value for m in bo.tail} == {"imported"}
    finally:
        sim.close()
    assert journal_texts(vault_dir) == expected()
    assert not folder.exists()
    done = folder.with_name("memories.imported")
    assert len(list(done.glob("*.md"))) == FILES + 1, "the files are kept, renamed"

    Simulation.open(vault_dir, world_file).close()
    assert journal_texts(vault_dir) == expected(), "imported once"


def test_a_kill_half_way_through_an_import_resumes_on_the_next_run(
    vault_dir: Path, world_file: Path
) -> None:
    assert mudsim("do", world_file, "--vault", vault_dir, "look").returncode == 0
    write_memories(vault_dir)
    killed = mudsim("do", world_file, "--vault", vault_dir, "look",
                    crash_at="miniworld-import-mid:4")  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert journal_texts(vault_dir) == expected(4)

    again = mudsim("do", world_file, "--vault", vault_dir, "look")
    assert again.returncode == 0, again.stderr
    assert journal_texts(vault_dir) == expected()  # (Pat looked, in another room)
    assert (vault_dir / "agents" / "Bo" / "memories.imported").is_dir()


def test_files_that_do_not_match_the_journal_are_refused(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal's imported memories must be the first files: files changed between
    the two loads are not guessed at."""
    Simulation.open(vault_dir, world_file).close()
    folder = write_memories(vault_dir)
    real_append = Journal.append

    def failing(self: Journal, record: MemoryRecord) -> None:
        if record.seq == 2:
            raise VaultError("disk full")
        real_append(self, record)

    monkeypatch.setattr(Journal, "append", failing)
    with pytest.raises(VaultError):
        Simulation.open(vault_dir, world_file)
    monkeypatch.undo()
    (folder / "20250101-100000-memory.md").unlink()
    with pytest.raises(VaultError, match="memories") as caught:
        Simulation.open(vault_dir, world_file)
    assert str(folder) in str(caught.value)


def test_a_character_with_memories_of_its_own_leaves_the_folder_alone(
    vault_dir: Path, world_file: Path
) -> None:
    sim = Simulation.open(vault_dir, world_file)
    sim.execute(sim.character("Bo"), "think I was here first.")
    sim.save()
    sim.close()
    folder = write_memories(vault_dir)
    Simulation.open(vault_dir, world_file).close()
    texts = journal_texts(vault_dir)
    assert len(texts) == 1
    assert "I was here first." in texts[0]
    assert folder.is_dir()
