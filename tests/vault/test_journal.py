"""The append-only memory journal: one flat JSON record a line, ``seq`` = line index,
torn tails cut on load, corruption refused, fsync in groups."""

from __future__ import annotations

import errno
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import VaultError
from engine.memory.record import MemoryKind, MemoryRecord
from engine.vault.journal import GroupSync, Journal, read_records, read_tail

ROOT = Path(__file__).resolve().parents[2]

FIELDS = {
    "seq", "at", "kind", "text", "location", "occupants", "command", "reason", "failed", "sim",
    "speaker",
}  # fmt: skip


def record(seq: int, text: str | None = None, **fields: object) -> MemoryRecord:
    settings: dict[str, Any] = {"kind": MemoryKind.OBSERVATION, **fields}
    return MemoryRecord(
        seq=seq,
        at=f"2025-01-01T00:00:{seq:02d}.000000Z",
        text=text if text is not None else f"memory number {seq}",
        **settings,
    )


def line(rec: MemoryRecord) -> bytes:
    return rec.to_json() + b"\n"


class Warnings:
    """A ``warn`` callback that keeps what it was told."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, message: str) -> None:
        self.messages.append(message)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "agents" / "Ada" / "memories.jsonl"


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file descriptor of every ``os.fsync`` call on a file, not a folder (the real
    fsync still runs)."""
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def write_clean(path: Path, count: int) -> bytes:
    data = b"".join(line(record(i)) for i in range(count))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data


# -- round trip ---------------------------------------------------------------------


def test_append_then_read_round_trip(path: Path) -> None:
    written = [
        record(0, "Pat arrives from The Hall.", location="yard", occupants=["Pat", "Bea"]),
        MemoryRecord(
            seq=1,
            at="2025-01-01T00:00:01.000000Z",
            kind=MemoryKind.RESULT,
            text="You tried: go nowhere\nThis failed because: no exit",
            location="hall",
            occupants=[],
            command="go nowhere",
            reason="to explore",
            failed=True,
        ),
        record(2, 'A "quoted" thought, ünïcode and a\nnewline', kind=MemoryKind.THOUGHT),
    ]
    journal = Journal(path, 0)
    for rec in written:
        journal.append(rec)
    assert journal.count == 3
    journal.close()

    raw_lines = path.read_bytes().split(b"\n")
    assert raw_lines[-1] == b"", "the file ends with a newline"
    objects = [json.loads(raw) for raw in raw_lines[:-1]]
    assert len(objects) == 3
    for index, obj in enumerate(objects):
        assert set(obj) == FIELDS, "records are flat, with every field written out"
        assert obj["seq"] == index
    assert objects[1] == {
        "seq": 1,
        "at": "2025-01-01T00:00:01.000000Z",
        "kind": "result",
        "text": "You tried: go nowhere\nThis failed because: no exit",
        "location": "hall",
        "occupants": [],
        "command": "go nowhere",
        "reason": "to explore",
        "failed": True,
        "sim": None,
        "speaker": None,
    }
    assert objects[0]["occupants"] == ["Pat", "Bea"]
    assert objects[0]["command"] is None
    assert objects[0]["failed"] is False

    warnings = Warnings()
    assert read_records(path, warn=warnings) == written
    reopened, records = Journal.open(path, warn=warnings)
    assert records == written
    assert reopened.count == 3
    assert warnings.messages == []


def test_reopened_journal_appends_after_the_existing_records(path: Path) -> None:
    write_clean(path, 2)
    journal, records = Journal.open(path, warn=Warnings())
    assert [r.seq for r in records] == [0, 1]
    journal.append(record(2))
    journal.close()
    assert [r.seq for r in read_records(path, warn=Warnings())] == [0, 1, 2]


def test_a_missing_journal_is_empty_and_created_on_first_append(path: Path) -> None:
    warnings = Warnings()
    journal, records = Journal.open(path, warn=warnings)
    assert records == []
    assert journal.count == 0
    assert not path.exists()
    journal.append(record(0))
    journal.close()
    assert read_records(path, warn=warnings) == [record(0)]
    assert warnings.messages == []


