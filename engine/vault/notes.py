"""A character's notes: ``agents/<Name>/notes/<title>.md``, a small personal wiki.

``note`` appends an entry (entries are separated by a ``---`` line); ``@overwrite-note``
replaces the body. Titles are NFC-normalised and become file names through
``note_file_stem`` (letters of every script kept; no title can name a path outside the
notes folder, and two titles never share a file). A note is found by the title in its
front matter when its file name is not the one its title makes (a vault written before
this scheme, or a file a person renamed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.errors import VaultError
from engine.memory.record import utc_now
from engine.vault.files import read_front_matter, write_front_matter
from engine.vault.paths import note_file_stem, note_title

ENTRY_SEPARATOR = "\n\n---\n\n"


@dataclass(frozen=True)
class Note:
    title: str
    body: str
    created: str
    updated: str
    path: Path | None = None
    """The file it was read from (None for a note not yet written)."""
    sim: str | None = None
    """The world clock when it last changed (None: written before notes kept it)."""


class NoteStore:
    """One character's notes. ``all()`` runs for every prompt, so what it parsed is kept
    while no note file's name, size or modification time changes (a person may edit
    them while the world runs)."""

    def __init__(self, folder: Path, max_bytes: int | None = None) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        """A note may not grow past this many bytes (UTF-8); None: no limit."""
        self._cached: tuple[tuple[tuple[str, int, int], ...], list[Note]] | None = None

    def path_for(self, title: str) -> Path:
        return self.folder / f"{note_file_stem(title)}.md"

    def read(self, title: str) -> Note | None:
        title = note_title(title)
        path = self.path_for(title)
        if path.exists():
            return self._read(path)
        return next((note for note in self.all() if note.title == title), None)

    def all(self) -> list[Note]:
        """Every note, most recently updated first."""
        try:
            with os.scandir(self.folder) as entries:
                version = tuple(sorted(
                    (e.name, e.stat().st_mtime_ns, e.stat().st_size)
                    for e in entries if e.name.endswith(".md")
                ))  # fmt: skip
        except OSError:
            return []
        if self._cached is not None and self._cached[0] == version:
            return list(self._cached[1])
        notes = [self._read(path) for path in sorted(self.folder.glob("*.md"))]
        notes.sort(key=lambda note: note.updated, reverse=True)
        self._cached = (version, notes)
        return list(notes)

    def append(
        self, title: str, text: str, *, reason: str | None = None, sim: str | None = None
    ) -> Note:
        """Add an entry to the note ``title`` (made when new); ``sim``: the world clock."""
        title = note_title(title)
        existing = self.read(title)
        body = f"{existing.body}{ENTRY_SEPARATOR}{text}" if existing and existing.body else text
        return self._write(title, body, existing, reason, sim)

    def overwrite(
        self, title: str, text: str, *, reason: str | None = None, sim: str | None = None
    ) -> Note:
        title = note_title(title)
        return self._write(title, text, self.read(title), reason, sim)

    def _write(
        self, title: str, body: str, existing: Note | None, reason: str | None, sim: str | None
    ) -> Note:
        size = len(body.encode("utf-8"))
        if self.max_bytes is not None and size > self.max_bytes:
            raise VaultError(
                f"the note {title!r} would be {size:,} bytes; a note may hold at most "
                f"{self.max_bytes:,} (max_note_bytes in config/limits.md)"
            )
        now = utc_now()
        path = existing.path if existing is not None and existing.path else self._new_path(title)
        note = Note(
            title=title,
            body=body,
            created=existing.created if existing else now,
            updated=now,
            path=path,
            sim=sim,
        )
        meta: dict[str, str] = {"title": title, "created": note.created, "updated": now}
        if sim:
            meta["sim"] = sim
        if reason:
            meta["reason"] = reason
        write_front_matter(path, meta, body)
        self._cached = None
        return note

    def _new_path(self, title: str) -> Path:
        """Where a new note goes: its title's file, or the hashed one when another note
        holds that name but for case (one file on macOS and Windows)."""
        path = self.path_for(title)
        taken = {note.path.name.casefold() for note in self.all() if note.path is not None}
        if path.name.casefold() in taken:
            path = self.folder / f"{note_file_stem(title, hashed=True)}.md"
        return path

    def _read(self, path: Path) -> Note:
        meta, body = read_front_matter(path)
        try:
            return Note(
                title=note_title(str(meta.get("title") or path.stem)),
                body=body,
                created=str(meta.get("created", "")),
                updated=str(meta.get("updated", "")),
                path=path,
                sim=meta["sim"] if isinstance(meta.get("sim"), str) else None,
            )
        except (TypeError, ValueError) as exc:
            raise VaultError(f"{path}: invalid note: {exc}") from exc
