"""The actor profile's notes_tokens (within knowledge_tokens) and summary_tokens keep a
small model's prompt small."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from helpers import run, set_actor
from hypothesis import given
from hypothesis import strategies as st

from engine.sim.prompting import build_prompt, newest_part
from engine.sim.simulation import Simulation
from engine.vault.summaries import Summary


def test_newest_part_keeps_the_end_from_a_word_boundary() -> None:
    text = "I met Ash in the kitchen. Later I baked bread with Moss."
    assert newest_part(text, None) == text
    assert newest_part(text, 1000) == text
    assert newest_part(text, 22) == "baked bread with Moss."


@given(st.text(alphabet="ab ", max_size=200), st.integers(min_value=1, max_value=100))
def test_newest_part_is_never_longer_than_its_budget(text: str, chars: int) -> None:
    part = newest_part(text, chars)
    assert len(part) <= chars
    assert text.endswith(part)


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


def test_a_long_summary_is_cut_to_the_actor_profiles_budget(
    sim: Simulation, vault_dir: Path
) -> None:
    bo = sim.character("Bo")
    mind = sim.minds["bo"]
    long = " ".join(f"Sentence number {i} of a very long summary." for i in range(200))
    recent = Summary(long, 0, 0, 0, "2026-11-23T00:00:00Z")
    mind.summaries = dataclasses.replace(mind.summaries, recent=recent)
    prompt = build_prompt(sim, bo)
    assert "Sentence number 199" in prompt  # the newest part stays
    assert "Sentence number 0 " not in prompt
    assert len(prompt) < len(long)
