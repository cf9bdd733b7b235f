"""``mudsim agent new``: a new agent in a seeded vault, starting with what others learned;
and ``mudsim recall``: what an agent brings to mind for some words, from the shell.

A new agent stands in the world's first room with a profile (given, or made from its
role), its role as its ``occupation``, its keywords as its ``tags`` and, when the world's
agents all share their memory windows, those windows too. Its knowledge bank
is seeded with the named agents' entries (or every agent's) that the retrieval scorer
ranks best for its role and keywords, within ``BOOTSTRAP_TOKENS``: each copied entry
gets a new id and names, in ``source.copied_from``, the agent and the entry it came
from. The seeding is one knowledge pass (its log lines, the bank, its record), so
``@knowledge undo`` takes it back. Like ``world apply`` it takes the vault's lock, and
the new character's ``agent.md`` is written before ``world.yaml`` (the commit point).
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from engine.errors import UnsafeNameError, UsageError, VaultError
from engine.faults import crash_point
from engine.memory.knowledge import Entry, Source, Stamp, new_entry_id
from engine.memory.knowledge_ops import Change
from engine.memory.record import utc_now
from engine.memory.retrieval import Chosen, Index, Item, Query, line, situation_keywords
from engine.sim.recollection_items import gather_items
from engine.sim.world_apply import occupied_folders, unborn_seed
from engine.vault.knowledge_store import KnowledgeStore, PassRecord
from engine.vault.vault import MemoryState, Vault
from engine.world.clock import format_reading
from engine.world.loader import load_world_file
from engine.world.model import Character
from engine.world.world import World

BOOTSTRAP_TOKENS: Final = 2_000
"""What a new agent's bank is seeded with at most (by the chars/4 estimate)."""


def new_agent(
    world_file: Path, vault_dir: Path, name: str, *, role: str = "",
    keywords: Sequence[str] = (), sources: Sequence[str] = (), profile: str | None = None,
) -> list[str]:  # fmt: skip
    """Add the agent ``name`` and seed its bank (see the module); the report's lines."""
    load_world_file(world_file)  # a broken world file: one line, nothing touched
    vault = _seeded(vault_dir)
    lock = vault.lock()
    try:
        world = vault.load_world()
        character = _character(vault, world, name, role, keywords, profile)
        donors = _donors(world, sources)
        chosen = _chosen(vault, world, donors, character)
        store = _seed_plan(vault, world, character, chosen)  # planned, not applied
        crash_point("knowledge-seed-before-world")
        world.add_character(character)
        try:
            vault.save_world(world)  # agent.md, then world.yaml: the commit
        except BaseException:
            _drop_seed(store)
            raise
        crash_point("knowledge-seed-after-world")
        vault.write_state(character.folder, MemoryState())
        if store is not None:
            store.recover()  # the seed applied (or by the next reader, after a kill)
        copied = len(chosen)
    finally:
        lock.release()
    room = world.rooms[character.location].name
    counts = Counter(c.item.agent for c in chosen)
    whose = ", ".join(f"{agent} ({n})" for agent, n in counts.most_common())
    lines = [f"Added {character.name} (agent) in {room}, {vault_dir}."]
    if copied:
        lines.append(f"Seeded {copied} knowledge entr{'ies' if copied != 1 else 'y'} from {whose}:")
        lines += [f"  {line(c.item)}  ({c.item.agent}, {c.item.key.removeprefix('entry:')})"
                  for c in chosen]  # fmt: skip
    else:
        lines.append(
            f"Nothing to seed its knowledge with: {_why_nothing(vault, world, donors, character)}."
        )
    return lines


def _why_nothing(vault: Vault, world: World, donors: list[Character], new: Character) -> str:
    """Why no entry was seeded: no donor, donors whose banks are empty, or no match."""
    if not donors:
        return "there is no other agent"
    names = [d.name for d in donors]
    if not any(_entries(vault, world, d) for d in donors):
        return f"{names[0]} knows nothing yet" if len(names) == 1 \
            else f"{', '.join(names)} know nothing yet"  # fmt: skip
    who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    words = " ".join([new.occupation, *new.tags]).strip()
    return f"no entry of {who} matches " + (f"'{words}'" if words else "its profile")


def _entries(vault: Vault, world: World, donor: Character) -> list[Item]:
    return [item for item in gather_items(vault, world, donor) if item.kind == "entry"]


def recall_report(vault_dir: Path, agent: str, words: str, limit: int = 5) -> list[str]:
    """``mudsim recall``: what ``agent`` brings to mind for ``words``, read without the lock."""
    vault = _seeded(vault_dir)
    world = vault.load_world()
    (character,) = world.characters_named(agent)
    query = Query(situation_keywords(words), world.clock.reading(), character.occupation,
                  character.prioritize_recent, character.name)  # fmt: skip
    found = Index(gather_items(vault, world, character)).best(
        query, limit, start=format_reading(world.clock.start)
    )
    if not found:
        return [f"Nothing {character.name} knows mentions '{words}'."]
    lines = [f"What {character.name} recalls about '{words}':"]
    lines += [f"{line(c.item)}  ({c.item.origin}; {c.scores()})" for c in found]
    return lines


