"""The append-only memory journal: one JSON object a line, ``seq`` = line index.

Durability: every append is written and flushed to the OS at once, so a crash of the
process loses nothing. ``fsync`` runs in groups: on an append when the last one was
more than ``fsync_interval`` (100 ms) ago, and on ``sync()`` (save and exit). A power
loss can therefore lose at most the appends since the last fsync.

On load a torn last line (no newline, or not JSON) is cut off with a warning; any other
bad line stops the load with an error naming the file and line, and nothing is changed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from engine.errors import VaultError
from engine.memory.record import MemoryRecord


class Journal:
    def __init__(
        self,
        path: Path,
        count: int,
        *,
        fsync_interval: float = 0.1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.count = count
        """Records in the file (M)."""
        self.fsync_interval = fsync_interval
        self._clock = clock
        self._handle: IO[bytes] | None = None
        self._last_sync = clock()
        self._dirty = False

    @classmethod
    def open(cls, path: Path, *, warn: Callable[[str], None]) -> tuple[Journal, list[MemoryRecord]]:
        """Read every record (cutting a torn tail) and return the journal ready to append."""
        records = read_records(path, warn=warn, repair=True)
        return cls(path, len(records)), records

    def append(self, record: MemoryRecord) -> None:
        if record.seq != self.count:
            raise ValueError(f"record seq {record.seq} does not follow {self.count}")
        line = (record.model_dump_json(exclude_defaults=False) + "\n").encode("utf-8")
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "ab")  # noqa: SIM115 - held open for appends
        self._handle.write(line)
        self._handle.flush()
        self.count += 1
        self._dirty = True
        if self._clock() - self._last_sync >= self.fsync_interval:
            self.sync()

    def sync(self) -> None:
        if self._handle is not None and self._dirty:
            os.fsync(self._handle.fileno())
            self._dirty = False
        self._last_sync = self._clock()

    def close(self) -> None:
        self.sync()
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def read_records(
    path: Path, *, warn: Callable[[str], None], repair: bool = False
) -> list[MemoryRecord]:
    """All records of the journal at ``path`` (none if it does not exist).

    A torn last line is reported through ``warn`` and, with ``repair``, cut from the file.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    lines = data.split(b"\n")
    tail = lines.pop()  # after the last newline: b"" when the file ends cleanly
    records: list[MemoryRecord] = []
    for index, line in enumerate(lines):
        try:
            record = MemoryRecord.model_validate_json(line)
        except ValidationError as exc:
            if index == len(lines) - 1 and not tail and _is_torn(line):
                tail = line
                break
            raise VaultError(f"{path}, line {index + 1}: not a valid memory record") from exc
        if record.seq != index:
            raise VaultError(f"{path}, line {index + 1}: seq is {record.seq}, expected {index}")
        records.append(record)
    if tail:
        kept = sum(len(line) + 1 for line in lines[: len(records)])
        warn(f"{path}: cut off a torn last line ({len(tail)} bytes) left by an interrupted write")
        if repair:
            with open(path, "r+b") as handle:
                handle.truncate(kept)
                os.fsync(handle.fileno())
    return records


def _is_torn(line: bytes) -> bool:
    """A last line that is not even JSON was cut short; valid JSON of the wrong shape is
    corruption, not a torn write."""
    try:
        json.loads(line)
    except ValueError:
        return True
    return False
