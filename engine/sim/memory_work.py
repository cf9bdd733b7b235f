"""A simulation's memory work: the background workers that compact memories
(``Compactor``), run knowledge passes and write handbooks (``KnowledgePasses``,
``HandbookWriter``) and dream (``Dreams``), how they are made, started with an LLM,
settled, wound down, cut and left at a stop, and ``@memory-status``.

Functions of a ``Simulation``; its methods of the same names (``start_compaction``,
``settle_memory``, ``wind_down_memory``, ``memory_in_progress``, ``leave_memory_work``,
``cut_memory_short``, ``memory_status``, ``handbook_agent``, ``warm_prompt``) call them.
The workers themselves stay the simulation's attributes (``compactor``, ``knowledge``,
``dreams``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from engine.agents.compactor import Compactor
from engine.agents.dreams import Dreams
from engine.agents.handbook_writer import HandbookWriter
from engine.agents.knowledge_pass import KnowledgePasses
from engine.agents.knowledge_status import knowledge_info
from engine.agents.memory import MemoryStream
from engine.agents.thinker import Generator
from engine.commands.helpers import join_names
from engine.memory.handbook_rules import Agent
from engine.memory.record import MemoryKind
from engine.memory.status import MemoryStatus
from engine.sim.acting import remember
from engine.sim.prompting import build_prompt, summary_chars
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation


# -- making the workers (``Simulation.__init__``) -------------------------------------
def make_compactor(sim: Simulation) -> Compactor:
    """Memory compaction; idle (everything pending) until ``start_compaction``."""
    settings = sim.settings
    return Compactor(
        llm=None, models={}, options=settings.llm.options_for("summarizer"),
        save_state=sim._save_state, supervisor=sim.supervisor,
        constrain=getattr(settings.llm.profiles.get("summarizer"), "constrain", None),
        summary_chars=summary_chars(settings), urgent=sim.memory_gate.urgent,
        committed=lambda _mind: sim.memory_gate.changed(),
        names=lambda mind: summary_names(sim, mind.character),
        players=settings.memory_compaction.players or "llm",
        notice=lambda line: sim.warn(f"memory: {line}"), note=sim.note,
    )  # fmt: skip


def summary_names(sim: Simulation, character: Character) -> list[str]:
    """What ``character``'s summaries may name besides its memories: its profile and
    description, and the world's rooms, objects and characters (the gate's grounding)."""
    world = sim.world
    return [
        character.profile, character.description, character.occupation, character.goal,
        world.name, *(room.name for room in world.rooms.values()),
        *(name for thing in world.things.values() for name in (thing.name, *thing.aliases)),
        *(other.name for other in world.characters.values()),
    ]  # fmt: skip


def make_knowledge(sim: Simulation) -> KnowledgePasses:
    """Knowledge passes; idle until ``start_compaction``. Their handbook writer is added
    by ``make_handbook_writer``."""
    settings = sim.settings
    consolidator = settings.llm.profiles.get("consolidator")
    options = settings.llm.options_for("consolidator")
    return KnowledgePasses(
        sim.vault, llm=None, models={}, options=options, clock=lambda: sim.clock.reading(),
        every=settings.memory_compaction.consolidate_every,
        enabled=settings.memory_compaction.knowledge,
        context_tokens=settings.memory_compaction.knowledge_context
        or int(options.get("num_ctx", 8192)),
        constrain=consolidator.constrain if consolidator and consolidator.constrain
        is not None else True,
        supervisor=sim.supervisor, committed=lambda mind: refresh_soon(sim, mind),
    )  # fmt: skip


def make_handbook_writer(sim: Simulation) -> HandbookWriter:
    """Writes each agent's handbook after its passes (the rules until there is an LLM)."""
    settings = sim.settings
    return HandbookWriter(
        describe=sim.handbook_agent, clock=lambda: sim.clock.reading(),
        options=sim.knowledge.options, method=settings.memory_compaction.handbook,
        constrain=sim.knowledge.constrain,
    )  # fmt: skip


def make_dreams(sim: Simulation) -> Dreams:
    """``dream``: at the consolidator's priority; without an LLM, made by rules."""
    settings = sim.settings
    return Dreams(
        sim.vault, clock=lambda: sim.clock.reading(),
        remember=lambda mind, text: remember_dream(sim, mind, text),
        options=sim.knowledge.options, interval=settings.memory_compaction.dream_interval,
        constrain=sim.knowledge.constrain, supervisor=sim.supervisor,
    )  # fmt: skip


def remember_dream(sim: Simulation, mind: MemoryStream, text: str) -> None:
    """A dream, remembered by its dreamer as a thought."""
    remember(sim, mind.character, MemoryKind.THOUGHT, f"You dream: {text}")


def refresh_soon(sim: Simulation, mind: MemoryStream) -> None:
    """Bring ``mind``'s retrieval index up to date now, in a task, after a commit that
    changed what it can recall: its next turn then finds the index current."""
    if mind.character.type != "agent":
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return  # no loop (the play REPL): its next turn reads what changed
    sim.supervisor.spawn(sim.recollection.refresh(mind.character),
                         name=f"retrieval index of {mind.character.name}")  # fmt: skip


