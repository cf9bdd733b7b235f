"""The inspector's Knowledge and Handbook tabs: what they show, read from the selected
agent's files only while the tab shows and only when those files changed (their
modification times and sizes), since the panels refresh ten times a second."""

from __future__ import annotations

from pathlib import Path

from engine.agents.memory import MemoryStream
from engine.errors import VaultError
from engine.memory.knowledge import Entry
from engine.sim.simulation import Simulation
from engine.tui.render import handbook_text, knowledge_text


class MemoryTabs:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self._seen: dict[str, tuple[object, ...]] = {}
        """Tab -> whose files it showed, and their stamps then."""

    def knowledge(self, mind: MemoryStream) -> str | None:
        """The Knowledge tab's text, or None when nothing changed since the last call."""
        store = self.sim.knowledge.store(mind)
        if not self._changed("knowledge", mind, store.bank_path, store.passes_folder):
            return None
        bank: list[Entry] | str
        try:
            bank = store.load()
        except VaultError as exc:
            bank = str(exc)
        last = store.last_pass(completed_only=False)
        applied = store.applied_text(last) if last is not None else ""
        return knowledge_text(mind.character.name, bank, last, applied)

    def handbook(self, mind: MemoryStream) -> str | None:
        """The Handbook tab's text (memory_summary.md), or None when nothing changed."""
        store = self.sim.vault.handbook(mind.character.folder)
        skills = store.folder / "skills"
        if not self._changed("handbook", mind, store.summary_path, skills, store.folder):
            return None
        try:
            summary: str | None = store.summary_text()
            state = store.state()
        except VaultError as exc:
            return handbook_text(mind.character.name, None, [], None, problem=str(exc))
        return handbook_text(mind.character.name, summary, store.skills(), state)

    def _changed(self, tab: str, mind: MemoryStream, *paths: Path) -> bool:
        seen = (mind.character.id, *(stamp(path) for path in paths))
        if self._seen.get(tab) == seen:
            return False
        self._seen[tab] = seen
        return True


def stamp(path: Path) -> tuple[int, int]:
    """(modification time, size) of ``path``; (0, 0) when it is missing. A pass or an
    undo rewrites the bank; a pass (even one that changed nothing) adds a record."""
    try:
        info = path.stat()
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)
