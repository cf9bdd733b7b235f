"""Bringing in Miniworld-style memory files: ``agents/<Name>/memories/*.md``.

Miniworld kept one file per memory (front matter ``timestamp``, ``type: memory``,
then ``# Memory`` and the text). Dropped into a character's folder before its first
load, they become that character's first memories (kind ``imported``), in file-name
order; the compaction rule then catches the backlog up in the background. The files
are left where they are: once the journal exists they are not read again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.errors import VaultError
from engine.vault.files import read_front_matter


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


def _timestamp(value: object) -> str | None:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat(timespec="microseconds")[:-6] + "Z"
    return str(value) if value else None
