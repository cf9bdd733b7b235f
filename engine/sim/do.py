"""``mudsim do``: run commands as one character against the saved world, print each
result, wait (bounded) for the memory compactions they started, save.

Compaction uses the LLM the settings name (``MUDSIM_LLM_URL``, ``config/llm.md``, else
``http://localhost:11434``, else the embedded model if installed) with a single attempt
per chunk: ``do`` never fails
because that LLM is out of reach, the compaction simply stays pending for the next run.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, TextIO

from engine.errors import MudsimError
from engine.llm.connect import (
    build_dispatcher,
    choose_llm,
    choose_model,
    named_model,
    settle_default,
)
from engine.llm.dispatcher import Dispatcher, RetryPolicy
from engine.llm.model_identity import FAKE_MODEL, model_digests
from engine.memory.waterfall import compaction_due
from engine.sim.simulation import Simulation

SETTLE_TIMEOUT = 30.0
"""Seconds ``do`` waits for compactions it started."""


def summarizer_models(
    sim: Simulation,
    flag: str | None,
    environ: Mapping[str, str],
    role: Literal["summarizer", "consolidator"] = "summarizer",
) -> dict[str, str]:
    """Character id -> the model its summaries (or knowledge passes) use."""
    config = sim.settings.llm
    return {
        c.id: choose_model(flag, environ, config, character_model=c.model, role=role)
        for c in sim.world.characters.values()
    }


async def compaction_llm(
    sim: Simulation, environ: Mapping[str, str], held: list[str] | None = None
) -> tuple[Dispatcher, dict[str, str], dict[str, str]] | None:
    """The dispatcher and each character's summarizer and consolidator models, or None
    (said why). With ``held``, which model was chosen (the embedded one, as no server
    answered) is kept there rather than said: ``do`` says it only if it asked the model
    for anything."""

    def notice(line: str) -> None:
        print(f"mudsim: {line}", file=sys.stderr, flush=True)

    def choice_notice(line: str) -> None:
        if held is None:
            notice(line)
        else:
            held.append(f"mudsim: {line}")

    try:
        named = named_model(None, environ, sim.settings.llm,
                            [c.model for c in sim.world.characters.values()])  # fmt: skip
        choice = await settle_default(choose_llm(None, environ, sim.settings.llm),
                                      choice_notice, named=named)  # fmt: skip
        retry = RetryPolicy(attempts=1, deadline=SETTLE_TIMEOUT)
        dispatcher = build_dispatcher(
            choice, retry=retry, bypass_limit=sim.settings.llm.bypass_limit
        )
    except MudsimError as exc:
        notice(f"warning: memory compaction is off: {exc}")
        return None
    models = summarizer_models(sim, None, environ)
    consolidators = summarizer_models(sim, None, environ, role="consolidator")
    sim.embedded = choice.local
    if sim.knowledge.handbook is not None:  # `handbook: auto` means the rules for it
        sim.knowledge.handbook.embedded = choice.local
    if choice.local or choice.fake:  # one model (or a script), whatever the world names
        one = choice.embedded_model if choice.local else FAKE_MODEL
        models, consolidators = dict.fromkeys(models, one), dict.fromkeys(consolidators, one)
    return dispatcher, models, consolidators


async def do_commands(
    world: Path,
    vault: Path,
    as_name: str | None,
    commands: Sequence[str],
    environ: Mapping[str, str],
    out: TextIO | None = None,
) -> None:
    out = out or sys.stdout
    sim = Simulation.open(vault, world)
    dispatcher: Dispatcher | None = None
    try:
        character = sim.character(as_name)
        chosen: list[str] = []
        llm = await compaction_llm(sim, environ, chosen)
        models: dict[str, str] = {}
        consolidators: dict[str, str] = {}
        if llm is not None:
            dispatcher, models, consolidators = llm
        sim.begin_record("do", world, {
            "summarizers": models, "consolidators": consolidators, "local": sim.embedded,
            "model_digests": model_digests(dispatcher.endpoints, [*models.values(), *consolidators.values()])
            if dispatcher else {},
            "endpoints": [e.name for e in dispatcher.endpoints] if dispatcher else [],
            "retry": False, "compaction": dispatcher is not None, "memory_bound": True,
            "players": sim.compactor.players,
        })  # fmt: skip
        if dispatcher is not None:
            sim.compactor.retry = sim.knowledge.retry = False
            sim.start_compaction(sim.recorded(dispatcher), models, consolidators)
        for index, line in enumerate(commands):
            await sim.gate("input")
            result = sim.execute(character, line)
            if len(commands) > 1:
                print(f"{'' if index == 0 else chr(10)}> {line}", file=out)
            print(result.shown, file=out)
        await sim.settle_memory(SETTLE_TIMEOUT)
        if dispatcher is not None and any(dispatcher.fairness.granted.values()):
            for line in chosen:  # the model was asked: say which (issue 46)
                print(line, file=sys.stderr, flush=True)
        pending = [m.character.name for m in sim.minds.values()
                   if compaction_due(m.count, m.boundary, m.windows)]  # fmt: skip
        if pending and dispatcher is not None:
            print(
                f"mudsim: memory compaction pending for {', '.join(pending)} "
                f"({sim.compactor.last_failure or 'not finished in time'}); it continues next run",
                file=sys.stderr,
            )
        await sim.checkpoint()
        sim.end_record("done")
    finally:
        if dispatcher is not None:
            await dispatcher.aclose(grace=0)
        sim.close()
