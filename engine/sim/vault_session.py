"""A simulation's hold on its vault: opening it (the lock, the run log, the world loaded
or seeded), saving the world and every character's memory state, and closing it
(journals flushed, the lock and the run log given back).

Functions of a ``Simulation``; ``Simulation.open``, ``save`` and ``close`` call them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import MudsimError, VaultError
from engine.sim.world_apply import lacking_note, other_world_note, plan_for
from engine.vault.run_log import attach_run_log, detach_run_log
from engine.vault.vault import Vault
from engine.world.loader import load_world_file

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation


def open_simulation(
    cls: type[Simulation],
    vault_dir: Path,
    world_file: Path,
    *,
    warn: Callable[[str], None],
    notice: Callable[[str], None] | None,
) -> Simulation:
    """Own the vault, then load its world, or seed it from ``world_file`` the first
    time. A seeded vault's world wins, but ``world_file`` is still checked (a broken
    one is an error), and what it declares that the vault lacks is one line to
    ``notice`` with the ``world apply`` command that adds it; a file of another world
    (another ``name``) is one line saying so instead."""
    vault = Vault(vault_dir)
    # The world file is checked before anything is written, even the lock.
    declared = load_world_file(world_file)
    vault.refuse_foreign()  # /etc, a project folder: nothing is written there
    lock = vault.lock()
    log = None
    try:
        log = attach_run_log(vault.root)
        seeded = vault.is_seeded
        world = vault.load_world(warn=warn, clock=declared.clock) if seeded else declared
        vault.write_default_config()
        sim = cls(vault, world, vault.settings(), lock, warn=warn)
        sim.knowledge.catch_up_handbooks(list(sim.minds.values()))
        if not seeded:
            sim.save()
        elif notice is not None:
            line = other_world_note(world, declared, world_file, vault_dir) or lacking_note(
                plan_for(vault, world, declared), world_file, vault_dir
            )
            if line is not None:
                notice(line)
    except BaseException:
        if log is not None:
            detach_run_log(log)
        lock.release()
        raise
    sim.run_log = log
    return sim


def save_world_now(sim: Simulation) -> None:
    """Save the world at once (a change that must outlive a kill); a failure is a
    warning, and the next save tries again."""
    try:
        sim.vault.save_world(sim.world)
    except (OSError, MudsimError) as exc:
        sim.warn(f"the world could not be saved now ({exc}); the next save tries again")


def save(sim: Simulation) -> None:
    """Save the world, every journal and every character's memory state."""
    sim.recollection.flush()
    sim.vault.save_world(sim.world)
    for mind in sim.minds.values():
        mind.journal.sync()
        sim.vault.write_state(mind.character.folder, mind.state())


def close(sim: Simulation) -> None:
    """Flush every journal and give the vault back (does not save the world). Every
    journal is closed and the lock released even when one fails; then the first
    failure is raised. A run record still open is closed first."""
    sim.end_record("closed")
    sim.chronicle.close()
    first: VaultError | None = None
    for mind in sim.minds.values():
        try:
            mind.journal.close()
        except VaultError as exc:
            first = first or exc
    if sim.lock is not None:
        sim.lock.release()
        sim.lock = None
    if sim.run_log is not None:
        detach_run_log(sim.run_log)
        sim.run_log = None
    if first is not None:
        raise first
