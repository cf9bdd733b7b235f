"""Dreams: one call at the consolidator's priority made of the agent's past, memories and
knowledge; kept in the note "Dreams" and as a thought; a reply that is not a dream is
asked once more, then the dream is made without the model (also with no model at all);
at most one per dream_interval of world time."""

from __future__ import annotations

import asyncio

import pytest
from helpers import memories, run

from engine.errors import LLMUnavailableError
from engine.llm.request import Generation, LLMRequest, Priority
from engine.memory.dream import CUE, montage, sample_fragments
from engine.sim.simulation import Simulation

DREAM = "I flew over the yard well while the brass lamp sang to me. Then I woke in the hall."


class Model:
    def __init__(self, answers: list[str | Exception]) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[LLMRequest, str]] = []

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        prompt = request.prompt()
        self.calls.append((request, prompt))
        answer = self.answers.pop(0) if self.answers else ""
        if isinstance(answer, Exception):
            raise answer
        return Generation(text=answer, prompt_tokens=9, completion_tokens=9, done_reason="stop")


def _start(sim: Simulation, model: Model) -> None:
    sim.start_compaction(model, {c.id: "tiny" for c in sim.world.characters.values()})


async def _dream(sim: Simulation, who: str = "Ada") -> str:
    said = run(sim, who, "dream").shown
    await sim.settle_memory(5)
    return said


def _note(sim: Simulation) -> str:
    note = sim.vault.notes("Ada").read("Dreams")
    return note.body if note else ""


async def test_a_dream_is_asked_for_and_kept_as_a_note_and_a_memory(sim: Simulation) -> None:
    run(sim, "Ada", "note Lamp -> The brass lamp in the hall needs oil.")
    model = Model([DREAM])
    _start(sim, model)
    assert await _dream(sim) == "You close your eyes and drift into a dream..."
    ((request, prompt),) = model.calls
    assert request.role == "dream"
    assert request.priority is Priority.CONSOLIDATION
    assert prompt.rstrip().endswith(CUE)
    assert "You add to your note 'Lamp'." in prompt  # a recent memory among the fragments
    assert _note(sim) == DREAM
    assert memories(sim, "Ada")[-1] == f"You dream: {DREAM}"
    assert "Ada closes their eyes and dozes off." in memories(sim, "Pat")


@pytest.mark.parametrize("answers", [["", "I'm sorry, but as an AI I cannot dream."],
                                     [LLMUnavailableError("the server is down")]])  # fmt: skip
async def test_no_usable_dream_from_the_model_makes_one_without_it(
    sim: Simulation, answers: list[str | Exception]
) -> None:
    run(sim, "Ada", "look")
    model = Model(answers)
    _start(sim, model)
    await _dream(sim)
    assert len(model.calls) == (1 if isinstance(answers[0], Exception) else 2)
    dream = _note(sim)
    assert dream.startswith("I dreamt that ")
    assert dream.endswith("Then I woke.")
    assert memories(sim, "Ada")[-1] == f"You dream: {dream}"


async def test_one_dream_a_day_of_world_time(sim: Simulation) -> None:
    _start(sim, Model([DREAM, DREAM]))
    await _dream(sim)
    again = run(sim, "Ada", "dream")
    assert not again.ok
    assert again.text == "You dreamt not long ago; you can dream again after 2026-01-02 08:00."
    sim.world.clock.set("2026-01-02T08:00")
    assert run(sim, "Ada", "dream").ok
    await sim.settle_memory(5)
    assert _note(sim).count(DREAM) == 2


def test_without_an_event_loop_or_a_model_the_dream_is_made_at_once(sim: Simulation) -> None:
    run(sim, "Ada", "look")
    assert run(sim, "Ada", "dream").text == "You close your eyes and dream."
    assert _note(sim).startswith("I dreamt that ")


def test_fragments_mix_old_recent_and_known_the_same_for_the_same_seed() -> None:
    old = [f"Long ago {n}." for n in range(10)]
    recent = [f"Lately {n}." for n in range(10)]
    known = [f"Known {n}." for n in range(10)]
    first = sample_fragments(old, recent, known, "Ada:40")
    assert len(first) == 9
    assert sum(f.startswith("Long ago") for f in first) == 3
    assert sum(f.startswith("Known") for f in first) == 3
    assert sample_fragments(old, recent, known, "Ada:40") == first
    assert sample_fragments(old, recent, known, "Ada:41") != first
    assert montage([], "x") == "I dreamt of nothing at all: a grey room, and then morning."
    dream = montage(["You went north.", "Pat waves."], "seed")
    assert dream.startswith("I dreamt that you went north.")
    assert ", Pat waves." in dream
