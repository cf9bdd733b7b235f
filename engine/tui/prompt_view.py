"""What the prompt viewer (p) shows for an agent: the last prompt sent for it, or the
one it would get now, and under it what it brings to mind with each line's scores
(never sent to a model)."""

from __future__ import annotations

import logging

from engine.agents.thinker import describe
from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation
from engine.world.model import Character

log = logging.getLogger("mudsim")


def prompt_view(sim: Simulation, character: Character, last: str | None) -> tuple[str, str]:
    """(title, text) for ``character``; ``last``: the last prompt sent for it, if any."""
    if last is not None:
        title, prompt = f"The last prompt sent for {character.name}", last
    else:
        try:
            title = f"The prompt {character.name} would get now"
            prompt = build_prompt(sim, character)
        except Exception as exc:
            log.error("%s's prompt could not be built", character.name, exc_info=exc)
            title = f"The prompt for {character.name} could not be built"
            prompt = describe(exc)
    return title, prompt + _scores(sim, character)


def _scores(sim: Simulation, character: Character) -> str:
    try:
        scored = sim.recollection.section(character, scores=True)
    except Exception as exc:
        return f"\n\n(What it brings to mind could not be scored: {describe(exc)})"
    if not scored:
        return ""
    head = "What it brings to mind now, with each line's scores (not sent to the model):"
    return "\n\n" + "\n".join([head, *scored])