def test_every_append_reaches_the_file_at_once(path: Path) -> None:
    """Flushed to the OS on append, before any sync or close."""
    journal = Journal(path, 0, sync_group=GroupSync(background=False))
    try:
        journal.append(record(0))
        assert path.read_bytes() == line(record(0))
        journal.append(record(1))
        assert read_records(path, warn=Warnings()) == [record(0), record(1)]
    finally:
        journal.close()


# -- torn tails ---------------------------------------------------------------------


TORN_TAILS = {
    "whole record, no newline": line(record(2))[:-1],
    "half a JSON object, no newline": line(record(2))[:30],
    "half a JSON object, with newline": line(record(2))[:30] + b"\n",
    "one byte": b"{",
}


@pytest.mark.parametrize("tail", TORN_TAILS.values(), ids=TORN_TAILS.keys())
def test_a_torn_last_line_is_cut_with_a_warning(path: Path, tail: bytes) -> None:
    clean = write_clean(path, 2)
    path.write_bytes(clean + tail)
    warnings = Warnings()

    journal, records = Journal.open(path, warn=warnings)

    assert [r.seq for r in records] == [0, 1]
    assert journal.count == 2
    assert len(warnings.messages) == 1
    assert str(path) in warnings.messages[0]
    assert "torn" in warnings.messages[0]
    assert path.read_bytes() == clean, "the torn bytes are cut from the file"

    journal.append(record(2, "after the repair"))
    journal.close()
    again = Warnings()
    assert [r.text for r in read_records(path, warn=again)] == [
        "memory number 0",
        "memory number 1",
        "after the repair",
    ]
    assert again.messages == []
    assert path.read_bytes() == clean + line(record(2, "after the repair"))


def test_a_torn_only_line_leaves_an_empty_journal(path: Path) -> None:
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"seq": 0, "at": "2025')
    warnings = Warnings()
    journal, records = Journal.open(path, warn=warnings)
    assert records == []
    assert journal.count == 0
    assert len(warnings.messages) == 1
    assert path.read_bytes() == b""
    journal.append(record(0))
    journal.close()
    assert read_records(path, warn=warnings) == [record(0)]


def test_reading_without_repair_warns_but_changes_nothing(path: Path) -> None:
    data = write_clean(path, 2) + b'{"seq": 2, "at'
    path.write_bytes(data)
    warnings = Warnings()
    assert [r.seq for r in read_records(path, warn=warnings)] == [0, 1]
    assert len(warnings.messages) == 1
    assert path.read_bytes() == data


# -- corruption ---------------------------------------------------------------------


BAD_MIDDLE_LINES = {
    "not JSON": b"this is not json",
    "half a JSON object": line(record(1))[:25].rstrip(b"\n"),
    "JSON of the wrong shape": b'{"hello": "world"}',
    "a record with an unknown field": line(record(1))[:-2] + b', "mood": "sad"}',
    "blank": b"",
}


@pytest.mark.parametrize("bad", BAD_MIDDLE_LINES.values(), ids=BAD_MIDDLE_LINES.keys())
def test_a_bad_line_in_the_middle_raises_and_changes_nothing(path: Path, bad: bytes) -> None:
    data = line(record(0)) + bad + b"\n" + line(record(2)) + line(record(3))
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    warnings = Warnings()

    with pytest.raises(VaultError) as caught:
        Journal.open(path, warn=warnings)

    message = str(caught.value)
    assert str(path) in message
    assert "line 2" in message
    assert path.read_bytes() == data
    assert warnings.messages == []


def test_a_complete_last_line_of_the_wrong_shape_is_corruption_not_a_torn_write(
    path: Path,
) -> None:
    data = write_clean(path, 2) + b'{"hello": "world"}\n'
    path.write_bytes(data)
    with pytest.raises(VaultError, match="line 3"):
        Journal.open(path, warn=Warnings())
    assert path.read_bytes() == data


def test_a_wrong_seq_in_the_file_raises(path: Path) -> None:
    data = line(record(0)) + line(record(2)) + line(record(3))
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    with pytest.raises(VaultError) as caught:
        Journal.open(path, warn=Warnings())
    assert str(path) in str(caught.value)
    assert "line 2" in str(caught.value)
    assert path.read_bytes() == data


