"""One character's handbook: ``agents/<Name>/handbook/``.

``memory_summary.md``, ``MEMORY.md`` and ``skills/<kebab>/SKILL.md`` (seed 004's
documents, ``engine.memory.handbook``), and ``handbook.json``, what the last write was
(``HandbookState``: how it was made, which pass it consolidated through, the files it
wrote). Everything written here is redacted first (``engine.memory.secrets``), then
bounded: MEMORY.md to ``MEMORY_BYTES`` (``engine.memory.handbook_rules.bound_memory_md``),
memory_summary.md to its limits (``enforce_limits``, when it is over ``SUMMARY_CHARS``),
whoever wrote them, and so is a file kept as ``.prev`` (one from before the bound).

A write (``HandbookStore.write``) keeps the previous version of each file it replaces
or removes as ``<file>.prev`` and records which files it created, so ``undo`` puts the
handbook back as it was before the write: ``.prev`` files go back, created files go.
Every file is written atomically; the set is not, so a write first leaves
``.writing`` (the plan: which files did not exist) and removes it at the end, after
``handbook.json``. A write that finds ``.writing`` resumes an interrupted one: the
``.prev`` files it finds hold what that write replaced, so they are kept, and the files
it created are still "created". The crash point ``handbook-mid-write`` sits between
two files.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import VaultError
from engine.faults import crash_point
from engine.memory.handbook import (
    MEMORY_FILE,
    SKILL_FILE,
    SKILLS_FOLDER,
    SUMMARY_CHARS,
    SUMMARY_FILE,
    Handbook,
    enforce_limits,
    summary_problems,
)
from engine.memory.handbook_rules import bound_memory_md
from engine.memory.knowledge import Stamp
from engine.memory.secrets import redact
from engine.vault.files import atomic_write_text, fsync_folder, os_reason, read_json

STATE_FILE: Final = "handbook.json"
WRITING: Final = ".writing"
PREV: Final = ".prev"


class HandbookState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    method: Literal["llm", "rules"]
    mode: Literal["INIT", "INCREMENTAL", "RULES"]
    through_pass: str | None = None
    """The newest pass record consolidated (the next INCREMENTAL write reads the ones after)."""
    updated: Stamp
    files: list[str] = Field(default_factory=list)
    """The files this write wrote or removed (relative to the folder)."""
    created: list[str] = Field(default_factory=list)
    """Those of them that did not exist before it (undo removes them)."""
    fallback: str | None = None
    """Why the rules wrote it when the model was asked."""
    bank_digest: str | None = None
    """The knowledge bank it was written from (``engine.memory.knowledge_view.bank_digest``):
    a handbook whose bank has changed since (an undo, a pass cut off before its handbook)
    is written again. None: a handbook from before the digest."""


@dataclass(frozen=True)
class UndoneWrite:
    restored: list[str]
    removed: list[str]


class HandbookStore:
    def __init__(self, folder: Path, *, allow_fiction: bool = False) -> None:
        self.folder = folder
        self.allow_fiction = allow_fiction
        """Keep the secrets the story tells in prose (``fiction_secrets``) when writing."""
        self._cached: tuple[tuple[int, int], str] | None = None
        self._summary_name = str(folder / SUMMARY_FILE)
        """``summary_path`` as a string, stat-ed for every prompt."""

    @property
    def summary_path(self) -> Path:
        return self.folder / SUMMARY_FILE

    def skill_path(self, name: str) -> Path:
        return self.folder / SKILLS_FOLDER / name / SKILL_FILE

    # -- reading ---------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.summary_path.is_file()

    def read(self) -> Handbook | None:
        """The handbook, or None before the first write. ``VaultError`` naming a file
        that cannot be read."""
        if not self.exists():
            return None
        summary = _read(self.summary_path)
        memory_path = self.folder / MEMORY_FILE
        memory = _read(memory_path) if memory_path.is_file() else ""
        return Handbook(
            summary, memory, {name: _read(self.skill_path(name)) for name in self.skills()}
        )

    def summary_text(self) -> str | None:
        """memory_summary.md (None before the first write). Read for every prompt, so
        the text is kept while the file's size and modification time stay the same (a
        person may edit it)."""
        try:
            info = os.stat(self._summary_name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise VaultError(f"cannot read {self.summary_path}: {os_reason(exc)}") from exc
        version = (info.st_mtime_ns, info.st_size)
        if self._cached is None or self._cached[0] != version:
            self._cached = (version, _read(self.summary_path))
        return self._cached[1]

    def memory_text(self) -> str:
        """MEMORY.md ("" when there is none)."""
        path = self.folder / MEMORY_FILE
        return _read(path) if path.is_file() else ""

    def skills(self) -> list[str]:
        """The skills' names, sorted."""
        folder = self.folder / SKILLS_FOLDER
        if not folder.is_dir():
            return []
        return sorted(p.parent.name for p in folder.glob(f"*/{SKILL_FILE}") if p.is_file())

    def skill(self, name: str) -> str | None:
        path = self.skill_path(name)
        return _read(path) if name in self.skills() else None

    def state(self) -> HandbookState | None:
        path = self.folder / STATE_FILE
        if not path.is_file():
            return None
        try:
            return HandbookState.model_validate(read_json(path))
        except ValidationError as exc:
            raise VaultError(f"{path} is not a handbook record: {exc.errors()[0]['msg']}") from exc

    def files(self) -> list[tuple[Path, int]]:
        """Each document's path and size in bytes (memory_summary.md, MEMORY.md, skills)."""
        paths = [self.summary_path, self.folder / MEMORY_FILE]
        paths += [self.skill_path(name) for name in self.skills()]
        return [(p, p.stat().st_size) for p in paths if p.is_file()]

    # -- writing ---------------------------------------------------------------------------

    def write(self, handbook: Handbook, state: HandbookState) -> HandbookState:
        """Write ``handbook`` (see the module docstring); returns the state recorded. A
        file that would not change is not written (nor backed up); when none would, the
        write does not happen at all, so ``undo`` still undoes the last one that did."""
        self._cached = None  # never kept across its own write (a coarse clock's same mtime)
        marker = self.folder / WRITING
        resuming = marker.is_file()
        whole = self._plan(handbook)
        plan = {f: text for f, text in whole.items() if self._differs(f, text)}
        if not plan and not resuming:
            current = self.state()
            if current is not None and current.bank_digest == state.bank_digest:
                return current
        try:
            absent = self._begin(marker, plan)
            for relative, text in plan.items():
                self._replace(relative, text, backup=relative not in absent)
                crash_point("handbook-mid-write")
            touched = [f for f in whole if f in plan or f in absent
                       or (self.folder / (f + PREV)).exists()]  # fmt: skip
            created = [f for f in [*touched, STATE_FILE] if f in absent]
            recorded = state.model_copy(update={"files": touched, "created": created})
            self._replace(STATE_FILE, recorded.model_dump_json(indent=2) + "\n",
                          backup=STATE_FILE not in absent)  # fmt: skip
            marker.unlink(missing_ok=True)
        except OSError as exc:
            raise VaultError(
                f"cannot write the handbook in {self.folder}: {os_reason(exc)}"
            ) from exc
        return recorded

    def _differs(self, relative: str, text: str | None) -> bool:
        path = self.folder / relative
        try:
            return text is None or path.read_text(encoding="utf-8") != text
        except FileNotFoundError:
            return text is not None
        except (OSError, UnicodeDecodeError):
            return True

    def _plan(self, handbook: Handbook) -> dict[str, str | None]:
        """Relative path -> new text (None: the file goes), skills first, the summary last."""
        plan: dict[str, str | None] = {}
        fiction = self.allow_fiction
        for name in self.skills():
            if name not in handbook.skills:
                plan[f"{SKILLS_FOLDER}/{name}/{SKILL_FILE}"] = None
        for name, text in sorted(handbook.skills.items()):
            plan[f"{SKILLS_FOLDER}/{name}/{SKILL_FILE}"] = redact(text, allow_fiction=fiction)
        plan[MEMORY_FILE] = bounded(MEMORY_FILE, redact(handbook.memory_md, allow_fiction=fiction))
        summary = redact(handbook.memory_summary, allow_fiction=fiction)
        plan[SUMMARY_FILE] = bounded(SUMMARY_FILE, summary)
        return plan

    def _begin(self, marker: Path, plan: dict[str, str | None]) -> set[str]:
        """Start a write, or resume an interrupted one; the files that did not exist."""
        resumed: set[str] | None = None
        if marker.is_file():
            with contextlib.suppress(OSError, ValueError):
                resumed = set(json.loads(marker.read_text(encoding="utf-8"))["absent"])
        if resumed is None:  # a new write: the .prev files of the one before go
            for old in self.folder.rglob(f"*{PREV}"):
                old.unlink()
            resumed = set()
        absent = resumed | {f for f in [*plan, STATE_FILE] if not (self.folder / f).exists()
                            and not (self.folder / (f + PREV)).exists()}  # fmt: skip
        atomic_write_text(marker, json.dumps({"absent": sorted(absent)}) + "\n")
        return absent

    def _replace(self, relative: str, text: str | None, *, backup: bool) -> None:
        """Write (or remove) one file, keeping what it held as ``.prev`` first (``backup``;
        not for a file this write, or the interrupted one it finishes, created)."""
        path = self.folder / relative
        prev = path.with_name(path.name + PREV)
        if backup and path.exists() and not prev.exists():
            atomic_write_text(prev, bounded(relative, path.read_text(encoding="utf-8")))
        if text is None:
            path.unlink(missing_ok=True)
            fsync_folder(path.parent)
        else:
            atomic_write_text(path, text)

    # -- undo ------------------------------------------------------------------------------

    def undo(self) -> UndoneWrite | None:
        """Put back the files the last write replaced and remove those it created; None
        when there is no write to undo (none yet, or it was undone already: undo goes
        back one write). ``VaultError`` when that write was cut short (the next write
        finishes it)."""
        self._cached = None
        if (self.folder / WRITING).exists():
            raise VaultError(
                f"the last handbook write in {self.folder} was interrupted; the next "
                "knowledge pass finishes it, then it can be undone"
            )
        state = self.state()
        if state is None:
            return None
        targets = [*state.files, STATE_FILE]
        if not any((self.folder / (f + PREV)).exists() for f in targets) and not any(
            (self.folder / f).exists() for f in state.created
        ):
            return None
        restored, removed = [], []
        try:
            for relative in targets:
                path = self.folder / relative
                prev = path.with_name(path.name + PREV)
                if prev.exists():
                    os.replace(prev, path)
                    restored.append(relative)
                elif relative in state.created and path.exists():
                    path.unlink()
                    removed.append(relative)
                with contextlib.suppress(OSError):
                    if path.parent != self.folder and not any(path.parent.iterdir()):
                        path.parent.rmdir()
            earlier = self.state()
            if earlier is not None:  # its own backups are gone: it cannot be undone in turn
                atomic_write_text(self.folder / STATE_FILE,
                                  earlier.model_copy(update={"created": []})
                                  .model_dump_json(indent=2) + "\n")  # fmt: skip
            fsync_folder(self.folder)
        except OSError as exc:
            raise VaultError(
                f"cannot undo the handbook in {self.folder}: {os_reason(exc)}"
            ) from exc
        return UndoneWrite(restored, removed)


def bounded(relative: str, text: str) -> str:
    """``text`` within the bound of the file ``relative`` names (see the module)."""
    if relative == MEMORY_FILE:
        return bound_memory_md(text)
    if relative != SUMMARY_FILE or len(text) < SUMMARY_CHARS:
        return text
    if not summary_problems(text):
        return enforce_limits(text)
    return text[: SUMMARY_CHARS - 1].rsplit("\n", 1)[0] + "\n"  # not the three sections


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
