"""An agent's items as retrieval scores them (``engine.memory.retrieval.Item``), read from
its files, one source at a time (``SOURCES``): its knowledge bank's entries, its notes,
its handbook's skills and its past short-term summaries.

The handbook's routing index (seed 004) is read here, as the files are on disk (a
person's edit counts): a skill is found by the keywords its row of memory_summary.md's
Routing Index lists (``| Fire | skills/bank-the-fire/SKILL.md | hearth, embers |``), and
an entry by its MEMORY.md cluster's topic and ``keywords`` (and those of the cluster's
row), as well as by its own words."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from engine.errors import VaultError
from engine.memory.handbook import (
    cluster_keywords,
    routing_rows,
    sections,
    skill_front_matter,
    skill_keywords,
)
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
    routes = routing(vault, character)
    return [entry_item(e, character, routes.entries.get(_key(e.content), ())) for e in bank]


@dataclass(frozen=True)
class Routing:
    """What the handbook's routing index adds to the words an item is found by."""

    skills: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Skill name -> the topic and keywords of its Routing Index rows."""
    entries: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """An entry's content (``_key``) -> its MEMORY.md cluster's topic and keywords."""


_SKILL_LOCATION = re.compile(r"skills/([^/\s]+)/SKILL\.md")
_MEMORY_LOCATION = re.compile(r"MEMORY\.md\s*>\s*(.+)")
_BULLET = re.compile(r"^- +(.+?)(?: \((?:skill|fact|procedure|observation|mistake|preference)"
                     r"(?:;[^)]*)?\))?\s*$", re.MULTILINE)  # fmt: skip


def routing(vault: Vault, character: Character) -> Routing:
    """The routing index of ``character``'s handbook as it is on disk (see the module);
    empty when there is none or it does not read."""
    store = vault.handbook(character.folder)
    try:  # its two files only: the skills are read as items already
        summary, memory_md = store.summary_text(), store.memory_text()
    except VaultError:
        return Routing()
    if summary is None:
        return Routing()
    skills: dict[str, list[str]] = {}
    topics: dict[str, list[str]] = {}
    for topic, location, keywords in routing_rows(summary):
        words = [topic, *(k.strip() for k in keywords.split(",") if k.strip())]
        if (skill := _SKILL_LOCATION.search(location)) is not None:
            skills.setdefault(skill[1], []).extend(words)
        elif (cluster := _MEMORY_LOCATION.search(location)) is not None:
            topics.setdefault(cluster[1].strip(), []).extend(words)
    entries: dict[str, tuple[str, ...]] = {}
    clusters = cluster_keywords(memory_md)
    for topic, body in sections(memory_md).items():
        found = (topic, *clusters.get(topic, []), *topics.get(topic, []))
        for bullet in _BULLET.finditer(body):
            entries[_key(bullet[1])] = found
    return Routing({k: tuple(v) for k, v in skills.items()}, entries)


def _key(content: str) -> str:
    return " ".join(content.split()).casefold()


def note_items(vault: Vault, world: World, character: Character) -> list[Item]:
    role, name = character.occupation, character.name
    return [Item(f"note:{note.title}", "note", _newest_part(note.body), f"note '{note.title}'",
                 (), note.title, note.sim, name, role)
            for note in vault.notes(character.folder).all()]  # fmt: skip


def entry_item(entry: Entry, character: Character, routed: tuple[str, ...] = ()) -> Item:
    """``entry`` as an item; ``routed``: the words its MEMORY.md cluster adds."""
    return Item(f"entry:{entry.id}", "entry", entry.content,
                f"knowledge {entry.id} ({entry.type})", (*entry.tags, *routed),
                entry.tags[0] if entry.tags else "", entry.updated.sim, character.name,
                character.occupation, entry.type)  # fmt: skip


def _skills(vault: Vault, world: World, character: Character) -> list[Item]:
    store = vault.handbook(character.folder)
    try:
        state = store.state()
        when = state.updated.sim if state else None
        found = []
        routes = routing(vault, character).skills
        for skill in store.skills():
            text = store.skill(skill) or ""
            front = skill_front_matter(text)
            steps = " ".join(sections(text).get("Procedure", "").split())
            line = f"{front.get('description', '').strip(chr(34))} Steps: {steps}".strip()
            found.append(Item(f"skill:{skill}", "skill", line, f"skill {skill}",
                              (*skill_keywords(text), *routes.get(skill, ())), skill, when,
                              character.name,
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
