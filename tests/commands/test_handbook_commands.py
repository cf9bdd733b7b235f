"""@handbook (show, undo) and @skill in the world, over handbook files written by the
store as a pass would write them."""

from __future__ import annotations

from helpers import run

from engine.memory.handbook import Handbook, render_skill, render_summary
from engine.memory.knowledge import Stamp
from engine.sim.simulation import Simulation
from engine.vault.handbook_store import HandbookState

STATE = HandbookState(method="rules", mode="RULES", through_pass="p1",
                      updated=Stamp(sim="2026-01-02T08:00", at="2026-11-25T10:00:00Z"))  # fmt: skip
SKILL = render_skill("draw-water", "Draw water", "Fill the pail", ["well"], "When thirsty.",
                     ["`go north`", "`examine the old well`"], [], [])  # fmt: skip


def _write(sim: Simulation, who: str, tip: str, skills: dict[str, str] | None = None) -> None:
    store = sim.vault.handbook(sim.character(who).folder)
    store.write(Handbook(render_summary("A careful gardener.", [tip], []), "# M\n", skills or {}),
                STATE)  # fmt: skip


def test_handbook_shows_the_summary_and_the_skills(sim: Simulation) -> None:
    assert (
        "Your handbook is empty. It is written after a knowledge pass"
        in run(sim, "Ada", "@handbook").text
    )
    _write(sim, "Ada", "Check the well first.", {"draw-water": SKILL})
    shown = run(sim, "Ada", "@handbook").text
    assert shown.startswith("Your handbook (written by the rules at 2026-01-02 08:00):")
    assert "1. Check the well first." in shown
    assert "Skills: draw-water (@skill <name>)" in shown


def test_only_builders_see_another_agents_handbook(sim: Simulation) -> None:
    _write(sim, "Ada", "Check the well first.")
    refused = run(sim, "Pip", "@handbook Ada")
    assert not refused.ok
    assert "Only builders may look at another character's memory." in refused.text
    assert "Ada's handbook" in run(sim, "Bea", "@handbook Ada").text


def test_undo_puts_back_the_handbook_before_its_last_write(sim: Simulation) -> None:
    _write(sim, "Ada", "Old tip.")
    _write(sim, "Ada", "New tip.", {"draw-water": SKILL})
    said = run(sim, "Ada", "@handbook undo").text
    # memory_summary.md and handbook.json (MEMORY.md did not change, so it was not written)
    assert said == "Undid the last write of your handbook: 2 files put back, 1 removed."
    assert "1. Old tip." in run(sim, "Ada", "@handbook").text
    again = run(sim, "Ada", "@handbook undo")
    assert not again.ok
    assert again.text == "You have no handbook write left to undo."


def test_skill_lists_finds_by_prefix_and_says_what_is_missing(sim: Simulation) -> None:
    assert "You have no skills yet" in run(sim, "Ada", "@skill").text
    _write(
        sim,
        "Ada",
        "Tip.",
        {"draw-water": SKILL, "dig-beds": SKILL.replace("draw-water", "dig-beds")},
    )
    assert run(sim, "Ada", "@skill").text == "Your skills: dig-beds, draw-water. Try: @skill <name>"
    shown = run(sim, "Ada", "@skill draw")
    assert shown.ok
    assert "# Skill: Draw water" in shown.text
    assert "1. `go north`" in shown.text
    missing = run(sim, "Ada", "@skill bake")
    assert not missing.ok
    assert "You have no skill called 'bake'." in missing.text
    assert missing.hint == "Your skills: dig-beds, draw-water."
    both = run(sim, "Ada", "@skill d")
    assert "more than one skill" in both.text


def test_a_handbook_record_that_does_not_read_is_one_line(sim: Simulation) -> None:
    _write(sim, "Ada", "Tip.")
    (sim.vault.handbook(sim.character("Ada").folder).folder / "handbook.json").write_text("{")
    shown = run(sim, "Ada", "@handbook")
    assert not shown.ok
    assert "handbook.json is not valid JSON" in shown.text
