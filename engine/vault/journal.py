"""The append-only memory journal: one JSON object a line, ``seq`` = line index.

Appends: each line is written whole with ``os.write`` on a raw file descriptor (nothing
buffered in the process), so a crash of the process loses nothing that was
acknowledged. A write that fails half-way (disk full, EIO) is cut back to the last whole
line and raised as ``VaultError``: the memory is not counted, and the next append gets
the same seq and works. The first append to a new file fsyncs its folder, so the name
survives a power cut.

fsync runs in groups, off the caller's thread: one background thread fsyncs every
journal written since its last round, every 100 ms, and ``sync()`` (save and exit)
fsyncs at once. A power loss can therefore lose at most the appends of the last 100 ms
or so (plus the time one round of fsyncs takes). ``sync_group=None`` fsyncs every
append inline instead (an append whose fsync fails is cut back and raised). A failed
background fsync never stops the thread: it is kept by the group (``GroupSync.error``,
``problems()``) and raised by that journal's next ``sync()`` or ``close()``.

Reading (``engine.vault.journal_reader``): a resume reads the journal backwards from its
end, only as far as it needs (the tail [start, M)), so its cost does not grow with the
journal; a torn last line is cut off with a warning, any other bad line is an error.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path

from engine.errors import VaultError
from engine.faults import armed, crash_point
from engine.memory.record import MemoryRecord
from engine.vault.files import fsync_folder, make_folder, os_reason
from engine.vault.journal_reader import read_records, read_tail

__all__ = ["EVERY_100_MS", "GroupSync", "Journal", "LineFile", "read_records", "read_tail"]

MID_LINE = "journal-mid-line"
"""The crash point between the two halves of a line (see ``engine.faults``)."""


_log = logging.getLogger("mudsim.vault")


class GroupSync:
    """fsyncs every journal written since the last round, in rounds ``interval`` apart
    on a daemon thread (started by the first journal it watches), or by ``round()``.

    A failed fsync is kept, never raised on the thread (which lives on): ``error`` is the
    last one, ``problems()`` the last few, ``failures`` how many in all. The journal it
    happened to raises it on its next ``sync()`` or ``close()``."""

    KEPT = 20
    """How many distinct problems ``problems()`` remembers."""

    def __init__(self, interval: float = 0.1, *, background: bool = True) -> None:
        self.interval = interval
        self.background = background
        self._journals: weakref.WeakSet[LineFile] = weakref.WeakSet()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._problems: deque[str] = deque(maxlen=self.KEPT)
        self._failures = 0

    def watch(self, journal: LineFile) -> None:
        with self._guard:
            self._journals.add(journal)
            if self.background and self._thread is None:
                self._thread = threading.Thread(target=self._run, name="journal-fsync", daemon=True)
                self._thread.start()

    def forget(self, journal: LineFile) -> None:
        with self._guard:
            self._journals.discard(journal)

    def round(self) -> None:
        """fsync every journal with appends since its last fsync; a failure is kept
        (and its journal goes on to the next one)."""
        with self._guard:
            journals = list(self._journals)
        for journal in journals:
            failure = journal.sync_for_group()
            if failure is not None:
                self._record(failure)

    @property
    def error(self) -> str | None:
        """The last fsync failure, if there was one (thread-safe)."""
        with self._guard:
            return self._problems[-1] if self._problems else None

    @property
    def failures(self) -> int:
        """How many fsyncs (or rounds) have failed, in all."""
        with self._guard:
            return self._failures

    def problems(self) -> list[str]:
        """The last few distinct failures, oldest first (thread-safe)."""
        with self._guard:
            return list(self._problems)

    def _record(self, problem: str) -> None:
        with self._guard:
            self._failures += 1
            new = not self._problems or self._problems[-1] != problem
            if new:
                self._problems.append(problem)
        if new:  # the run log (logging is thread-safe); the same failure again is counted
            _log.error("%s", problem)

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            try:
                self.round()
            except Exception as exc:  # the thread must outlive any one round
                self._record(f"a journal fsync round failed: {exc!r}")


EVERY_100_MS = GroupSync(0.1)
"""The process's fsync group: what every journal uses unless told otherwise."""


