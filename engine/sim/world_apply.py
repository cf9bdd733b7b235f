"""``mudsim world apply``: add to a seeded vault what its world file declares and it
lacks; and the one-line note ``run``, ``play`` and ``do`` give when there is some, or
when the world file is another world than the vault's (then no ``world apply`` hint).

The vault wins over its world file once seeded (``engine.world.additions`` says what
"lacks" means: nothing the vault has is changed or removed). Applying takes the vault's
lock like every writer and saves through the vault layer (atomic files, ``world.yaml``
the commit point: a new character's ``agent.md`` is written before it, so a cut-off
apply leaves a vault that loads, and applying again finishes it). A new character gets
what seeding gives one: ``agent.md`` and a ``memory-state.json`` with no memories yet.
``--dry-run`` reads without the lock and writes nothing.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from engine.errors import VaultError
from engine.vault.knowledge_commit import LOCK_FILE, PLAN_FILE
from engine.vault.vault import MemoryState, Vault
from engine.world.additions import Additions, apply_additions, plan_additions
from engine.world.loader import load_world_file
from engine.world.unicode_names import normalized
from engine.world.world import World

MEMORY_FILES = ("memories.jsonl", "summaries", "notes", "knowledge", "handbook")


def note_on_stderr(line: str) -> None:
    """The default notice: one line on stderr (not a warning, not an error)."""
    print(f"mudsim: note: {line}", file=sys.stderr, flush=True)


def occupied_folders(vault: Vault, world: World) -> list[str]:
    """Folders under ``agents/`` holding memories (a journal, summaries, notes, knowledge)
    of nobody in ``world``: a new character must not inherit them. A folder with only an
    ``agent.md`` (an apply cut short before its commit) is free, and so is one whose
    knowledge is only a seed's plan (``agent new`` cut short before its commit)."""
    ours = {c.folder.lower() for c in world.characters.values()}
    base = vault.root / "agents"
    try:
        entries = list(base.iterdir()) if base.is_dir() else []
    except OSError as exc:
        raise VaultError(f"cannot list {base}: {exc}") from exc
    return [
        entry.name
        for entry in entries
        if entry.name.lower() not in ours
        and any((entry / name).exists() for name in MEMORY_FILES)
        and not unborn_seed(entry)
    ]


def unborn_seed(folder: Path) -> bool:
    """``folder``'s only memory is the plan of a seed whose character was never committed."""
    knowledge = folder / "knowledge"
    if any((folder / name).exists() for name in MEMORY_FILES if name != "knowledge"):
        return False
    try:
        names = {path.name for path in knowledge.iterdir()}
    except OSError:
        return False
    return PLAN_FILE in names and names <= {PLAN_FILE, LOCK_FILE}


def plan_for(vault: Vault, present: World, declared: World) -> Additions:
    return plan_additions(declared, present, occupied_folders=occupied_folders(vault, present))


def apply_command(world_file: Path, vault_dir: Path) -> str:
    """The command that applies ``world_file`` to ``vault_dir``, ready to paste."""
    return (
        f"mudsim world apply {shlex.quote(str(world_file))} --vault {shlex.quote(str(vault_dir))}"
    )


def other_world_note(present: World, declared: World, world_file: Path, vault_dir: Path
                     ) -> str | None:  # fmt: skip
    """The one line for ``run``/``play``/``do`` when ``world_file`` is another world than
    the vault's (its ``name`` differs, NFKC and letter case aside), or None. No ``world
    apply`` hint then: applying would merge two unrelated worlds."""
    if normalized(present.name).casefold() == normalized(declared.name).casefold():
        return None
    return (
        f"{world_file} is the world {declared.name}, but {vault_dir} holds the world "
        f"{present.name}: running {present.name} as saved (a vault holds one world; give "
        f"{declared.name} a --vault of its own)"
    )


def lacking_note(plan: Additions, world_file: Path, vault_dir: Path) -> str | None:
    """The one line for ``run``/``play``/``do`` when the world file declares more than the
    vault has, or None."""
    if plan.empty:
        return None
    return (
        f"{world_file} declares {plan.counts()} that the vault lacks (the vault's world is "
        f"used as saved); add them with: {apply_command(world_file, vault_dir)}"
    )


def apply_world(world_file: Path, vault_dir: Path, *, dry_run: bool = False) -> list[str]:
    """Add what ``world_file`` declares and the vault at ``vault_dir`` lacks (or, with
    ``dry_run``, only say what that would be); the report, one line each."""
    declared = load_world_file(world_file)  # a bad file: one line, nothing touched
    vault = Vault(vault_dir)
    if vault_dir.exists() and not vault_dir.is_dir():
        raise VaultError(f"the vault {vault_dir} is a file, not a folder")
    if not vault.is_seeded:
        raise VaultError(
            f"{vault_dir} is not a seeded vault (no world/world.yaml): the first "
            f"`mudsim run`, `play` or `do` with {world_file} seeds it with everything in it"
        )
    if dry_run:
        present = vault.load_world()
        return _report(plan_for(vault, present, declared), present, world_file, vault_dir, dry_run)
    lock = vault.lock()
    try:
        present = vault.load_world(clock=declared.clock)  # the world file's, if none saved
        plan = plan_for(vault, present, declared)
        if not plan.empty:
            apply_additions(present, plan)
            vault.save_world(present)  # new agent.md files, then world.yaml (the commit)
            for character in plan.characters:
                vault.write_state(character.folder, MemoryState())
    finally:
        lock.release()
    return _report(plan, present, world_file, vault_dir, dry_run)


def _report(
    plan: Additions, world: World, world_file: Path, vault_dir: Path, dry_run: bool
) -> list[str]:
    if plan.empty:
        lines = [
            f"Nothing to add: {vault_dir} already has every room, exit, object and "
            f"character {world_file} declares."
        ]
    else:
        head = "Would add" if dry_run else "Added"
        tail = " (dry run: nothing written)" if dry_run else ""
        lines = [f"{head} to {vault_dir} from {world_file}: {plan.counts()}{tail}."]
        lines += [f"  + {line}" for line in plan.lines(_with(world, plan, dry_run))]
    lines += [f"  not added: {line}" for line in plan.refused]
    if plan.refused:
        lines.append("(The vault keeps what it has; edit the world file to add those.)")
    return lines


def _with(world: World, plan: Additions, dry_run: bool) -> World:
    """``world`` with the plan's rooms, for naming them (after a dry run too)."""
    if not dry_run:
        return world
    named = World(world.name)
    named.rooms = {**world.rooms, **{r.id: r for r in plan.rooms}}
    return named
