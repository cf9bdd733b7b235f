"""Reading a memory journal (``memories.jsonl``): the tail a resume needs, backwards
from the end, so its cost does not grow with the journal.

M is the last line's seq + 1 (``seq`` = line index), checked against the seqs of the
lines read, which must count down by one to ``start`` (and reach 0 at the file's first
line). What the backward read cannot place (a bad line, a seq out of step) is read again
from the start, which names the exact line. A torn last line (no newline, or not JSON)
is cut off with a warning; any other bad line stops the load with an error naming the
file and line, and nothing is changed.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from pydantic import ValidationError

from engine.errors import VaultError
from engine.memory.record import MemoryKind, MemoryRecord
from engine.vault.files import os_reason

BLOCK = 1 << 16
"""Bytes read at a time, backwards from the end."""

MIN_LINE = len(b'{"seq":0,"at":"","kind":"","text":""}\n') + min(len(k) for k in MemoryKind)
"""No valid line is shorter: the line with seq s starts at byte s * MIN_LINE or later."""


class _Scan(NamedTuple):
    memories: int
    """M: the records in the file."""
    records: list[MemoryRecord]
    """Those from ``start`` on."""
    kept: int
    """Bytes of whole lines: where a torn tail starts."""
    torn: bytes
    """The bytes after ``kept``: a torn last line (b"" when the file ends cleanly)."""


def read_records(
    path: Path, *, warn: Callable[[str], None], repair: bool = False
) -> list[MemoryRecord]:
    """All records of the journal at ``path`` (none if it does not exist)."""
    return read_tail(path, 0, warn=warn, repair=repair)[1]


def read_tail(
    path: Path,
    start: int,
    *,
    warn: Callable[[str], None],
    repair: bool = False,
    block: int = BLOCK,
) -> tuple[int, list[MemoryRecord]]:
    """(M, the records from ``start`` on) of the journal at ``path``.

    Reads backwards from the end, only as far as line ``start``: a restart reads the
    tail [b, M) that the prompt and the next compactions need. M is the last line's seq
    + 1; the seqs of the lines read must count down by one to ``start`` (and to 0 at the
    file's first line). Anything the backward read cannot place (a bad line, a seq out
    of step) is read again from the start, which names the exact line. Lines before
    ``start`` are not checked. If the journal is shorter than ``start``, M says so and no
    records come back. A torn last line is reported through ``warn`` and, with
    ``repair``, cut from the file.
    """
    try:
        with open(path, "rb", buffering=0) as handle:
            scan = _scan_backwards(handle, start, block)
            if scan is None:
                handle.seek(0)
                scan = _scan_forward(path, handle.read(), start)
    except FileNotFoundError:
        return 0, []
    except OSError as exc:
        raise VaultError(f"cannot read {path}: {os_reason(exc)}") from exc
    if scan.torn:
        warn(
            f"{path}: cut off a torn last line ({len(scan.torn)} bytes) left by an interrupted write"
        )
        if repair:
            try:
                with open(path, "r+b") as handle:
                    handle.truncate(scan.kept)
                    os.fsync(handle.fileno())
            except OSError as exc:
                raise VaultError(f"cannot cut the torn line off {path}: {os_reason(exc)}") from exc
    return scan.memories, scan.records


def _scan_backwards(handle: BinaryIO, start: int, block: int) -> _Scan | None:
    """The tail from the end back to line ``start``, or None where the seqs do not fit
    their lines (left to ``_scan_forward``, which names the line)."""
    segments = _segments_backwards(handle, os.fstat(handle.fileno()).st_size, block)
    kept, torn = next(segments)  # after the last newline: b"" when the file ends cleanly
    last = next(segments, None)
    if not torn and last is not None and _is_torn(last[1]):
        (kept, torn), last = (last[0], last[1] + b"\n"), next(segments, None)
    if last is None:
        return _Scan(0, [], kept, torn)
    records: list[MemoryRecord] = []
    count: int | None = None
    while last is not None:
        offset, raw = last
        record = _parse(raw)
        if record is None:
            return None
        if count is None:
            if record.seq < 0:
                return None
            count = record.seq + 1
        expected = count - 1 - len(records)
        at_first_line = offset == 0
        if (
            record.seq != expected
            or offset < expected * MIN_LINE
            or at_first_line != (expected == 0)
        ):
            return None
        if expected < start:
            break  # the journal ends before ``start``: M is all that was asked
        records.append(record)
        if expected == start:
            break
        last = next(segments, None)
    else:
        return None  # the file ran out before seq ``start`` (only its seqs say it is longer)
    records.reverse()
    return _Scan(count, records, kept, torn)


def _segments_backwards(handle: BinaryIO, size: int, block: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of what lies between newlines, last first: first what follows the
    last newline (maybe b""), then each line (without its newline) back to the first."""
    pos = end = size
    buffer = b""  # the file's bytes [pos, end + something): only [pos, end) is unread
    while True:
        cut = buffer.rfind(b"\n", 0, end - pos)
        if cut >= 0:
            yield pos + cut + 1, buffer[cut + 1 : end - pos]
            end = pos + cut
        elif pos == 0:
            yield 0, buffer[:end]
            return
        else:
            step = min(max(block, end - pos), pos)  # doubles past a line longer than a block
            pos -= step
            buffer = _read_at(handle, pos, step) + buffer[: end - pos - step]


def _read_at(handle: BinaryIO, offset: int, size: int) -> bytes:
    handle.seek(offset)
    data = handle.read(size)
    if len(data) != size:
        raise OSError(errno.EIO, "the journal changed while it was read")
    return data


def _scan_forward(path: Path, data: bytes, start: int) -> _Scan:
    """Every line counted, those from ``start`` on parsed; errors name the line."""
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last newline: b"" when the file ends cleanly
    if not torn and lines and _is_torn(lines[-1]):
        torn = lines.pop() + b"\n"  # a last line that is not even JSON was cut short
    records: list[MemoryRecord] = []
    for index in range(min(start, len(lines)), len(lines)):
        try:
            record = MemoryRecord.from_json(lines[index])
        except ValidationError as exc:
            raise VaultError(f"{path}, line {index + 1}: not a valid memory record") from exc
        if record.seq != index:
            raise VaultError(f"{path}, line {index + 1}: seq is {record.seq}, expected {index}")
        records.append(record)
    return _Scan(len(lines), records, sum(len(line) + 1 for line in lines), torn)


def _parse(raw: bytes) -> MemoryRecord | None:
    try:
        return MemoryRecord.from_json(raw)
    except ValidationError:
        return None


def _is_torn(line: bytes) -> bool:
    """A last line that is not even JSON was cut short; valid JSON of the wrong shape is
    corruption, not a torn write."""
    try:
        json.loads(line)
    except ValueError:
        return True
    except RecursionError:  # nested thousands deep: never a cut-short memory record
        return False
    return False
