"""The world clock in a running simulation: every memory and event carries its reading,
speech its speaker, and agent turns (never player commands) move it a round at a time."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import run

from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.memory.record import MemoryRecord
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation
from engine.world.events import Event

TRIO = """\
name: Trio
clock: {start: 2026-04-10T21:50, minutes_per_round: 5}
rooms:
  - {id: hall, name: The Hall, exits: {north: yard}}
  - {id: yard, name: The Yard}
characters:
  - {name: Ada, type: agent, location: hall, profile: A careful gardener.}
  - {name: Bo, type: agent, location: hall, profile: A quiet smith.}
  - {name: Cy, type: agent, location: yard, profile: A wandering poet.}
  - {name: Pat, type: player, role: admin, location: hall}
"""


def open_trio(tmp_path: Path) -> Simulation:
    path = tmp_path / "trio.yaml"
    path.write_text(TRIO, encoding="utf-8")
    return Simulation.open(tmp_path / "vault", path)


def scheduler(sim: Simulation, llm: ScriptedBackend | Dispatcher, seed: int = 1) -> Scheduler:
    models = {c.id: "tiny" for c in sim.world.characters.values() if c.type == "agent"}
    return Scheduler(sim, llm, make_thinkers(sim, models, seed), seed=seed)


def journal(vault_dir: Path, folder: str) -> list[MemoryRecord]:
    path = vault_dir / "agents" / folder / "memories.jsonl"
    return [MemoryRecord.from_json(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- every memory and event carries the reading -------------------------------------------


def test_memories_and_events_carry_the_clock_reading(sim: Simulation, vault_dir: Path) -> None:
    heard: list[Event] = []
    sim.listeners.append(heard.append)
    run(sim, "Pat", "emote waves.")
    for _ in range(2):
        sim.turn_taken(2)  # the fixture world's two agents take a round
    run(sim, "Pat", "look")
    sim.announce_thinking(sim.character("Ada"))

    assert [(e.text, e.sim) for e in heard] == [
        ("Pat waves.", "2026-01-01T08:00"),
        ("Pat looks around.", "2026-01-01T08:10"),
        ("Ada pauses, deep in thought...", "2026-01-01T08:10"),
    ]
    pat = sim.minds["pat"].tail
    assert [m.sim for m in pat] == ["2026-01-01T08:00", "2026-01-01T08:10"]
    ada = sim.minds["ada"].tail
    assert [(m.text, m.sim) for m in ada] == [
        ("Pat waves.", "2026-01-01T08:00"),
        ("Pat looks around.", "2026-01-01T08:10"),
    ]
    sim.save()
    assert [m.sim for m in journal(vault_dir, "Ada")] == ["2026-01-01T08:00", "2026-01-01T08:10"]
    raw = (vault_dir / "agents" / "Ada" / "memories.jsonl").read_text(encoding="utf-8")
    assert json.loads(raw.splitlines()[0])["sim"] == "2026-01-01T08:00"


def test_a_failed_command_is_remembered_with_the_reading(sim: Simulation) -> None:
    assert not run(sim, "Pip", "go nowhere").ok
    (memory,) = sim.minds["pip"].tail
    assert memory.failed
    assert memory.sim == "2026-01-01T08:00"
    assert memory.speaker is None


# -- speech carries its speaker ----------------------------------------------------------


def test_speech_memories_carry_the_speaker_on_both_sides(sim: Simulation) -> None:
    assert run(sim, "Pat", "say Good morning.").ok
    (own,) = sim.minds["pat"].tail
    assert own.text == 'You say, "Good morning."'
    assert (own.speaker, own.sim) == ("Pat", "2026-01-01T08:00")
    for listener in ("ada", "pip"):  # both in the hall with Pat
        (heard,) = sim.minds[listener].tail
        assert heard.text == 'Pat says, "Good morning."'
        assert (heard.speaker, heard.sim) == ("Pat", "2026-01-01T08:00")
    assert sim.minds["bo"].tail == [], "Bo is in the yard"

    assert run(sim, "Ada", '"Hello, Pat.').ok  # the " shorthand is speech too
    assert sim.minds["ada"].tail[-1].speaker == "Ada"
    assert sim.minds["pat"].tail[-1].speaker == "Ada"


def test_only_speech_has_a_speaker(sim: Simulation) -> None:
    for line in ["emote waves.", "look", "think Quiet today.", "say", "go north"]:
        run(sim, "Pat", line)
    for mind in sim.minds.values():
        assert all(memory.speaker is None for memory in mind.tail), mind.character.name


def test_speech_nobody_hears_still_names_its_speaker(sim: Simulation) -> None:
    assert run(sim, "Pat", "go stair").ok
    assert run(sim, "Pat", "say Echo.").text.endswith("(Nobody else is here to hear you.)")
    assert sim.minds["pat"].tail[-1].speaker == "Pat"


# -- agent turns move the clock ----------------------------------------------------------


async def test_three_agents_two_rounds_move_the_clock_two_rounds(tmp_path: Path) -> None:
    sim = open_trio(tmp_path)
    try:
        clocks: list[str] = []  # the reading as each finished turn is published

        def on_turn(happening: Happening) -> None:
            if isinstance(happening, Turn):
                clocks.append(sim.clock.reading())

        turns = scheduler(sim, ScriptedBackend(["look", "say Hi", "think Quiet."]))
        turns.listen(on_turn)
        await turns.run(turns=2)
        assert turns.turns_taken == {"ada": 2, "bo": 2, "cy": 2}
        assert sim.clock.reading() == "2026-04-10T22:00", "two rounds of five minutes"
        assert sim.clock.turns == 0
        assert clocks == ["2026-04-10T21:50"] * 2 + ["2026-04-10T21:55"] * 3 + ["2026-04-10T22:00"]
        said = [m for m in sim.minds["ada"].tail if m.speaker is not None]
        assert all(m.sim is not None for m in sim.minds["ada"].tail)
        assert {m.speaker for m in said} <= {"Ada", "Bo"}
    finally:
        sim.close()


async def test_skipped_turns_count_too(tmp_path: Path) -> None:
    sim = open_trio(tmp_path)
    try:
        llm = ScriptedBackend(["look"], fail_first=4)
        dispatcher = Dispatcher([Endpoint("fake:", llm)], retry=RetryPolicy(attempts=1))
        turns = scheduler(sim, dispatcher)
        await turns.run(turns=3)
        assert sum(t.skipped for t in turns.thinkers.values()) == 4
        assert sim.clock.reading() == "2026-04-10T22:05", "three rounds, failures and all"
    finally:
        sim.close()


async def test_the_same_turns_read_the_same_times(tmp_path: Path) -> None:
    """The clock depends on the turns alone: two runs with the same seed record the
    same readings, memory for memory."""
    readings = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        sim = open_trio(folder)
        try:
            await scheduler(sim, ScriptedBackend(["say Hi", "look"]), seed=5).run(turns=3)
            readings.append({c: [m.sim for m in sim.minds[c].tail] for c in sim.minds})
        finally:
            sim.close()
    assert readings[0] == readings[1]


def test_player_commands_never_move_the_clock(tmp_path: Path) -> None:
    sim = open_trio(tmp_path)
    try:
        for line in ["look", "say Hello", "go north", "go south", "time", "who"] * 5:
            run(sim, "Pat", line)
        assert sim.clock.reading() == "2026-04-10T21:50"
        assert sim.clock.turns == 0
    finally:
        sim.close()


async def test_a_run_saves_the_clock_and_a_restart_keeps_it(tmp_path: Path) -> None:
    sim = open_trio(tmp_path)
    try:
        await scheduler(sim, ScriptedBackend(["look"])).run(turns=4)
        sim.save()
    finally:
        sim.close()
    again = open_trio(tmp_path)
    try:
        assert again.clock.reading() == "2026-04-10T22:10"
        assert run(again, "Pat", "look").ok
        assert again.minds["pat"].tail[-1].sim == "2026-04-10T22:10"
    finally:
        again.close()


def test_a_completed_round_is_saved_at_once(sim: Simulation, vault_dir: Path) -> None:
    """A kill after a round must not take the clock back under later memories' readings."""
    path = vault_dir / "world" / "clock.json"
    saved = json.loads(path.read_text())["now"]
    sim.turn_taken(2)
    assert json.loads(path.read_text())["now"] == saved  # half a round: not yet
    sim.turn_taken(2)
    assert json.loads(path.read_text())["now"] == sim.clock.to_dict()["now"] != saved


def test_a_clock_that_cannot_be_saved_warns_and_the_run_goes_on(
    sim: Simulation, vault_dir: Path
) -> None:
    warnings: list[str] = []
    sim.warn = warnings.append
    (vault_dir / "world" / "clock.json").unlink()
    (vault_dir / "world" / "clock.json").mkdir()  # a folder where the file should be
    sim.turn_taken(1)
    assert len(warnings) == 1
    assert warnings[0].startswith("the world clock could not be saved now")
