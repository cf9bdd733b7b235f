"""``mudsim play``: the world at a text prompt, played as one character.

Agents keep thinking while you play: the LLM and models are chosen as for ``run``
(``--llm``, ``--model``, ``--seed``; ``--turns N`` lets each agent take N turns, then
they stand still while you play on). What happens in your room is printed as it
happens, between your commands. ``--frozen`` plays a world where only you act: no
agent thinks and no LLM is asked for anything (memory compaction waits for the next
run). If no LLM answers and none was named with ``--llm`` on this command line, play
uses the embedded model as ``run`` does, and goes on frozen (said in one line) only
without it; an ``--llm`` that does not answer is exit 3, as for ``run``.

Ownership: the agents run in a task of a ``TaskGroup`` beside the player's loop; the
player's lines come from ``engine.sim.play_input`` (a reader thread hands them to the
loop). The end of input, ``quit``, or Ctrl-C ends the player's loop; then the agents
stop as at a headless run's first Ctrl-C (``RunEnding``: turns and summary calls in
progress finish within ``SHUTDOWN_GRACE`` seconds, knowledge passes wait for the next
run; a second Ctrl-C cuts them short), every task is awaited, and the vault is saved.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping

from engine.agents.thinker import Turn
from engine.commands.helpers import describe_room
from engine.errors import LLMError
from engine.llm.dispatcher import Dispatcher
from engine.sim.play_input import LineSource, open_lines
from engine.sim.run import RunOptions, connect, start_agents
from engine.sim.run_ending import RunEnding, graceful_interrupts, wind_down
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation
from engine.world.events import Event
from engine.world.model import Character

QUIT_WORDS = {"quit", "exit", "@quit"}
HELP = "Type 'help' for commands, 'quit' to leave."


async def play(options: RunOptions, environ: Mapping[str, str], *, frozen: bool = False) -> None:
    sim = Simulation.open(options.vault, options.world)
    try:
        me = sim.character(options.as_name)  # an unknown --as is exit 2 before any LLM
        live = None if frozen else await _connect(sim, options, environ)
        if live is None:  # no agents: the record has the player's inputs alone
            sim.begin_record("play", options.world, {"models": {}, "local": False,
                                                     "seed": options.seed,
                                                     "compaction": False,
                                                     "memory_bound": True})  # fmt: skip
        lines = open_lines(options.vault / ".play-history")
        try:
            await _session(sim, me, lines, live, options)
        finally:
            lines.close()
    finally:
        sim.close()


async def _connect(
    sim: Simulation, options: RunOptions, environ: Mapping[str, str]
) -> tuple[Dispatcher, dict[str, str]] | None:
    """The LLM for the agents, or None (said in one line) when none answers and none was
    named with ``--llm``."""
    try:
        return await connect(sim, options, environ, kind="play")
    except LLMError as exc:
        if options.llm is not None:
            raise
        print(f"mudsim: the agents stay still, only you act: {exc}", file=sys.stderr, flush=True)
        return None


def banner(sim: Simulation, me: Character) -> str:
    """What ``play`` opens with: who you are, and whether the agents think (``sim.llm``)."""
    start = f"You are {me.name}, in {sim.world.name}."
    if sim.llm is None:
        return f"{start} Frozen world: only you act. {HELP}"
    agents = len(sim.llm.thinkers)
    backend = ", ".join(e.name for e in sim.llm.dispatcher.endpoints)
    models = ", ".join(sorted(set(sim.llm.models.values())))
    model = f", model {models}" if models else ""
    return (
        f"{start} Agents keep thinking while you play ({agents} agent{'' if agents == 1 else 's'}, "
        f"backend {backend}{model}). {HELP}"
    )


async def _session(
    sim: Simulation,
    me: Character,
    lines: LineSource,
    live: tuple[Dispatcher, dict[str, str]] | None,
    options: RunOptions,
) -> None:
    scheduler = None if live is None else start_agents(sim, live[0], live[1], options.seed)
    ending = None if scheduler is None else RunEnding(sim, scheduler, say_idle=False)

    def press() -> None:  # Ctrl-C: the first stops as the end of input does, a second cuts
        lines.interrupt()
        if ending is not None:
            ending.press()

    with graceful_interrupts(press, press, say=None):
        try:
            await _play_alongside(sim, me, lines, scheduler, ending, options.turns)
        finally:
            if live is not None:
                await wind_down(sim, scheduler, live[0], ending)
            await sim.checkpoint()
            sim.end_record("the player left")
    print("Saved. Goodbye.", flush=True)


async def _play_alongside(
    sim: Simulation,
    me: Character,
    lines: LineSource,
    scheduler: Scheduler | None,
    ending: RunEnding | None,
    turns: int | None,
) -> None:
    """The player's loop, with the agents (if any) running beside it in a task group.
    When the player leaves, the agents stop as at a first Ctrl-C (``RunEnding``): what
    is waited for, and for how long at most, is said."""

    def show(event: Event) -> None:
        if event.room_id == me.location and event.actor_id != me.id:
            lines.show(event.text)

    sim.listeners.append(show)
    if scheduler is not None:
        scheduler.listen(lambda happening: _skipped(happening, lines))
    print(banner(sim, me), flush=True)
    print(describe_room(sim.world, sim.world.rooms[me.location], me), flush=True)
    try:
        async with asyncio.TaskGroup() as group:
            if scheduler is not None:
                group.create_task(_agents(scheduler, turns, lines), name="agents")
            await _player(sim, me, lines)
            if scheduler is not None and ending is not None:
                if not ending.presses:
                    ending.press()  # the player left: the agents stop
                await scheduler.finish(ending.remaining())  # ends the agents' task
    except BaseExceptionGroup as failed:  # one line for the user, as anywhere else
        raise failed.exceptions[0] from failed


async def _agents(scheduler: Scheduler, turns: int | None, lines: LineSource) -> None:
    await scheduler.run(turns)
    if turns is not None and not scheduler.stopping:
        lines.show(f"(Every agent has taken its {turns} turns; they stand still now.)")


async def _player(sim: Simulation, me: Character, lines: LineSource) -> None:
    """Run the player's lines until the end of input, ``quit`` or an interrupt."""
    while True:
        line = await lines.next_line(f"{me.name}> ")
        if line is None or line.strip().lower() in QUIT_WORDS:
            return
        if not line.strip():
            continue
        await sim.gate("input")  # the player's line takes its exact place in the record
        lines.show(sim.execute(me, line).shown)
        sim.save_now()


def _skipped(happening: Happening, lines: LineSource) -> None:
    """A turn that went wrong is one line in parentheses (the room saw nothing)."""
    if isinstance(happening, Turn) and happening.error is not None:
        lines.show(f"({happening.agent}'s turn was skipped: {happening.error})")
