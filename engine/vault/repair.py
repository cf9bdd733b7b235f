"""When a journal holds fewer memories than its summaries cover, and ``mudsim repair``.

A journal cut short (by hand, or by a disk fault) under summaries that cover more than
it holds would reuse seqs and wedge compaction, so a load refuses it with one error
naming both files and both numbers (``check_journal_covers``). ``repair_vault`` then
makes each character's state agree with what its journal really holds:

- the summaries roll back (``plan_rollback``, pure): the long-term summary stays if the
  journal still holds all it covers, with the history file that ends where it does as
  the short-term summary; otherwise both go, and the short-term summary becomes the
  longest history file from memory 0 that the journal holds (or none, b = 0). History
  files covering memories past the new boundary go too. The compactions simply run
  again over what lies past the new boundary.
- ``memory-state.json`` is rewritten (memories M, the new boundary, not in flight).
- an ``in_flight`` mark a killed process left in ``memory-state.json`` is cleared (as
  every process that takes the vault clears it: ``Vault.lock``), and the report says so.

Nothing is deleted: every file removed or replaced is moved (or copied) into
``agents/<Name>/repair-<UTC>/`` first, and the report says so. Repair takes the lock.
A repair cut off half-way leaves a vault that loads, or one that the next repair
finishes (every step is one atomic rename or write, the commit point ``recent.md``
among the last).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.errors import VaultError
from engine.vault.files import atomic_write_text, fsync_folder, make_folder, os_reason
from engine.vault.journal import read_tail
from engine.vault.summaries import Summaries, Summary, SummaryStore
from engine.vault.vault import MemoryState, Vault
from engine.world.model import Character


@dataclass(frozen=True)
class Rollback:
    """How one character's summaries come back within a journal of ``memories`` lines."""

    boundary: int
    """b after the repair."""
    recent_from: Path | None
    """The history file whose copy becomes ``recent.md`` (None: no ``recent.md``)."""
    drop_longterm: bool
    set_aside: tuple[Path, ...]
    """History files that cover memories past the new boundary."""


def covered(summaries: Summaries) -> int:
    """How far the summaries reach: the end of the farther of recent.md and longterm.md."""
    return max(
        [s.covers_to for s in (summaries.recent, summaries.longterm) if s is not None], default=0
    )


def plan_rollback(
    memories: int, summaries: Summaries, history: list[tuple[Path, Summary]]
) -> Rollback | None:
    """The rollback that brings ``summaries`` within ``memories`` (None: they are)."""
    if covered(summaries) <= memories:
        return None
    longterm = summaries.longterm
    recent: tuple[Path, Summary] | None
    if longterm is not None and longterm.covers_to <= memories:
        # L stays; S is the chunk L absorbed last (a state a commit cut short leaves too)
        ends_with_l = [e for e in history if e[1].covers_to == longterm.covers_to]
        recent = ends_with_l[-1] if ends_with_l else None
        boundary, drop_longterm = longterm.covers_to, False
    else:
        from_zero = [e for e in history if e[1].covers_from == 0 and 0 < e[1].covers_to <= memories]
        recent = max(from_zero, key=lambda e: e[1].covers_to) if from_zero else None
        boundary = recent[1].covers_to if recent is not None else 0
        drop_longterm = longterm is not None
    set_aside = tuple(path for path, s in history if s.covers_to > boundary)
    return Rollback(boundary, None if recent is None else recent[0], drop_longterm, set_aside)


def check_journal_covers(
    vault: Vault, character: Character, memories: int, summaries: Summaries, state: MemoryState
) -> None:
    """Raise ``VaultError`` if the journal holds fewer memories than the summaries (or,
    with none, ``memory-state.json``) say are summarized."""
    reach = covered(summaries)
    store = vault.summaries(character.folder)
    if reach > memories:
        recent = summaries.recent
        holder = store.recent_path if recent and recent.covers_to == reach else store.longterm_path
    elif state.boundary > memories:
        holder, reach = vault.agent_dir(character.folder) / "memory-state.json", state.boundary
    else:
        return
    raise VaultError(
        f"{vault.journal_path(character.folder)} holds {memories} memories, but {holder} "
        f"says memories up to {reach} are summarized: the journal was cut short (by hand or "
        f"a disk fault?); mudsim repair --vault {shlex.quote(str(vault.root))} --agent "
        f"{shlex.quote(character.name)} rolls the summaries back to what it holds"
    )


STALE_LINE = (
    "{name}: in_flight was left true in memory-state.json by a process that is gone "
    "(killed mid-compaction?); cleared (what it had not committed is done again when due)"
)
"""What ``repair`` says of a character whose stale ``in_flight`` mark it cleared."""
NOTHING = "nothing to repair"


