"""``mudsim status``: every character's memory status, read from a vault without its lock.

It reads the committed summaries (which fix the boundary), what the running process
last recorded (``memory-state.json``: in flight, failures, waits for memory, what the
last turn prompt left out to fit ``num_ctx``) and the
journal's count M,
read backwards from its end through the memories not yet summarized (checked as a load
checks them), so it works while another process owns the vault and does not grow with
the journal. An ``in_flight`` mark is believed only while a live process holds the
vault's lock (``engine.vault.lock.owned``); with none, a killed process left it, and it
is reported as stale (``in_flight_stale``; the next process to take the vault clears
it). ``read_clock`` reads the world clock's saved reading the same way.
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
from engine.vault.lock import owned
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
    owner: bool | None = None  # asked once, and only when a mark needs it
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
        if state.in_flight and owner is None:
            owner = owned(vault_dir) is not False  # (unknown: believe the mark)
        stale = state.in_flight and not owner
        statuses.append(
            MemoryStatus(
                name=character.name,
                type=character.type,
                memories=memories,
                boundary=summaries.boundary,
                windows=windows,
                in_flight=state.in_flight and not stale,
                in_flight_stale=stale,
                failures=state.failures,
                last_error=state.last_error,
                summaries=state.summaries if owner else None,  # (a gone process's: past)
                held_turns=state.held_for_memory.turns,
                held_seconds=state.held_for_memory.seconds,
                queued_turns=state.held_for_memory.queued_turns,
                queued_seconds=state.held_for_memory.queued_seconds,
                hidden_in_last_prompt=state.last_prompt.hidden if state.last_prompt else None,
                cut_in_last_prompt=tuple(state.last_prompt.cut) if state.last_prompt else (),
                dropped_from_last_prompt=tuple(state.last_prompt.dropped)
                if state.last_prompt
                else (),
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
