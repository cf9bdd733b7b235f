"""The actor profile's notes_tokens and summary_tokens keep a small model's prompt small."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from engine.sim.prompting import build_prompt, newest_part, within
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


def test_notes_within_the_budget_and_a_long_first_one_cut() -> None:
    notes = [("Bread", "flour, water, salt"), ("Kettle", "hums when ready"), ("Fire", "x" * 50)]
    assert within(notes, None) == notes
    assert within(notes, 60) == notes[:2]
    ((title, body),) = within([("Saga", "y" * 500)], 40)
    assert title == "Saga"
    assert body.endswith("…")
    assert len(title) + len(body) <= 40


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
