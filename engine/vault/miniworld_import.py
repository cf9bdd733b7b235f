"""Bringing in Miniworld-style memory files: ``agents/<Name>/memories/*.md``.

Miniworld kept one file per memory (front matter ``timestamp``, ``type: memory``,
then ``# Memory`` and the text). Dropped into a character's folder before its first
load, they become that character's first memories (kind ``imported``), in file-name
order; the compaction rule then catches the backlog up in the background.

The import is resumable: an import cut off half-way (a kill, a full disk) left the
first k files in the journal as its only memories, so the next load imports the files
after those k (``memories_to_import``), never one twice. Once every file is in the
journal (and fsynced) the folder is renamed ``memories.imported`` (``mark_imported``):
the files are kept, and not read again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.errors import VaultError
from engine.vault.files import fsync_folder, read_front_matter

DONE_NAME = "memories.imported"
"""What the folder is called once its import is finished."""


@dataclass(frozen=True)
class ImportedMemory:
    at: str | None
    text: str


def read_miniworld_memories(folder: Path) -> list[ImportedMemory]:
    """The memories in ``folder/*.md``, in file-name order (none if there is no folder)."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.md")):
        try:
            meta, body = read_front_matter(path)
        except VaultError as exc:
            raise VaultError(f"cannot import {path}: {exc}") from exc
        text = body.strip()
        if text.startswith("# Memory"):
            text = text[len("# Memory") :].strip()
        if text:
            found.append(ImportedMemory(_timestamp(meta.get("timestamp")), text))
    return found


def memories_to_import(folder: Path, imported: list[str]) -> list[ImportedMemory]:
    """The memories of ``folder`` not imported yet, given the texts of those that are (the
    journal's first records), which must be the first files' texts."""
    found = read_miniworld_memories(folder)
    done = [memory.text for memory in found[: len(imported)]]
    if done != imported:
        raise VaultError(
            f"the {len(imported)} memories imported so far do not match the first files of "
            f"{folder} (changed since?); move the folder aside, or restore those files"
        )
    return found[len(imported) :]


def mark_imported(folder: Path) -> Path:
    """Rename ``folder`` to ``memories.imported`` (``-2``, ``-3`` ... if taken): done."""
    target = folder.with_name(DONE_NAME)
    suffix = 2
    while target.exists():
        target = folder.with_name(f"{DONE_NAME}-{suffix}")
        suffix += 1
    try:
        folder.rename(target)
    except OSError as exc:
        raise VaultError(f"cannot rename {folder} to {target.name}: {exc}") from exc
    fsync_folder(folder.parent)
    return target


def _timestamp(value: object) -> str | None:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"
    return str(value) if value else None
