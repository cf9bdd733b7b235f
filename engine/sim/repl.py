"""``mudsim play``: the world as an interactive text prompt, with line history."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path

from engine.commands.helpers import describe_room
from engine.sim.simulation import Simulation
from engine.world.events import Event

QUIT_WORDS = {"quit", "exit", "@quit"}


def run_repl(world_file: Path, vault_dir: Path, as_name: str | None) -> None:
    sim = Simulation.open(vault_dir, world_file)
    try:
        me = sim.character(as_name)
        history = _setup_history(vault_dir / ".play-history")

        def show(event: Event) -> None:
            if event.room_id == me.location and event.actor_id != me.id:
                print(event.text)

        sim.listeners.append(show)
        print(f"You are {me.name}, in {sim.world.name}. Type 'help' for commands, 'quit' to leave.")
        print(
            "(The agents stay still in this version: they start thinking once an LLM is connected.)"
        )
        print(describe_room(sim.world, sim.world.rooms[me.location], me))
        while True:
            try:
                line = input(f"{me.name}> ")
            except EOFError:
                print()
                break
            except KeyboardInterrupt:
                print()
                break
            if line.strip().lower() in QUIT_WORDS:
                break
            if not line.strip():
                continue
            print(sim.execute(me, line).shown)
            sim.save()
        if history is not None:
            history()
        sim.save()
        print("Saved. Goodbye.")
    finally:
        sim.close()


def _setup_history(path: Path) -> Callable[[], None] | None:
    """Enable arrow-key history when reading from a terminal; return a saver, or None."""
    if not sys.stdin.isatty():
        return None
    try:
        import readline
    except ImportError:
        return None
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)
    return lambda: readline.write_history_file(path)
