"""What the TUI shows, as pure functions: the Knowledge and Handbook tabs' text (a bank
that does not read says so, an empty bank says when it fills, the last pass's failure
shows), the LLM panel's cost and memory lines, and timestamps as people read them."""

from __future__ import annotations

from pathlib import Path

from engine.memory.knowledge import Stamp
from engine.tui.render import knowledge_text
from engine.vault.knowledge_store import PassRecord

NOW = Stamp(sim="2026-01-01T09:00", at="2026-11-23T10:00:00.000000Z")


def test_a_bank_that_does_not_read_is_named_and_the_failed_pass_shows() -> None:
    failed = PassRecord.model_validate(
        {"pass": "20261123-100000", "status": "failed", "started": NOW, "finished": NOW,
         "error": "the extraction reply did not parse"}
    )  # fmt: skip
    text = knowledge_text("Ada", "long-term-memory.json is not a valid knowledge bank", failed, "")
    assert text.splitlines() == [
        "Ada's knowledge",
        "The bank does not read: long-term-memory.json is not a valid knowledge bank",
        "",
        "Last pass 20261123-100000: failed, ended 2026-01-01 09:00 world time, 0 candidates",
        "Error: the extraction reply did not parse",
    ]


def test_an_empty_bank_and_no_pass_yet() -> None:
    assert knowledge_text("Bo", [], None, "") == (
        "Bo's knowledge\nThe bank is empty: it fills at the end of a run and on @consolidate."
        "\n\nNo knowledge pass yet."
    )


def test_the_handbook_tab_says_how_it_was_written_or_why_not() -> None:
    from engine.tui.render import handbook_text
    from engine.vault.handbook_store import HandbookState

    state = HandbookState(method="rules", mode="RULES", updated=NOW,
                          fallback="the model's handbook was not usable (no reply)")  # fmt: skip
    text = handbook_text("Ada", "## Profile\n\nA gardener.\n", ["draw-water"], state)
    assert text.splitlines() == [
        "Ada's handbook",
        "Written by the rules at 2026-01-01 09:00 world time (the model's handbook was not "
        "usable (no reply))",
        "",
        "## Profile",
        "",
        "A gardener.",
        "",
        "Skills: draw-water",
    ]
    assert "No handbook yet" in handbook_text("Bo", None, [], None)
    broken = handbook_text("Bo", None, [], None, problem="handbook.json is not valid JSON")
    assert broken.endswith("The handbook does not read: handbook.json is not valid JSON")


def test_the_cost_lines_sort_by_agent_tokens_seconds_or_calls() -> None:
    from collections import Counter

    from engine.sim.recorder import Cost
    from engine.tui.render import cost_lines

    costs = {
        "Bo": Cost(Counter(turn=3), tokens_in=900, tokens_out=30, llm_s=1.0),
        "Ada": Cost(Counter(turn=1, summary=1), tokens_in=100, tokens_out=10, llm_s=4.0),
        "Cy": Cost(Counter(turn=9), tokens_in=300, tokens_out=3, llm_s=0.5, money=0.25),
    }

    def names(order: str) -> list[str]:
        return [line.split()[0] for line in cost_lines(costs, order)[1:]]

    assert names("agent") == ["Ada", "Bo", "Cy"]
    assert names("tokens") == ["Bo", "Cy", "Ada"]
    assert names("LLM s") == ["Ada", "Bo", "Cy"]
    assert names("calls") == ["Cy", "Bo", "Ada"]
    lines = cost_lines(costs, "agent")
    assert lines[0] == "Cost by agent (c sorts):"
    assert lines[1].split() == ["Ada", "100+10", "tok,", "4.0", "s,", "2", "calls"]
    assert lines[3].endswith("9 calls 0.2500")
    assert cost_lines({}, "agent") == []
    many = {f"A{n}": Cost(Counter(turn=1)) for n in range(6)}
    assert cost_lines(many, "agent")[-1] == " ... and 2 more (mudsim cost)"