# -- running them ---------------------------------------------------------------------
def start_compaction(
    sim: Simulation, llm: Generator, models: dict[str, str],
    consolidators: dict[str, str] | None = None,
) -> None:  # fmt: skip
    """Compact with ``llm`` from now on (character id -> summarizer model; knowledge
    passes use ``consolidators``, default the same), and start what is already due
    (a backlog left by an earlier run catches up)."""
    sim.compactor.llm = sim.knowledge.llm = llm
    sim.compactor.models = models
    sim.compactor.summary_chars = summary_chars(sim.settings, sim.token_counter)
    sim.knowledge.models = consolidators if consolidators is not None else models
    if sim.knowledge.handbook is not None:
        sim.knowledge.handbook.llm = llm
        sim.knowledge.handbook.models = sim.knowledge.models
    sim.dreams.llm, sim.dreams.models = llm, sim.knowledge.models
    for mind in sim.minds.values():
        sim.compactor.poke(mind)
        sim.knowledge.poke(mind)


async def settle_memory(sim: Simulation, within: float) -> None:
    """``do``: let the compactions and knowledge passes started finish (at most
    ``within`` s each), then stop the rest."""
    await sim.gate("settle")
    sim.note("settle")
    await sim.compactor.settle(within)
    await sim.knowledge.settle(within)
    await sim.dreams.drain(within)


async def wind_down_memory(
    sim: Simulation, grace: float | None, *, say: Callable[[str], None] | None = None,
    passes: bool = True,
) -> None:  # fmt: skip
    """The end of a run: a knowledge pass for each agent with anything new, then
    compactions and passes in progress get ``grace`` s (None: as long as they take,
    or until ``cut_memory_short``; ``say`` then hears what is waited for); the rest
    waits for the next run. A stopped run (``passes`` False) starts no pass and cuts
    the passes and dreams in progress (``leave_memory_work``): only summary calls get
    the grace."""
    await sim.gate("wind-down")
    sim.note("wind-down", **({} if passes else {"passes": False}))
    if passes:
        sim.knowledge.at_run_end(list(sim.minds.values()))
    else:
        sim.leave_memory_work(note=False)
    work = sim.memory_in_progress()
    if grace is None and say is not None and work:
        say(work)
    await asyncio.gather(
        sim.compactor.drain(grace), sim.knowledge.drain(grace), sim.dreams.drain(grace)
    )


def memory_in_progress(sim: Simulation, *, summaries: bool = True) -> str:
    """The summary calls (unless not ``summaries``), knowledge passes and dreams in
    progress, in words ("" if none)."""
    counts = ((sim.compactor.calls_in_flight if summaries else 0, "summary call",
               "summary calls"),
              (len(sim.knowledge.workers), "knowledge pass", "knowledge passes"),
              (len(sim.dreams.workers), "dream", "dreams"))  # fmt: skip
    return join_names([f"{n} {one if n == 1 else many}" for n, one, many in counts if n], empty="")


def leave_memory_work(sim: Simulation, *, note: bool = True) -> None:
    """A stop: the knowledge passes and dreams in progress are cut now and no more
    start (what they have not committed, their handbooks too, is left for the next
    run: its passes read every memory since the last committed one). ``note``: the
    run's record says where (a replay cuts at the same place)."""
    if note:
        sim.note("leave-memory-work")
    sim.knowledge.stopping = True
    sim.knowledge.cut()
    sim.dreams.cut()


def cut_memory_short(sim: Simulation) -> None:
    """Stop the compactions, knowledge passes and dreams in progress now, as the end
    of a grace does: what they have not committed is left for the next run."""
    sim.compactor.cut()
    sim.knowledge.cut()
    sim.dreams.cut()


def memory_status(sim: Simulation, character: Character) -> MemoryStatus:
    """``@memory-status`` of ``character``: its memory, and its knowledge bank."""
    mind = sim.minds[character.id]
    status = mind.status()
    if character.type != "agent":
        return status
    info = knowledge_info(
        sim.knowledge.store(mind), memories=mind.count, every=sim.knowledge.every,
        known=sim.knowledge.agent(mind),
    )  # fmt: skip
    return replace(status, knowledge=info)


def handbook_agent(sim: Simulation, mind: MemoryStream) -> Agent:
    """Who ``mind``'s character is, as its handbook's rules see it."""
    character = mind.character
    others = tuple(c.name for c in sim.world.characters.values() if c.id != character.id)
    verbs = frozenset(n for c in sim.registry.commands.values() for n in c.names)
    return Agent(character.name, character.profile, character.description, others, verbs)


async def warm_prompt(
    sim: Simulation, mind: MemoryStream, after: Callable[[], MemoryStream]
) -> None:
    """Evaluate the prompt the agent's next turn will send, its memory read as
    ``after`` gives it (``Compactor.warm``: set for the embedded model, whose prefix
    cache keeps it); nothing without a thinker."""
    link, llm = sim.llm, sim.compactor.llm
    thinker = link.thinkers.get(mind.character.id) if link is not None else None
    if thinker is not None and llm is not None:
        character = mind.character
        await llm.generate(thinker.warm_request(lambda: build_prompt(sim, character, after())))
