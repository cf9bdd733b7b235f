"""An agent's items as retrieval scores them (``engine.memory.retrieval.Item``), read from
its files, one source at a time (``SOURCES``): its knowledge bank's entries, its notes,
its handbook's skills and its past short-term summaries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from engine.errors import VaultError
from engine.memory.handbook import sections, skill_front_matter, skill_keywords
from engine.memory.knowledge import Entry
from engine.memory.retrieval import Item, ItemKind
from engine.vault.knowledge_store import KnowledgeStore
from engine.vault.vault import Vault
from engine.world.model import Character
from engine.world.world import World

NOTE_CHARS: Final = 300
"""A note's text as the prompt shows it (its newest part), at most."""


def gather_items(vault: Vault, world: World, character: Character) -> list[Item]:
    """Every item of ``character``: its bank's entries, notes, skills and past summaries.
    A bank, a skill or the summaries that do not read are left out (a pass, the handbook
    or a load says why); a note that does not read is an error, as for the prompt."""
    return [item for source in SOURCES.values() for item in source(vault, world, character)]


def _bank_items(vault: Vault, world: World, character: Character) -> list[Item]:
    try:
        bank = KnowledgeStore(vault.agent_dir(character.folder) / "knowledge").load()
    except VaultError:
        return []
    return [entry_item(e, character) for e in bank]


def note_items(vault: Vault, world: World, character: Character) -> list[Item]:
    role, name = character.occupation, character.name
    return [Item(f"note:{note.title}", "note", _newest_part(note.body), f"note '{note.title}'",
                 (), note.title, note.sim, name, role)
            for note in vault.notes(character.folder).all()]  # fmt: skip


def entry_item(entry: Entry, character: Character) -> Item:
    return Item(f"entry:{entry.id}", "entry", entry.content,
                f"knowledge {entry.id} ({entry.type})", tuple(entry.tags),
                entry.tags[0] if entry.tags else "", entry.updated.sim, character.name,
                character.occupation, entry.type)  # fmt: skip


def _skills(vault: Vault, world: World, character: Character) -> list[Item]:
    store = vault.handbook(character.folder)
    try:
        state = store.state()
        when = state.updated.sim if state else None
        found = []
        for skill in store.skills():
            text = store.skill(skill) or ""
            front = skill_front_matter(text)
            steps = " ".join(sections(text).get("Procedure", "").split())
            line = f"{front.get('description', '').strip(chr(34))} Steps: {steps}".strip()
            found.append(Item(f"skill:{skill}", "skill", line, f"skill {skill}",
                              tuple(skill_keywords(text)), skill, when, character.name,
                              character.occupation, "skill"))  # fmt: skip
        return found
    except VaultError:
        return []


def _past(vault: Vault, world: World, character: Character) -> list[Item]:
    try:
        history = vault.summaries(character.folder).history()
    except VaultError:
        return []
    found = []
    for _, summary in history:
        names = " ".join(world.rooms[r].name for r in summary.rooms if r in world.rooms)
        found.append(Item(f"past:{summary.covers_from}-{summary.covers_to}", "past",
                          summary.text,
                          f"summary of memories #{summary.covers_from}-#{summary.covers_to - 1}",
                          (), names, summary.sim, character.name, character.occupation))  # fmt: skip
    return found


SOURCES: Final[dict[ItemKind, Callable[[Vault, World, Character], list[Item]]]] = {
    "entry": _bank_items, "note": note_items, "skill": _skills, "past": _past,
}  # fmt: skip
"""Where each kind of item comes from (``gather_items`` reads them all, in this order)."""


def _newest_part(body: str) -> str:
    text = " ".join(body.split())
    return text if len(text) <= NOTE_CHARS else "…" + text[-NOTE_CHARS:].split(" ", 1)[-1]