class LineFile:
    """An append-only file of whole lines, written as the journal is (see the module):
    unbuffered, cut back on a failed write, fsynced in groups. ``Journal`` holds memory
    records in one; a run record's tapes (``engine.vault.run_store``) hold JSON objects."""

    def __init__(self, path: Path, *, sync_group: GroupSync | None = EVERY_100_MS) -> None:
        self.path = path
        self.sync_group = sync_group
        """Who fsyncs this journal's appends; None: every append, inline."""
        self._fd: int | None = None
        self._size = 0
        """Bytes of whole lines in the file: where a failed append is cut back to."""
        self._cut_pending = False
        """A failed append's bytes could not be cut yet: cut them before the next write."""
        self._dirty = False
        self._failure: str | None = None
        """A background fsync failure not yet raised by ``sync()`` or ``close()``."""
        self._sync_lock = threading.Lock()
        """Held while fsyncing or closing, so the two never meet."""

    def append_line(self, line: bytes) -> None:
        """Write ``line`` (ending in a newline) whole, or raise ``VaultError`` and leave
        the file as it was."""
        fd = self._fd if self._fd is not None else self._open_for_append()
        try:
            if self._cut_pending:
                self._cut_back(fd)
            _write_line(fd, line)
            if self.sync_group is None:
                _fsync(fd, self.path)
        except (OSError, VaultError) as exc:
            self._cut_pending = True
            with contextlib.suppress(OSError):  # else cut before the next write, or it fails
                self._cut_back(fd)
            if isinstance(exc, VaultError):
                raise
            raise VaultError(f"cannot append to {self.path}: {os_reason(exc)}") from exc
        self._size += len(line)
        self._dirty = self.sync_group is not None

    def sync(self) -> None:
        """fsync now if anything was appended since the last fsync (any thread). Raises
        ``VaultError`` if this fsync failed, or a background one since the last call."""
        with self._sync_lock:
            earlier, self._failure = self._failure, None
            failure = self._fsync_if_dirty() or earlier  # pending appends are fsynced anyway
        if failure is not None:
            raise VaultError(failure)

    def sync_for_group(self) -> str | None:
        """The group's fsync: None, or the failure (kept for the next ``sync()``)."""
        with self._sync_lock:
            failure = self._fsync_if_dirty()
            if failure is not None and self._failure is None:
                self._failure = failure
        return failure

    def close(self) -> None:
        """fsync what is pending and close; raises ``VaultError`` (after closing) if that
        fsync failed, or a background one that no ``sync()`` has raised yet."""
        if self.sync_group is not None:
            self.sync_group.forget(self)
        with self._sync_lock:
            earlier, self._failure = self._failure, None
            failure = self._fsync_if_dirty() or earlier
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._dirty = False
        if failure is not None:
            raise VaultError(failure)

    def _fsync_if_dirty(self) -> str | None:
        """fsync (the sync lock held) if anything is pending; the failure, if it failed."""
        if self._fd is None or not self._dirty:
            return None
        self._dirty = False  # an append racing with this fsync sets it again
        try:
            _fsync(self._fd, self.path)
        except VaultError as exc:
            return str(exc)
        return None

    def _open_for_append(self) -> int:
        make_folder(self.path.parent)
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0)
        try:
            try:
                fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o666)  # less the umask
                created = True
            except FileExistsError:
                fd = os.open(self.path, flags)
                created = False
            self._size = os.fstat(fd).st_size
        except OSError as exc:
            raise VaultError(f"cannot open {self.path} to append: {os_reason(exc)}") from exc
        self._fd = fd
        if self.sync_group is not None:
            self.sync_group.watch(self)
        if created:
            fsync_folder(self.path.parent)
        return fd

    def _cut_back(self, fd: int) -> None:
        os.ftruncate(fd, self._size)
        self._cut_pending = False


class Journal(LineFile):
    def __init__(
        self, path: Path, count: int, *, sync_group: GroupSync | None = EVERY_100_MS
    ) -> None:
        super().__init__(path, sync_group=sync_group)
        self.count = count
        """Records in the file (M)."""

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        warn: Callable[[str], None],
        start: int = 0,
        check: Callable[[int], None] | None = None,
    ) -> tuple[Journal, list[MemoryRecord]]:
        """Count the records, read those from ``start`` on (cutting a torn tail), and
        return the journal ready to append. ``check(M)`` runs before anything is cut:
        a journal it refuses is left exactly as it was."""
        torn: list[str] = []
        count, records = read_tail(path, start, warn=torn.append, repair=False)
        if check is not None:
            check(count)
        if torn:  # now cut it, saying so once
            count, records = read_tail(path, start, warn=warn, repair=True)
        return cls(path, count), records

    def append(self, record: MemoryRecord) -> None:
        """Write ``record`` as one whole line, or raise ``VaultError`` and leave the file
        as it was (the record is then not counted)."""
        if record.seq != self.count:
            raise ValueError(f"record seq {record.seq} does not follow {self.count}")
        self.append_line(record.to_json() + b"\n")
        self.count += 1


def _write_line(fd: int, line: bytes) -> None:
    """Write all of ``line``; at the mid-line crash point, half of it first."""
    if armed(MID_LINE):
        half = len(line) // 2
        _write_all(fd, line[:half])
        crash_point(MID_LINE)
        _write_all(fd, line[half:])
    else:
        _write_all(fd, line)


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    while written < len(data):  # a short write (rare on a file): the rest, or the error
        if written <= 0:
            raise OSError(errno.EIO, "the write wrote nothing")
        data = data[written:]
        written = os.write(fd, data)


def _fsync(fd: int, path: Path) -> None:
    try:
        os.fsync(fd)
    except OSError as exc:
        raise VaultError(f"fsync of {path} failed: {os_reason(exc)}") from exc
