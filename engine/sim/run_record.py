"""A simulation's part in its run's record (``engine.sim.recorder``): beginning and
ending the record, the gates and events it keeps (a backoff's waking, a checkpoint's
save, an agent's turn), and the LLM calls it writes.

Functions of a ``Simulation``; its methods of the same names (``begin_record``,
``end_record``, ``save_now``, ``checkpoint``, ``backoff``, ``recorded``, ``turn_of``,
``turn_starting``, ``turn_finished``, ``journal_lengths``) call them. The record itself
is ``Simulation.recorder`` (None: not recorded); ``note`` and ``gate`` stay on the
simulation, the two calls everything else makes.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import version, wallclock
from engine.agents.thinker import Generator, Turn
from engine.errors import MudsimError
from engine.memory.record import utc_now
from engine.memory.secrets import redact, redact_value
from engine.provenance import code_identity
from engine.sim.recorder import RecordingLLM, RunRecorder
from engine.vault.run_store import RunFolder, file_sha256

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation


@dataclass
class OpenRecord:
    """What a record being written keeps besides its recorder (``begin_record``)."""

    stack: contextlib.ExitStack | None = None
    """Undoes what the record hooked (the wall clock's draws) when it ends."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The record's ``meta.json`` as written at its start."""


def save_now(sim: Simulation) -> None:
    """Save at once, in the record too (``play`` after each of the player's lines)."""
    sim.note("save")
    sim.save()


def backoff(sim: Simulation, what: str) -> Callable[[float], Awaitable[None]]:
    """A backoff's sleep for ``what`` (compaction, knowledge): its waking is a gate of
    the run's record (``wake``), so a retry's work takes its exact place."""
    count = itertools.count()

    async def sleep(seconds: float) -> None:
        key = f"{what}#{next(count)}"
        await sim.wait_for(seconds)
        if sim.recorder is not None:
            await sim.recorder.gate("wake", key)
            sim.recorder.event("wake", key=key)

    return sleep


async def checkpoint(sim: Simulation) -> None:
    """Save at the end of a run, at its place in the record (saved even when the
    wait for that place is cut short)."""
    try:
        await sim.gate("save")
    finally:
        sim.note("save")
        sim.save()


def begin_record(sim: Simulation, kind: str, world_file: Path | None, meta: dict[str, Any]) -> None:
    """Record this run (``config/record.md``: ``record``) in ``runs/<id>/``: its start,
    then every call, event and draw (``engine.sim.recorder``)."""
    config = sim.settings.record
    if not config.record or sim.recorder is not None:
        return
    try:
        run = RunFolder.create(sim.vault.root, kind)
        run.save_start(sim.vault.root, world_file)
        sim.open_record.meta = {
            "id": run.id, "kind": kind, "started": utc_now(), "ended": None,
            "world_file": str(world_file) if world_file else None,
            "world_sha256": file_sha256(world_file) if world_file else None,
            "version": version(), **code_identity().to_json(), "clock": sim.clock.reading(),
            "settings": redact_value(sim.settings.model_dump(mode="json")),
            "journals_start": journal_lengths(sim),
            **redact_value(meta),  # an endpoint URL with a password in it
        }  # fmt: skip
        run.write_meta(sim.open_record.meta)
    except (OSError, MudsimError) as exc:  # the run goes on, unrecorded
        sim.warn(f"this run is not recorded: {exc}")
        return
    prices = {redact(e.url): (e.price_in, e.price_out) for e in sim.settings.llm.endpoints}
    recorder = RunRecorder(run, prompts=config.record_prompts, training=config.training,
                           prices=prices, warn=lambda message: sim.warn(message))  # fmt: skip
    stack = contextlib.ExitStack()
    stack.enter_context(wallclock.listening(recorder.draw))
    sim.recorder, sim.open_record.stack = recorder, stack
    for character_id in sorted(sim.world.asleep):  # asleep before the record began
        sim.note("presence", actor=character_id, asleep=True)


def end_record(sim: Simulation, reason: str, **meta: object) -> None:
    """Close the record: its last event, the vault's end state, why it ended."""
    recorder, stack = sim.recorder, sim.open_record.stack
    if recorder is None or stack is None:
        return
    recorder.event("end", reason=reason, sim=sim.clock.reading())
    sim.recorder = sim.open_record.stack = None
    sim.last_costs = dict(recorder.costs)
    stack.close()
    try:
        recorder.close()
        if recorder.broken is None:  # an incomplete record has no end to replay to
            recorder.run.save_end(sim.vault.root)
        costs = {name: cost.to_json() for name, cost in sorted(recorder.costs.items())}
        ended = {"ended": utc_now(), "reason": reason, "events": recorder.count,
                 "journals_end": journal_lengths(sim),
                 "costs": costs, "training": dict(recorder.captured),
                 "incomplete": recorder.broken, **meta}  # fmt: skip
        recorder.run.write_meta({**sim.open_record.meta, **ended})
    except (OSError, MudsimError) as exc:
        sim.warn(f"the run record {recorder.run.folder} could not be closed: {exc}")


def journal_lengths(sim: Simulation) -> dict[str, int]:
    """Character name -> how many records its journal holds (the next one's seq): a
    run's record keeps them at its start and end, so each memory knows its run."""
    return {mind.character.name: mind.journal.count for mind in sim.minds.values()}


def recorded(sim: Simulation, llm: Generator) -> Generator:
    """``llm``, with its calls written to the run's record when it is recorded."""
    if sim.recorder is None:
        return llm
    return RecordingLLM(llm, sim.recorder, sim.turn_of)


def turn_of(sim: Simulation, name: str | None) -> int:
    """The turn an agent is in (its thinker's count; 0 for no thinker)."""
    link = sim.llm
    if link is None or name is None:
        return 0
    found = [c for c in sim.world.characters.values() if c.name == name]
    thinker = link.thinkers.get(found[0].id) if found else None
    return thinker.turns if thinker is not None else 0


async def turn_starting(sim: Simulation, agent_id: str, turn: int) -> None:
    """An agent's turn begins: at its gate of the record (``turn-start``), on the record."""
    if sim.recorder is not None:
        await sim.recorder.gate("turn-start", agent_id)
        sim.recorder.turn_started(agent_id, sim.world.characters[agent_id].name, turn)


def turn_finished(sim: Simulation, agent_id: str, turn: Turn, number: int,
                  prompt: str | None, reply: str | None) -> None:  # fmt: skip
    """An agent's turn ended: on the record, and a training pair when capture is on."""
    if sim.recorder is not None:
        sim.recorder.turn_ended(agent_id, turn, number)
        room = sim.world.characters[agent_id].location
        sim.recorder.capture(turn, prompt, reply, room)
