"""The actor profile's notes_tokens (within knowledge_tokens) and summary_tokens keep a
small model's prompt small."""

from __future__ import annotations

import dataclasses

import pytest
from helpers import run, set_actor

from engine.llm.fake import ScriptedBackend
from engine.memory.extractive import extractive_summary
from engine.sim.prompting import build_prompt, fitted_prompt
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


@pytest.mark.parametrize("context", [1024, 2048])
async def test_a_summary_the_compactor_makes_in_a_small_context_is_shown_whole(
    sim: Simulation, context: int
) -> None:
    """In a small context the compactor's limit is a quarter of the turn prompt's room,
    counted as the prompt is fitted (the estimate: about twice SmolLM2's tokens), so
    the fitter never cuts the summaries' beginnings off (it cuts a part over a quarter)."""
    set_actor(sim, options={"num_ctx": context, "num_predict": 64})
    sim.start_compaction(ScriptedBackend(["look"]), {})
    limit = sim.compactor.summary_chars
    assert limit is not None
    assert limit < 300 * 3.5  # the quarter, not summary_tokens, is the limit here
    things = ("well", "gate", "mill", "bread", "fox", "rain", "bell", "key", "roof", "cart")
    said = [f'You say, "The {things[n % 10]} is near today, number {n * 37}" (Nobody else '
            "is here to hear you.)" for n in range(40)]  # fmt: skip
    longterm, recent = extractive_summary(said[:20], limit), extractive_summary(said[20:], limit)
    bo = sim.minds["bo"]
    bo.summaries = dataclasses.replace(
        bo.summaries,
        longterm=Summary(longterm, 0, 20, 20, "2026-11-23T00:00:00Z", method="extractive"),
        recent=Summary(recent, 20, 40, 40, "2026-11-23T00:00:00Z", method="extractive"),
    )
    for n in range(12):  # a verbatim tail that fills the rest of the room
        run(sim, "Bo", f"say The lamp is lit, number {n}")
    fitted = fitted_prompt(sim, sim.character("Bo"))
    assert "long-term summary" not in fitted.cut
    assert "recent summary" not in fitted.cut
    assert f"## Older memories (summary)\n{longterm}\n" in fitted.text
    assert f"## Recent past (summary)\n{recent}\n" in fitted.text