def test_the_llm_panel_says_when_memory_holds_the_turns() -> None:
    from engine.tui.render import MemoryHold, memory_hold_lines

    assert memory_hold_lines(None) == []
    assert memory_hold_lines(MemoryHold(0, [], 0, 0.0)) == []  # memory keeps up: nothing
    assert memory_hold_lines(MemoryHold(3, ["Ada", "Bo"], 7, 2.25)) == [
        "Held for memory: 3 turns (behind: Ada, Bo)",
        "Memory holds: 7 turns, 2.2 s",
    ]
    assert memory_hold_lines(MemoryHold(0, [], 1, 0.5)) == ["Memory holds: 1 turn, 0.5 s"]


async def test_memory_hold_reads_the_gate_and_every_characters_record(tmp_path: Path) -> None:
    from helpers import FIXTURE_WORLD

    from engine.llm.fake import ScriptedBackend
    from engine.memory.record import MemoryKind
    from engine.sim.simulation import Simulation
    from engine.tui.render import memory_hold

    world = tmp_path / "world.yaml"
    world.write_text(FIXTURE_WORLD, encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world)
    try:
        sim.compactor.llm = ScriptedBackend()
        bo = sim.minds["bo"]
        while bo.count - bo.boundary < 12:  # windows 4/4: behind at I + 2R
            bo.record(MemoryKind.THOUGHT, "A thought.", location=None, occupants=[])
        sim.minds["ada"].held_turns, sim.minds["ada"].held_seconds = 2, 1.5
        hold = memory_hold(sim)
        assert (hold.behind, hold.turns, hold.seconds) == (["Bo"], 2, 1.5)
    finally:
        sim.close()


def test_timestamps_read_as_people_write_them() -> None:
    from engine.tui.render import readable_time, readable_times

    assert readable_time("2026-12-07T06:07:00.322421Z") == "2026-12-07 06:07 UTC"
    assert readable_time("2026-12-07T06:07:59Z") == "2026-12-07 06:07 UTC"  # not rounded up
    assert readable_time("2026-12-07T08:07:00+02:00") == "2026-12-07 06:07 UTC"
    assert readable_time("2026-01-01T09:00") == "2026-01-01 09:00"  # the world clock's
    assert readable_time("not a time") == "not a time"
    assert readable_time("") == ""
    assert readable_times(
        "  short-term summary: 120 chars covering #0-#3, updated 2026-12-07T06:07:00.322421Z\n"
        "  knowledge bank: 2 entries; last pass: p1, done, ended 2026-01-01T09:00 world time"
    ) == (
        "  short-term summary: 120 chars covering #0-#3, updated 2026-12-07 06:07 UTC\n"
        "  knowledge bank: 2 entries; last pass: p1, done, ended 2026-01-01 09:00 world time"
    )
    assert readable_times("#0-#3, no time here") == "#0-#3, no time here"


def test_the_inspector_shows_no_raw_timestamp(tmp_path: Path) -> None:
    from helpers import FIXTURE_WORLD

    from engine.sim.simulation import Simulation
    from engine.tui.render import inspector_text
    from engine.vault.summaries import Summaries, Summary

    world = tmp_path / "world.yaml"
    world.write_text(FIXTURE_WORLD, encoding="utf-8")
    sim = Simulation.open(tmp_path / "vault", world)
    try:
        mind = sim.minds["ada"]
        said = "Bo said the well runs dry by 2026-01-01T09:00."  # what it says: word for word
        summary = Summary(said, 0, 0, 0, "2026-12-07T06:07:00.322421Z", sim="2026-01-01T09:00")
        mind.summaries = Summaries(recent=summary, longterm=None)
        text = inspector_text(None, mind, waiting=False)
        assert "updated 2026-12-07 06:07 UTC" in text
        assert "06:07:00" not in text
        assert said in text.splitlines()
    finally:
        sim.close()