def test_a_journal_not_starting_at_zero_raises(path: Path) -> None:
    data = line(record(1)) + line(record(2))
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    with pytest.raises(VaultError, match="line 1"):
        Journal.open(path, warn=Warnings())
    assert path.read_bytes() == data


@pytest.mark.parametrize("seq", [0, 1, 3, -1])
def test_appending_a_wrong_seq_raises_and_writes_nothing(path: Path, seq: int) -> None:
    clean = write_clean(path, 2)
    journal, _ = Journal.open(path, warn=Warnings())
    try:
        with pytest.raises(ValueError, match="seq"):
            journal.append(record(seq))
        assert journal.count == 2
        assert path.read_bytes() == clean
        journal.append(record(2))
    finally:
        journal.close()
    assert [r.seq for r in read_records(path, warn=Warnings())] == [0, 1, 2]


# -- fsync grouping -----------------------------------------------------------------


def test_appends_are_fsynced_in_group_rounds_not_inline(path: Path, fsyncs: list[int]) -> None:
    group = GroupSync(background=False)
    journal = Journal(path, 0, sync_group=group)
    other = Journal(path.with_name("other.jsonl"), 0, sync_group=group)
    for seq in range(5):
        journal.append(record(seq))
    other.append(record(0))
    assert fsyncs == [], "no append waits for an fsync"
    group.round()
    assert len(fsyncs) == 2, "one round fsyncs every journal written since the last"
    group.round()
    assert len(fsyncs) == 2, "nothing new, nothing to fsync"
    journal.append(record(5))
    group.round()
    assert len(fsyncs) == 3, "only the journal written to"
    journal.close()
    other.close()
    assert len(fsyncs) == 3, "close has nothing left to fsync"
    assert [r.seq for r in read_records(path, warn=Warnings())] == list(range(6))


def test_sync_and_close_fsync_only_pending_appends(path: Path, fsyncs: list[int]) -> None:
    group = GroupSync(background=False)
    journal = Journal(path, 0, sync_group=group)
    journal.sync()
    assert fsyncs == [], "nothing written yet, nothing to sync"
    journal.append(record(0))
    journal.sync()
    assert len(fsyncs) == 1
    journal.sync()
    group.round()
    assert len(fsyncs) == 1, "a second sync with nothing new does not fsync"
    journal.append(record(1))
    journal.close()
    assert len(fsyncs) == 2, "close fsyncs the pending append"
    journal.close()
    group.round()
    assert len(fsyncs) == 2, "a closed journal is no longer in the group"


def test_the_background_round_comes_within_the_interval(path: Path, fsyncs: list[int]) -> None:
    journal = Journal(path, 0, sync_group=GroupSync(0.02))
    try:
        journal.append(record(0))
        deadline = time.monotonic() + 5
        while not fsyncs and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(fsyncs) == 1
    finally:
        journal.close()


def test_without_a_group_every_append_is_fsynced(path: Path, fsyncs: list[int]) -> None:
    journal = Journal(path, 0, sync_group=None)
    journal.append(record(0))
    journal.append(record(1))
    assert len(fsyncs) == 2
    journal.close()
    assert len(fsyncs) == 2


# -- an append that fails half-way --------------------------------------------------


def write_half_then(error: int) -> Any:
    """An ``os.write`` that writes half of what it is given, then fails with ``error``
    (a disk that fills up, or an I/O error, in the middle of a line)."""
    real = os.write
    calls = {"n": 0}

    def failing(fd: int, data: Any) -> int:
        calls["n"] += 1
        if calls["n"] == 1:
            return real(fd, bytes(data)[: len(data) // 2])
        raise OSError(error, os.strerror(error))

    return failing


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO])
def test_an_append_that_fails_half_way_leaves_the_file_as_before(
    path: Path, monkeypatch: pytest.MonkeyPatch, error: int
) -> None:
    clean = write_clean(path, 2)
    journal, _ = Journal.open(path, warn=Warnings())
    try:
        journal.append(record(2))
        before = path.read_bytes()
        monkeypatch.setattr(os, "write", write_half_then(error))

        with pytest.raises(VaultError) as caught:
            journal.append(record(3))

        assert str(path) in str(caught.value)
        assert os.strerror(error) in str(caught.value)
        assert journal.count == 3, "a failed append is not counted"
        assert path.read_bytes() == before, "the half-written line is cut back"
        monkeypatch.undo()
        journal.append(record(3, "after the failure"))
    finally:
        journal.close()
    warnings = Warnings()
    assert [r.seq for r in read_records(path, warn=warnings)] == [0, 1, 2, 3]
    assert warnings.messages == []
    assert path.read_bytes() == clean + line(record(2)) + line(record(3, "after the failure"))


