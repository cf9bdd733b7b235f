"""Issue 44, item 6: a fact shows once in the turn prompt, however many near-identical
wordings of it an agent keeps. Ada tells Bo where she hid the compass, twice ("Remember
this, Bo: ..." and "Remember this again, Bo: ..."); Bo's memories are summarized
extractively (the summary holds both lines, as an extractive summary keeps every
distinct memory), and the fact is also in his bank (two wordings) and in a note. The
real turn prompt is built, with the fixture world's Simulation."""

from __future__ import annotations

from helpers import run

from engine.memory.extractive import extractive_summary
from engine.memory.knowledge import Entry, Source, Stamp
from engine.sim.prompting import build_prompt, turn_prompt
from engine.sim.simulation import Simulation
from engine.vault.summaries import Summary

FACT = "Ada hid the brass compass beneath the vorpelwick stone by the old well"
ONCE = "vorpelwick"
"""The fact's rarest word: it shows once where the fact does."""


def _entry(number: int, text: str) -> Entry:
    stamp = Stamp(sim="2026-01-01T08:00", at="2026-11-25T10:00:00Z")
    return Entry(id=f"ltm-{number}-c{number}", type="fact", content=text, tags=["compass"],
                 source=Source(passes=["20261125-100000"]), created=stamp, updated=stamp)  # fmt: skip


def _summarize(sim: Simulation, who: str, start: int, end: int, when: int) -> None:
    """Commit an extractive summary of ``who``'s memories [start, end), as the compactor
    commits one when its summarizer fails."""
    mind = sim.minds[sim.character(who).id]
    texts = [memory.text for memory in mind.tail if start <= memory.seq < end]
    stamp = f"2026-11-25T10:0{when}:00Z"
    mind.commit(None, Summary(extractive_summary(texts, 1_200), start, end, mind.count, stamp,
                              method="extractive", sim=sim.clock.reading(), rooms=("yard",)))  # fmt: skip


def _told_twice(sim: Simulation) -> None:
    assert run(sim, "Ada", "go north").ok  # to the yard, where Bo is
    assert run(sim, "Ada", f"say Remember this, Bo: {FACT}.").ok
    assert run(sim, "Ada", f"say Remember this again, Bo: {FACT}.").ok


def test_a_fact_told_twice_shows_once_from_an_extractive_summary(sim: Simulation) -> None:
    _told_twice(sim)
    told = sim.minds["bo"].count
    for line in ("The bread is ready.", "I am off to the mill.", "Mind the rope."):
        assert run(sim, "Ada", f"say {line}").ok
    _summarize(sim, "Bo", 0, told, 0)  # the past summary that holds both lines
    _summarize(sim, "Bo", told, sim.minds["bo"].count, 1)  # the short-term one shown
    assert run(sim, "Bo", "say The compass? By the stone?").ok
    prompt = build_prompt(sim, sim.character("Bo"))
    assert "## Related past experiences" in prompt
    assert prompt.count(ONCE) == 1, prompt


def test_a_fact_kept_as_memories_entries_and_a_note_shows_once(sim: Simulation) -> None:
    _told_twice(sim)
    told = sim.minds["bo"].count
    assert run(sim, "Ada", "say The bread is ready.").ok
    _summarize(sim, "Bo", 0, told, 0)
    _summarize(sim, "Bo", told, sim.minds["bo"].count, 1)
    sim.knowledge.store(sim.minds["bo"]).save([
        _entry(1, f"{FACT}."),
        _entry(2, f"Remember this, Bo: {FACT}!"),
    ])  # fmt: skip
    assert run(sim, "Bo", f"note Compass -> Remember this: {FACT}.").ok
    assert run(sim, "Bo", "say The compass? By the stone?").ok
    prompt = turn_prompt(sim, sim.character("Bo"))
    assert prompt.count(ONCE) == 1, prompt
