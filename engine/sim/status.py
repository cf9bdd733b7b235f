"""``mudsim status``: every character's memory status, read from a vault without its lock.

It reads the committed summaries (which fix the boundary), what the running process
last recorded (``memory-state.json``: in flight, failures) and the journal's count M,
read backwards from its end through the memories not yet summarized (checked as a load
checks them), so it works while another process owns the vault and does not grow with
the journal. ``read_clock`` reads the world clock's saved reading the same way.
"""

from __future__ import annotations

from pathlib import Path

from engine.agents.knowledge_status import knowledge_info
from engine.agents.memory import summary_info
from engine.errors import VaultError
from engine.memory.status import MemoryStatus
from engine.memory.waterfall import Windows
from engine.vault.journal import read_tail
from engine.vault.knowledge_store import KnowledgeStore
from engine.vault.repair import check_journal_covers
from engine.vault.vault import Vault
from engine.vault.world_store import load_clock


def read_status(vault_dir: Path, agent: str | None = None) -> list[MemoryStatus]:
    vault = Vault(vault_dir)
    if vault.foreign_entries():
        raise VaultError(f"{vault_dir} is not a mudsim vault (it holds no world/world.yaml)")
    if not vault.is_seeded:
        raise VaultError(
            f"{vault_dir} holds no world yet; seed it with: mudsim do WORLD --vault {vault_dir} look"
        )
    world = vault.load_world()
    defaults = vault.settings().memory_compaction
    characters = world.characters_named(agent)
    statuses = []
    for character in characters:
        state = vault.read_state(character.folder)
        windows = Windows(
            character.immediate_window or defaults.immediate_window,
            character.recent_window or defaults.recent_window,
        )
        summaries = vault.summaries(character.folder).load()
        memories = _count_lines(vault.journal_path(character.folder), summaries.boundary)
        check_journal_covers(vault, character, memories, summaries, state)
        statuses.append(
            MemoryStatus(
                name=character.name,
                type=character.type,
                memories=memories,
                boundary=summaries.boundary,
                windows=windows,
                in_flight=state.in_flight,
                failures=state.failures,
                last_error=state.last_error,
                held_turns=state.held_for_memory.turns,
                held_seconds=state.held_for_memory.seconds,
                short_term=summary_info(summaries.recent),
                long_term=summary_info(summaries.longterm),
                knowledge=knowledge_info(
                    KnowledgeStore(vault.agent_dir(character.folder) / "knowledge"),
                    memories=memories,
                    every=defaults.consolidate_every,
                )
                if character.type == "agent"
                else None,
            )
        )
    return statuses


def _count_lines(path: Path, start: int) -> int:
    """M, the journal's complete lines, read backwards from its end down to ``start``
    (the boundary): a corrupt line there is an error naming its file and line, as it
    is when the vault is loaded; a torn last line, perhaps an append in progress, does
    not count and is left alone."""
    return read_tail(path, start, warn=lambda _message: None, repair=False)[0]


def read_clock(vault_dir: Path) -> str | None:
    """The world clock's saved reading (``YYYY-MM-DDTHH:MM``), or None for a vault saved
    before the clock existed (its clock starts at the world file's start on the next
    run); a clock file that is not a clock is a ``VaultError`` naming it."""
    clock = load_clock(vault_dir)
    return clock.reading() if clock is not None else None