def repair_vault(
    vault_dir: Path,
    agent: str | None,
    *,
    now: datetime | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[str]:
    """Make every character's (or ``agent``'s) state agree with its journal; the report,
    one line per change (and one per character with nothing to repair)."""
    vault = Vault(vault_dir)
    if not vault.is_seeded:
        raise VaultError(f"{vault_dir} holds no world yet: there is nothing to repair")
    report: list[str] = []
    lock = vault.lock()
    try:
        world = vault.load_world(warn=warn or report.append)
        characters = world.characters_named(agent)
        stamp = f"repair-{(now or datetime.now(UTC)).astimezone(UTC):%Y%m%d-%H%M%S}Z"
        stale = set(vault.stale_in_flight)  # cleared as the lock was taken
        for character in characters:
            lines = _repair_character(vault, character, stamp, warn or report.append)
            if character.folder in stale:  # said first; it was the only thing wrong?
                lines = [STALE_LINE.format(name=character.name)] + (
                    [] if NOTHING in lines[0] else lines
                )
            report.extend(lines)
    finally:
        lock.release()
    return report


def _repair_character(
    vault: Vault, character: Character, stamp: str, warn: Callable[[str], None]
) -> list[str]:
    name, folder = character.name, character.folder
    store = vault.summaries(folder)
    summaries = store.load()
    memories, _ = read_tail(vault.journal_path(folder), covered(summaries), warn=warn, repair=True)
    state = vault.read_state(folder)
    plan = plan_rollback(memories, summaries, store.history())
    if plan is None and state.boundary <= memories and state.memories <= memories:
        return [f"{name}: {NOTHING} ({memories} memories, boundary {summaries.boundary})"]
    boundary = summaries.boundary if plan is None else plan.boundary
    lines = [
        f"{name}: the journal holds {memories} memories; the summaries covered up to "
        f"{covered(summaries)}, memory-state.json said {state.memories} memories, "
        f"boundary {state.boundary}"
    ]
    aside = _Aside(vault.root, vault.agent_dir(folder), stamp)
    if plan is not None:
        lines += _roll_back(store, summaries, plan, aside)
    state_path = vault.agent_dir(folder) / "memory-state.json"
    if state_path.exists():
        aside.copy(state_path)
    new_state = state.model_copy(
        update={"memories": memories, "boundary": boundary, "in_flight": False}
    )
    vault.write_state(folder, new_state)
    lines.append(f"  memory-state.json: {memories} memories, boundary {boundary}")
    if aside.moved:
        lines.append(
            f"  kept what it removed or replaced in {aside.relative}/: {', '.join(aside.moved)}"
        )
    if plan is not None and boundary < memories:
        lines.append(
            f"  memories {boundary}-{memories - 1} are past the boundary again: "
            f"the next runs summarize them again"
        )
    return lines


def _roll_back(
    store: SummaryStore, summaries: Summaries, plan: Rollback, aside: _Aside
) -> list[str]:
    lines = []
    for path in plan.set_aside:
        aside.move(path)
    if plan.drop_longterm and store.longterm_path.exists():
        aside.move(store.longterm_path)
        lines.append("  longterm.md: removed (it covered memories the journal lacks)")
    elif summaries.longterm is not None:
        lines.append(f"  longterm.md: kept (memories 0-{summaries.longterm.covers_to - 1})")
    if plan.recent_from is not None:
        if store.recent_path.exists():
            aside.copy(store.recent_path)
        text = plan.recent_from.read_text(encoding="utf-8")
        atomic_write_text(store.recent_path, text)  # a history file is a recent.md
        recent = store.load().recent
        assert recent is not None
        lines.append(
            f"  recent.md: now memories {recent.covers_from}-{recent.covers_to - 1} "
            f"(copied from {plan.recent_from.name})"
        )
    elif store.recent_path.exists():
        aside.move(store.recent_path)
        lines.append("  recent.md: removed (no earlier short-term summary fits)")
    return lines


class _Aside:
    """``agents/<Name>/repair-<UTC>/``: where a repair puts what it removes or replaces,
    at the same relative path (``summaries/recent.md``, ``memory-state.json``)."""

    def __init__(self, root: Path, agent_dir: Path, stamp: str) -> None:
        self.agent_dir = agent_dir
        self.folder = agent_dir / stamp
        suffix = 2
        while self.folder.exists():
            self.folder = agent_dir / f"{stamp}-{suffix}"
            suffix += 1
        self.relative = self.folder.relative_to(root)
        self.moved: list[str] = []

    def _target(self, path: Path) -> Path:
        relative = path.relative_to(self.agent_dir)
        target = self.folder / relative
        make_folder(target.parent)
        self.moved.append(str(relative))
        return target

    def move(self, path: Path) -> None:
        target = self._target(path)
        try:
            os.replace(path, target)
        except OSError as exc:
            raise VaultError(f"cannot move {path} aside to {target}: {os_reason(exc)}") from exc
        fsync_folder(target.parent)
        fsync_folder(path.parent)

    def copy(self, path: Path) -> None:
        target = self._target(path)
        try:
            shutil.copy2(path, target)
            with open(target, "rb") as handle:
                os.fsync(handle.fileno())
        except OSError as exc:
            raise VaultError(f"cannot copy {path} aside to {target}: {os_reason(exc)}") from exc
        fsync_folder(target.parent)