def test_a_short_write_is_completed_not_lost(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``os.write`` may write less than asked; the rest follows in the same append."""
    real = os.write

    def short(fd: int, data: Any) -> int:
        return real(fd, bytes(data)[: max(1, len(data) // 3)])

    journal = Journal(path, 0, sync_group=GroupSync(background=False))
    monkeypatch.setattr(os, "write", short)
    journal.append(record(0))
    journal.append(record(1))
    monkeypatch.undo()
    journal.close()
    assert path.read_bytes() == line(record(0)) + line(record(1))


def test_an_append_whose_inline_fsync_fails_is_not_acknowledged(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = Journal(path, 0, sync_group=None)
    journal.append(record(0))

    def failing(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises(VaultError, match=r"fsync of .*memories.jsonl failed"):
        journal.append(record(1))
    assert journal.count == 1
    assert path.read_bytes() == line(record(0))
    monkeypatch.undo()
    journal.append(record(1))
    journal.close()
    assert [r.seq for r in read_records(path, warn=Warnings())] == [0, 1]


CRASH_SCRIPT = """
import sys
from pathlib import Path
from engine.memory.record import MemoryKind, MemoryRecord
from engine.vault.journal import Journal

journal = Journal(Path(sys.argv[1]), 0)
for seq in range(3):
    journal.append(MemoryRecord(seq=seq, at="2025-01-01T00:00:00.000000Z",
                                kind=MemoryKind.THOUGHT, text=f"thought {seq} " * 20))
"""


def test_a_kill_at_the_mid_line_crash_point_leaves_a_torn_tail_that_load_cuts(
    path: Path,
) -> None:
    path.parent.mkdir(parents=True)
    env = {**os.environ, "MUDSIM_CRASH_AT": "journal-mid-line:3"}
    done = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, str(path)], env=env, cwd=ROOT, check=False
    )
    assert done.returncode == -signal.SIGKILL
    data = path.read_bytes()
    assert data.count(b"\n") == 2, "two whole lines, then half of the third"
    assert not data.endswith(b"\n")

    warnings = Warnings()
    journal, records = Journal.open(path, warn=warnings)
    journal.close()
    assert [r.seq for r in records] == [0, 1]
    assert journal.count == 2
    assert "torn" in warnings.messages[0]
    assert path.read_bytes().count(b"\n") == 2


# -- the fsync thread and the folder ---------------------------------------------------


def failing_fsync_for(target: Path) -> Any:
    """An ``os.fsync`` that fails with EIO for ``target`` and works for anything else."""
    real = os.fsync
    inode = None

    def fsync(fd: int) -> None:
        nonlocal inode
        if inode is None and target.exists():
            inode = target.stat().st_ino
        if os.fstat(fd).st_ino == inode:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(fd)

    return fsync


def test_a_failed_background_fsync_is_recorded_and_the_thread_lives_on(
    path: Path, monkeypatch: pytest.MonkeyPatch, fsyncs: list[int]
) -> None:
    group = GroupSync(0.01)
    journal = Journal(path, 0, sync_group=group)
    other = Journal(path.with_name("other.jsonl"), 0, sync_group=group)
    journal.append(record(0))
    other.append(record(0))
    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", failing_fsync_for(path))
        journal.append(record(1))
        deadline = time.monotonic() + 5
        while group.error is None and time.monotonic() < deadline:
            time.sleep(0.01)
    try:
        assert group.error is not None
        assert f"fsync of {path} failed" in group.error
        assert os.strerror(errno.EIO) in group.error
        assert group.problems() == [group.error]
        with pytest.raises(VaultError, match=r"fsync of .* failed"):
            journal.sync()  # the next save of that journal fails loudly
        journal.sync()  # reported once; fsync works again

        synced = len(fsyncs)
        other.append(record(1))
        deadline = time.monotonic() + 5
        while len(fsyncs) == synced and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(fsyncs) > synced, "the background thread still fsyncs"
    finally:
        journal.close()
        other.close()


def test_a_failed_fsync_in_a_round_does_not_stop_the_others(
    path: Path, monkeypatch: pytest.MonkeyPatch, fsyncs: list[int]
) -> None:
    group = GroupSync(background=False)
    journals = [Journal(path.with_name(f"{n}.jsonl"), 0, sync_group=group) for n in "abc"]
    for journal in journals:
        journal.append(record(0))
    counting = os.fsync
    monkeypatch.setattr(os, "fsync", failing_fsync_for(journals[0].path))
    group.round()
    monkeypatch.setattr(os, "fsync", counting)
    assert len(fsyncs) == 2, "the other two were fsynced"
    assert group.failures == 1
    assert str(journals[0].path) in (group.error or "")
    with pytest.raises(VaultError, match="fsync of"):
        journals[0].close()
    for journal in journals[1:]:
        journal.close()


def test_close_reports_a_failed_background_fsync(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = GroupSync(background=False)
    journal = Journal(path, 0, sync_group=group)
    journal.append(record(0))
    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", failing_fsync_for(path))
        group.round()
    with pytest.raises(VaultError, match=f"fsync of {path} failed"):
        journal.close()
    journal.close()  # closed all the same, and reported once
    assert read_records(path, warn=Warnings()) == [record(0)]


def folder_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The inode of every folder ``os.fsync`` is called on (the real fsync still runs)."""
    inodes: list[int] = []
    real = os.fsync

    def recording(fd: int) -> None:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            inodes.append(status.st_ino)
        real(fd)

    monkeypatch.setattr(os, "fsync", recording)
    return inodes


def test_creating_a_journal_fsyncs_its_folder_once(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dirs = folder_fsyncs(monkeypatch)
    journal = Journal(path, 0, sync_group=GroupSync(background=False))
    journal.append(record(0))
    assert path.parent.stat().st_ino in dirs, "the new file's folder entry is made durable"
    assert path.parent.parent.stat().st_ino in dirs, "and so is each new folder's"
    dirs.clear()
    journal.append(record(1))
    journal.close()
    reopened, _ = Journal.open(path, warn=Warnings())
    reopened.append(record(2))
    reopened.close()
    assert dirs == [], "an existing journal's folder is not fsynced again"


# -- reading the tail backwards -------------------------------------------------------


def test_a_journal_shorter_than_start_returns_its_true_count(path: Path) -> None:
    write_clean(path, 5)
    assert read_tail(path, 10, warn=Warnings()) == (5, [])
    assert read_tail(path, 5, warn=Warnings()) == (5, [])
    assert read_tail(path, 4, warn=Warnings()) == (5, [record(4)])


def test_a_bad_line_in_a_long_journal_names_its_line(path: Path) -> None:
    data = b"".join(line(record(i)) for i in range(600))
    lines = data.split(b"\n")
    lines[597] = b'{"hello": "world"}'
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(VaultError, match="line 598"):
        read_tail(path, 590, warn=Warnings(), block=512)


def test_lines_missing_inside_the_tail_are_found(path: Path) -> None:
    lines = [line(record(i)) for i in range(300)]
    del lines[280]
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(lines))
    with pytest.raises(VaultError, match="line 281: seq is 281, expected 280"):
        read_tail(path, 250, warn=Warnings(), block=256)


def bytes_read() -> int:
    """Bytes this process has read through read(2) and friends (Linux)."""
    for entry in Path("/proc/self/io").read_text().splitlines():
        if entry.startswith("rchar:"):
            return int(entry.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs Linux /proc/self/io")
def test_resuming_reads_only_the_tail_of_a_long_journal(path: Path) -> None:
    template = line(record(0, "x" * 200))
    path.parent.mkdir(parents=True)
    with open(path, "wb") as handle:
        for seq in range(50_000):
            handle.write(template.replace(b'"seq":0,', f'"seq":{seq},'.encode(), 1))
    assert path.stat().st_size > 10_000_000
    before = bytes_read()
    count, records = read_tail(path, 49_990, warn=Warnings())
    read = bytes_read() - before
    assert count == 50_000
    assert [r.seq for r in records] == list(range(49_990, 50_000))
    assert read < 1_000_000, f"read {read:,} bytes of a {path.stat().st_size:,}-byte journal"


TAIL_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(TAIL_TEXT, max_size=40),
    start=st.integers(0, 45),
    torn=st.sampled_from([b"", *TORN_TAILS.values(), b"\n", b"\n\n"]),
    block=st.integers(1, 300),
)
def test_reading_backwards_agrees_with_a_plain_forward_read(
    tmp_path: Path, texts: list[str], start: int, torn: bytes, block: int
) -> None:
    path = tmp_path / "memories.jsonl"
    written = [record(seq, text) for seq, text in enumerate(texts)]
    data = b"".join(line(r) for r in written)
    path.write_bytes(data + (torn.replace(b'"seq": 2', b'"seq": 9') if torn else b""))
    if torn == b"\n\n":  # one blank line is a torn write; a blank line before it is not
        if start > len(written):  # lines before start are counted, not read
            assert read_tail(path, start, warn=Warnings(), block=block) == (len(written) + 1, [])
            return
        with pytest.raises(VaultError, match=f"line {len(written) + 1}: not a valid"):
            read_tail(path, start, warn=Warnings(), repair=True, block=block)
        return
    warnings = Warnings()
    count, records = read_tail(path, start, warn=warnings, repair=True, block=block)

    assert count == len(written)
    assert records == written[start:]
    assert len(warnings.messages) == (1 if torn else 0)
    assert path.read_bytes() == data


MUTATIONS = ["none", "delete", "duplicate", "garbage", "wrong shape", "swap"]


@settings(max_examples=150, deadline=None)
@given(
    count=st.integers(1, 60),
    mutation=st.sampled_from(MUTATIONS),
    where=st.integers(0, 59),
    start=st.integers(0, 65),
    block=st.integers(1, 400),
)
def test_a_damaged_journal_is_refused_or_read_consistently(
    tmp_path_factory: pytest.TempPathFactory,
    count: int,
    mutation: str,
    where: int,
    start: int,
    block: int,
) -> None:
    """Whatever a damaged journal holds, the tail read back is its last lines, with seqs
    counting up to M - 1; read from 0, it is the whole, intact journal or an error."""
    lines = [line(record(seq)) for seq in range(count)]
    where %= count
    if mutation == "delete":
        del lines[where]
    elif mutation == "duplicate":
        lines.insert(where, lines[where])
    elif mutation == "garbage":
        lines[where] = b"not json at all\n"
    elif mutation == "wrong shape":
        lines[where] = b'{"hello": "world"}\n'
    elif mutation == "swap" and where + 1 < count:
        lines[where], lines[where + 1] = lines[where + 1], lines[where]
    path = tmp_path_factory.mktemp("journal") / "memories.jsonl"
    path.write_bytes(b"".join(lines))
    whole = b"".join(lines)
    if lines and lines[-1] == b"not json at all\n":
        del lines[-1]  # a last line that is not JSON is a torn write, cut with a warning
    intact = lines == [line(record(seq)) for seq in range(len(lines))]

    try:
        total, records = read_tail(path, start, warn=Warnings(), block=block)
    except VaultError as exc:
        refused = str(exc)
    else:
        refused = ""
    if refused:
        assert str(path) in refused
        assert not intact
        return
    if start == 0:
        assert intact, "a full read checks every line"
    assert [r.seq for r in records] == list(range(start, total))
    if records:
        assert [line(r) for r in records] == lines[-len(records) :]
    assert path.read_bytes() == whole