def _seeded(vault_dir: Path) -> Vault:
    vault = Vault(vault_dir)
    if vault_dir.exists() and not vault_dir.is_dir():
        raise VaultError(f"the vault {vault_dir} is a file, not a folder")
    if not vault.is_seeded:
        raise VaultError(f"{vault_dir} is not a seeded vault (no world/world.yaml)")
    return vault


def _character(vault: Vault, world: World, name: str, role: str, keywords: Sequence[str],
               profile: str | None) -> Character:  # fmt: skip
    name = " ".join(name.split())
    if not name:
        raise UsageError("a new agent needs a name")
    if any(c.name.casefold() == name.casefold() for c in world.characters.values()):
        raise UsageError(f"there is already a character called {name!r} in {vault.root}")
    what = f"a {role.strip()}" if role.strip() else "someone"
    character = Character(
        id="", name=name, type="agent", location=next(iter(world.rooms)),
        profile=" ".join((profile or f"A newcomer, {what}, keen to learn.").split()),
        occupation=role.strip(), tags=[k.strip() for k in keywords if k.strip()],
    )  # fmt: skip
    windows = {(c.immediate_window, c.recent_window) for c in world.characters.values()
               if c.type == "agent"}  # fmt: skip
    if len(windows) == 1:  # the world's agents share their windows: the newcomer too
        character.immediate_window, character.recent_window = windows.pop()
    try:
        folder = character.folder
    except UnsafeNameError as exc:
        raise UsageError(str(exc)) from exc
    taken = {c.folder.lower() for c in world.characters.values()}
    if folder.lower() in taken or folder in occupied_folders(vault, world):
        raise UsageError(f"the folder agents/{folder} is taken: choose another name")
    character.id = folder.lower()
    if character.id in world.rooms or character.id in world.things:
        character.id = f"{character.id}-agent"
    return character


def _donors(world: World, sources: Sequence[str]) -> list[Character]:
    agents = [c for c in world.characters.values() if c.type == "agent"]
    if not sources:
        return agents
    donors: list[Character] = []
    for source in sources:
        (found,) = world.characters_named(source)
        if found.type != "agent":
            raise UsageError(f"{found.name} is a player and has no knowledge bank to share")
        if found not in donors:
            donors.append(found)
    return donors


def _chosen(vault: Vault, world: World, donors: list[Character], new: Character) -> list[Chosen]:
    items = [item for donor in donors for item in _entries(vault, world, donor)]
    query = Query(situation_keywords(new.occupation, *new.tags, new.profile), world.clock.reading(),
                  new.occupation, agent=new.name)  # fmt: skip
    # one keyword in common is enough to seed an entry (by itself it places it nowhere)
    selection = Index(items).select(query, BOOTSTRAP_TOKENS, start=format_reading(world.clock.start),
                                    places=("fact", "hypothesis", "gap"), unplaced="fact")  # fmt: skip
    return selection.chosen


def _drop_seed(store: KnowledgeStore | None) -> None:
    """The seed of an agent whose commit failed: its plan goes (it never existed)."""
    if store is not None:
        shutil.rmtree(store.folder, ignore_errors=True)


def _seed_plan(
    vault: Vault, world: World, character: Character, chosen: list[Chosen]
) -> KnowledgeStore | None:
    """The new agent's bank, planned as one pass's commit (``KnowledgeStore.plan_pass``)
    and not yet applied: it is applied once the character is committed, so a kill leaves
    both or neither. None when there is nothing to seed."""
    folder = vault.agent_dir(character.folder)
    if unborn_seed(folder):
        shutil.rmtree(folder / "knowledge")  # an earlier try's, cut short before its commit
    if not chosen:
        return None
    fiction = vault.settings().memory_compaction.fiction_secrets  # copies keep what they held
    store = KnowledgeStore(vault.agent_dir(character.folder) / "knowledge", allow_fiction=fiction)
    donors = {c.name: c for c in world.characters.values()}
    banks: dict[str, dict[str, Entry]] = {}
    now = Stamp(sim=world.clock.reading(), at=utc_now())
    pass_id = store.new_pass_id()
    bank: list[Entry] = []
    changes: list[Change] = []
    for c in chosen:
        donor = donors[c.item.agent]
        if donor.name not in banks:
            entries = KnowledgeStore(vault.agent_dir(donor.folder) / "knowledge").load()
            banks[donor.name] = {e.id: e for e in entries}
        original = banks[donor.name][c.item.key.removeprefix("entry:")]
        copy = Entry(
            id=new_entry_id([e.id for e in bank]), type=original.type, content=original.content,
            tags=original.tags, created=now, updated=now,
            source=Source(passes=[pass_id], copied_from=[f"{donor.name}:{original.id}"]),
        )  # fmt: skip
        bank.append(copy)
        changes.append(Change(op="ADD", id=copy.id, after=copy))
    record = PassRecord.model_validate({
        "pass": pass_id, "status": "changed", "started": now, "finished": now,
        "candidates": len(bank), "operations": {"ADD": len(bank)},
        "fallback": "seeded from other agents (mudsim agent new)",
    })  # fmt: skip
    store.plan_pass(pass_id, "GENEROUS", changes, record,
                    [(e.type, e.content, e.tags) for e in bank])  # fmt: skip
    return store
