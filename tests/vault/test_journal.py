"""The append-only memory journal: one flat JSON record a line, ``seq`` = line index,
torn tails cut on load, corruption refused, fsync in groups."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from engine.errors import VaultError
from engine.memory.record import MemoryKind, MemoryRecord
from engine.vault.journal import GroupSync, Journal, read_records

FIELDS = {"seq", "at", "kind", "text", "location", "occupants", "command", "reason", "failed"}


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
    """Every ``os.fsync`` call's file descriptor (the real fsync still runs)."""
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
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
