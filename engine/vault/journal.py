"""The append-only memory journal: one JSON object a line, ``seq`` = line index.

Durability: every append is written and flushed to the OS at once, so a crash of the
process loses nothing. ``fsync`` runs in groups, off the caller's thread: one
background thread fsyncs every journal written since its last round, every
100 ms, and ``sync()`` (save and exit) fsyncs at once. A power loss can therefore
lose at most the appends of the last 100 ms or so (plus the time one round of fsyncs
takes). ``sync_group=None`` fsyncs every append inline instead.

On load a torn last line (no newline, or not JSON) is cut off with a warning; any other
bad line stops the load with an error naming the file and line, and nothing is changed.
"""

from __future__ import annotations

import json
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from engine.errors import VaultError
from engine.memory.record import MemoryRecord


class GroupSync:
    """fsyncs every journal written since the last round, in rounds ``interval`` apart
    on a daemon thread (started by the first journal it watches), or by ``round()``."""

    def __init__(self, interval: float = 0.1, *, background: bool = True) -> None:
        self.interval = interval
        self.background = background
        self._journals: weakref.WeakSet[Journal] = weakref.WeakSet()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, journal: Journal) -> None:
        with self._guard:
            self._journals.add(journal)
            if self.background and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="journal-fsync", daemon=True)
                self._thread.start()

    def forget(self, journal: Journal) -> None:
        with self._guard:
            self._journals.discard(journal)

    def round(self) -> None:
        with self._guard:
            journals = list(self._journals)
        for journal in journals:
            journal.sync()

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            self.round()


EVERY_100_MS = GroupSync(0.1)
"""The process's fsync group: what every journal uses unless told otherwise."""


class Journal:
    def __init__(
        self, path: Path, count: int, *, sync_group: GroupSync | None = EVERY_100_MS
    ) -> None:
        self.path = path
        self.count = count
        """Records in the file (M)."""
        self.sync_group = sync_group
        """Who fsyncs this journal's appends; None: every append, inline."""
        self._handle: IO[bytes] | None = None
        self._dirty = False
        self._sync_lock = threading.Lock()
        """Held while fsyncing or closing, so the two never meet."""

    @classmethod
    def open(
        cls, path: Path, *, warn: Callable[[str], None], start: int = 0
    ) -> tuple[Journal, list[MemoryRecord]]:
        """Count the records, read those from ``start`` on (cutting a torn tail), and
        return the journal ready to append."""
        count, records = read_tail(path, start, warn=warn, repair=True)
        return cls(path, count), records

    def append(self, record: MemoryRecord) -> None:
        if record.seq != self.count:
            raise ValueError(f"record seq {record.seq} does not follow {self.count}")
        line = record.to_json() + b"\n"
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "ab")  # noqa: SIM115 - held open for appends
            if self.sync_group is not None:
                self.sync_group.watch(self)
        self._handle.write(line)
        self._handle.flush()
        self.count += 1
        self._dirty = True
        if self.sync_group is None:
            self.sync()

    def sync(self) -> None:
        """fsync now if anything was appended since the last fsync (any thread)."""
        with self._sync_lock:
            if self._handle is not None and self._dirty:
                self._dirty = False  # an append racing with this fsync sets it again
                os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self.sync_group is not None:
            self.sync_group.forget(self)
        with self._sync_lock:
            if self._handle is not None:
                if self._dirty:
                    os.fsync(self._handle.fileno())
                self._handle.close()
                self._handle = None
            self._dirty = False


def read_records(
    path: Path, *, warn: Callable[[str], None], repair: bool = False
) -> list[MemoryRecord]:
    """All records of the journal at ``path`` (none if it does not exist)."""
    return read_tail(path, 0, warn=warn, repair=repair)[1]


def read_tail(
    path: Path, start: int, *, warn: Callable[[str], None], repair: bool = False
) -> tuple[int, list[MemoryRecord]]:
    """(M, the records from ``start`` on) of the journal at ``path``.

    Lines before ``start`` are only counted, not parsed: a restart reads the tail
    [b, M) that the prompt and the next compactions need. A torn last line is
    reported through ``warn`` and, with ``repair``, cut from the file.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0, []
    except OSError as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" when the file ends cleanly
    if not tail and lines and _is_torn(lines[-1]):
        tail = lines.pop()  # a last line that is not even JSON was cut short
    records: list[MemoryRecord] = []
    for index in range(min(start, len(lines)), len(lines)):
        try:
            record = MemoryRecord.from_json(lines[index])
        except ValidationError as exc:
            raise VaultError(f"{path}, line {index + 1}: not a valid memory record") from exc
        if record.seq != index:
            raise VaultError(f"{path}, line {index + 1}: seq is {record.seq}, expected {index}")
        records.append(record)
    if tail:
        kept = sum(len(line) + 1 for line in lines)
        warn(f"{path}: cut off a torn last line ({len(tail)} bytes) left by an interrupted write")
        if repair:
            with open(path, "r+b") as handle:
                handle.truncate(kept)
                os.fsync(handle.fileno())
    return len(lines), records


def _is_torn(line: bytes) -> bool:
    """A last line that is not even JSON was cut short; valid JSON of the wrong shape is
    corruption, not a torn write."""
    try:
        json.loads(line)
    except ValueError:
        return True
    return False
