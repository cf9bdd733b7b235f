"""The chronicle's files: ``vault/chronicle/``, a narrative people read.

::

    chronicle/world.md                    today's events, everywhere (one line each)
    chronicle/rooms/<room>.md             today's events in one room
    chronicle/days/<YYYY-MM-DD>/world.md  an earlier simulated day's, moved there whole
    chronicle/days/<YYYY-MM-DD>/rooms/<room>.md

Each file starts with a title and the simulated date it holds (``Simulated date:
2026-01-02``), then one ``- ...`` line per event (``engine.world.narrative`` writes
them). Days are the world clock's, never the wall clock's. When an event of another
date than the current files' comes (the clock passed midnight, or ``@time set`` moved
it), every current file is first moved to ``days/<the date it holds>/``; a day that is
already there (the clock went back) gets the moved lines appended to its file. A file
whose date cannot be read is left where it is and appended to.

``<room>`` is the room's id where it is a plain lower-case name of letters, digits,
``_`` and ``-``; anything else gets what is left of those plus eight hex digits of
the id's hash, so no id or name can leave the folder and two ids never share a file
(``room_file_stem``).

Writes are appends of whole lines (a heading and the first line go in one write); a
write that fails half-way is cut back. There is no fsync: a power cut may lose the
last lines, which the memory journals keep anyway. Readers read only a bounded tail.

The files written lately stay open (``KEPT_OPEN`` at most, closed by ``close``): each
append checks with one ``stat`` that the path still names the open file, and opens it
again if it was moved, replaced or removed meanwhile (by a day's turn, ``clear`` or a
person), so what lands where is as if every append opened the file.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Final

from engine.errors import VaultError
from engine.vault.files import make_folder, os_reason

CHRONICLE: Final = "chronicle"
WORLD: Final = "world.md"
ROOMS: Final = "rooms"
DAYS: Final = "days"
MAX_STEM: Final = 64
KEPT_OPEN: Final = 32
"""Chronicle files kept open between appends at most (the world's and the busiest rooms')."""
TAIL_BYTES_PER_LINE: Final = 8_192
"""How many bytes ``tail`` reads per line asked for (a line holds at most a few KB)."""

_PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_DATE_LINE = re.compile(r"^Simulated date: (\d{4}-\d{2}-\d{2})$", re.MULTILINE)
_WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(1, 10)]
)


def room_file_stem(room_id: str) -> str:
    """The file-name stem of a room's chronicle: the id itself when it is plain
    (``hall``, ``room-7``), else its safe letters plus a hash (``Hall`` -> ``Hall-1b2c...``,
    ``../x`` -> ``x-...``, ``""`` -> ``room-...``)."""
    if _PLAIN.fullmatch(room_id) and room_id not in _WINDOWS_DEVICES:
        return room_id
    kept = _UNSAFE.sub("", room_id)[: MAX_STEM - 9] or "room"
    digest = hashlib.sha256(room_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{kept}-{digest}"


@dataclass(frozen=True, slots=True)
class Entry:
    """One line for one file: ``path`` relative to the chronicle folder; ``title``
    heads the file when this line starts it."""

    path: str
    title: str
    line: str


@dataclass(frozen=True, slots=True)
class Cleared:
    path: str
    """Relative to the chronicle folder."""
    lines: int


class ChronicleStore:
    def __init__(self, vault_root: Path) -> None:
        self.folder = vault_root / CHRONICLE
        self._date: date | None = None
        """The date the current files hold, once known (None: read it from them)."""
        self._open: dict[str, tuple[int, int, int]] = {}
        """Path (as a string) -> (its open descriptor, st_dev, st_ino), oldest first."""
        self._paths: dict[str, Path] = {}
        """An entry's path -> its file's (made once)."""

    @staticmethod
    def world_path() -> str:
        return WORLD

    @staticmethod
    @lru_cache(maxsize=1024)
    def room_path(room_id: str) -> str:
        return f"{ROOMS}/{room_file_stem(room_id)}.md"

    # -- writing -----------------------------------------------------------------------
    def add(self, today: date, entries: Sequence[Entry]) -> None:
        """Append each entry's line to its file (moving yesterday's files away first);
        raises ``VaultError`` or ``OSError`` when a write fails."""
        if self._date != today:
            self._turn_to(today)
        for entry in entries:
            path = self._paths.get(entry.path)
            if path is None:
                path = self._paths[entry.path] = self.folder / entry.path
            self._append(path, entry, today)

    def _append(self, path: Path, entry: Entry, today: date) -> None:
        fd, size = self._descriptor(path)
        try:
            text = entry.line + "\n"
            if size == 0:
                text = heading(entry.title, today) + text
            try:
                _write_all(fd, text.encode("utf-8", "replace"))
            except OSError:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise
        except BaseException:
            self._forget(str(path))
            raise

    def _descriptor(self, path: Path) -> tuple[int, int]:
        """An open descriptor of the file ``path`` names now (created if need be), and
        the file's size (from the one ``stat`` that checks the path still names it)."""
        key = str(path)
        kept = self._open.get(key)
        if kept is not None:
            try:
                info = os.stat(key)
            except OSError:
                info = None
            if info is not None and (info.st_dev, info.st_ino) == kept[1:]:
                return kept[0], info.st_size
            self._forget(key)  # moved, replaced or removed: open what the path names now
        make_folder(path.parent)
        fd = os.open(key, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0),
                     0o666)  # fmt: skip
        try:
            info = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        while len(self._open) >= KEPT_OPEN:
            self._forget(next(iter(self._open)))
        self._open[key] = (fd, info.st_dev, info.st_ino)
        return fd, info.st_size

    def _forget(self, key: str) -> None:
        kept = self._open.pop(key, None)
        if kept is not None:
            with contextlib.suppress(OSError):
                os.close(kept[0])

    def close(self) -> None:
        """Close the files kept open (the next append opens them again)."""
        for key in list(self._open):
            self._forget(key)

    def __del__(self) -> None:
        self.close()

    def _turn_to(self, today: date) -> None:
        """Move every current file that holds another date to ``days/<its date>/``."""
        self.close()  # nothing kept open while files move (Windows would refuse)
        for path in self._current():
            held = date_of(path)
            if held is not None and held != today:
                self._archive(path, held)
        self._date = today

    def _archive(self, path: Path, held: date) -> None:
        target = self.folder / DAYS / held.isoformat() / path.relative_to(self.folder)
        make_folder(target.parent)
        if not target.exists():
            os.replace(path, target)
            return
        _, _, body = path.read_text(encoding="utf-8", errors="replace").partition("\n\n")
        _, _, body = body.partition("\n\n")  # after the title and the date
        with target.open("a", encoding="utf-8", errors="replace") as handle:
            handle.write(body)
        path.unlink()

    def _current(self) -> Iterator[Path]:
        world = self.folder / WORLD
        if world.is_file():
            yield world
        rooms = self.folder / ROOMS
        if rooms.is_dir():
            yield from sorted(p for p in rooms.iterdir() if p.suffix == ".md" and p.is_file())

    # -- reading and clearing ------------------------------------------------------------
    def tail(self, path: str, count: int) -> list[str]:
        """The last ``count`` event lines of a current file (none if it does not exist)."""
        file = self.folder / path
        try:
            with file.open("rb") as handle:
                size = handle.seek(0, os.SEEK_END)
                start = max(0, size - count * TAIL_BYTES_PER_LINE)
                handle.seek(start)
                data = handle.read()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise VaultError(f"cannot read {file}: {os_reason(exc)}") from exc
        lines = data.decode("utf-8", "replace").split("\n")
        if start > 0:
            lines = lines[1:]  # the first may be cut
        found = [text for text in lines if text.startswith("- ")]
        return found[-count:] if count > 0 else []

    def clear(self) -> list[Cleared]:
        """Remove the current files (not the earlier days'); what was removed."""
        self.close()
        removed: list[Cleared] = []
        for path in list(self._current()):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                path.unlink()
            except OSError as exc:
                raise VaultError(f"cannot remove {path}: {os_reason(exc)}") from exc
            lines = sum(1 for text_line in text.split("\n") if text_line.startswith("- "))
            removed.append(Cleared(path.relative_to(self.folder).as_posix(), lines))
        self._date = None
        return removed


def heading(title: str, day: date) -> str:
    """What a chronicle file starts with: its title, then the date it holds."""
    shown = " ".join(title.split()) or "Chronicle"
    return f"# {shown}\n\nSimulated date: {day.isoformat()}\n\n"


def date_of(path: Path) -> date | None:
    """The simulated date a chronicle file holds (its heading's); None if unreadable."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4_096).decode("utf-8", "replace")
    except OSError:
        return None
    found = _DATE_LINE.search(head)
    if found is None:
        return None
    try:
        return date.fromisoformat(found.group(1))
    except ValueError:
        return None


def _write_all(fd: int, data: bytes) -> None:
    while data:
        written = os.write(fd, data)
        if written <= 0:
            raise OSError(errno.EIO, "the write wrote nothing")
        data = data[written:]
