"""The actor profile's notes_tokens (within knowledge_tokens) and summary_tokens keep a
small model's prompt small."""

from __future__ import annotations

import dataclasses

from helpers import run, set_actor

from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation
from engine.vault.summaries import Summary


def test_notes_take_at_most_notes_tokens_of_the_knowledge_budget(sim: Simulation) -> None:
    things = ["The hall floor is cold stone and always damp.",
              "A brass lamp hangs by the hall stair, never lit.",
              "Tapestries of ships cover the north wall of the hall.",
              "Pat eats at the long oak table in the hall at noon.",
              "The hall clock ticks loudly and runs ten minutes fast.",
              "Muddy boots wait by the hall door every evening."]  # fmt: skip
    for n, thing in enumerate(things):
        run(sim, "Ada", f"note Hall {n} -> {thing}")
    set_actor(sim, notes_tokens=40, knowledge_tokens=1_000)
    prompt = build_prompt(sim, sim.character("Ada"))
    notes = prompt.split("## Relevant private notes\n")[1].split("\nYou are Ada in")[0]
    lines = [line for line in notes.splitlines() if line.startswith("- Hall")]
    assert 0 < len(lines) < 6
    assert sum(len(line) for line in lines) <= 40 * 4 + 60  # the estimate, plus its heading
    set_actor(sim, notes_tokens=0, knowledge_tokens=1_000)
    assert build_prompt(sim, sim.character("Ada")).count("- Hall") == 6
    set_actor(sim, knowledge_tokens=0)
    assert "## Relevant private notes" not in build_prompt(sim, sim.character("Ada"))


def test_the_summaries_are_shown_whole_from_first_word_to_last(sim: Simulation) -> None:
    """The compactor keeps summaries within summary_tokens; the prompt never cuts them
    (the long-term summary is the agent's whole history)."""
    bo = sim.character("Bo")
    mind = sim.minds["bo"]
    longterm = " ".join(f"Sentence number {i} of my long past." for i in range(60))
    recent = " ".join(f"Recent sentence {i} of mine." for i in range(30))
    mind.summaries = dataclasses.replace(
        mind.summaries,
        longterm=Summary(longterm, 0, 0, 0, "2026-11-23T00:00:00Z"),
        recent=Summary(recent, 0, 0, 0, "2026-11-23T00:00:00Z"),
    )
    prompt = build_prompt(sim, bo)
    assert f"## Older memories (summary)\n{longterm}\n" in prompt
    assert f"## Recent past (summary)\n{recent}\n" in prompt
    assert sim.compactor.summary_chars == 300 * 3.5  # the actor's summary_tokens
