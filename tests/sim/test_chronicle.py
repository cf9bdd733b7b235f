"""The chronicle as the world runs (``engine.sim.chronicle``): lines in world.md and
the room's file as events happen, rotation by simulated day, hostile room ids, and a
write that fails (one warning; the world goes on)."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import memories, run

from engine.sim.simulation import Simulation
from engine.world.events import Event, EventKind


def read(vault_dir: Path, path: str) -> list[str]:
    """The event lines of a chronicle file."""
    text = (vault_dir / "chronicle" / path).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_speech_and_movement_are_written_to_the_world_and_room_files(
    sim: Simulation, vault_dir: Path
) -> None:
    run(sim, "Pat", "say Good morning.")
    run(sim, "Pat", "north")
    assert read(vault_dir, "world.md") == [
        '- [Day 1, 08:00] The Hall: Pat says, "Good morning."',
        "- [Day 1, 08:00] The Hall: Pat leaves north to The Yard.",
        "- [Day 1, 08:00] The Yard: Pat arrives from The Hall.",
    ]
    assert read(vault_dir, "rooms/hall.md") == [
        '- [Day 1, 08:00] Pat says, "Good morning."',
        "- [Day 1, 08:00] Pat leaves north to The Yard.",
    ]
    assert read(vault_dir, "rooms/yard.md") == ["- [Day 1, 08:00] Pat arrives from The Hall."]
    text = (vault_dir / "chronicle" / "world.md").read_text(encoding="utf-8")
    assert text.startswith(
        "# Chronicle of Fixture, day 1 (Thursday 1 January 2026)\n\nSimulated date: 2026-01-01\n\n"
    )


def test_ambient_events_and_failures_are_not_chronicled(sim: Simulation, vault_dir: Path) -> None:
    sim.announce_thinking(sim.character("Ada"))
    run(sim, "Pat", "go nowhere")
    assert not (vault_dir / "chronicle").exists()


def test_the_clock_reading_stamps_each_line(sim: Simulation, vault_dir: Path) -> None:
    for _ in range(3):
        sim.turn_taken(1)  # a round each: 08:30
    run(sim, "Pat", ":waves.")
    assert read(vault_dir, "rooms/hall.md") == ["- [Day 1, 08:30] Pat waves."]


def test_a_new_simulated_day_moves_the_old_files_to_days(sim: Simulation, vault_dir: Path) -> None:
    assert run(sim, "Pat", "@time set 2026-01-01T23:50").ok
    run(sim, "Pat", "say Late already.")
    run(sim, "Bea", "emote yawns.")
    sim.turn_taken(1)  # one round: midnight, day 2
    run(sim, "Pat", "say A new day.")
    chronicle = vault_dir / "chronicle"
    assert read(vault_dir, "days/2026-01-01/world.md") == [
        '- [Day 1, 23:50] The Hall: Pat says, "Late already."',
        "- [Day 1, 23:50] The Yard: Bea yawns.",
    ]
    assert read(vault_dir, "days/2026-01-01/rooms/hall.md") == [
        '- [Day 1, 23:50] Pat says, "Late already."'
    ]
    assert read(vault_dir, "days/2026-01-01/rooms/yard.md") == ["- [Day 1, 23:50] Bea yawns."]
    assert read(vault_dir, "world.md") == ['- [Day 2, 00:00] The Hall: Pat says, "A new day."']
    assert sorted(p.name for p in (chronicle / "rooms").iterdir()) == ["hall.md"]
    assert "Simulated date: 2026-01-02" in (chronicle / "world.md").read_text(encoding="utf-8")


def test_a_day_seen_again_gets_its_lines_appended(sim: Simulation, vault_dir: Path) -> None:
    run(sim, "Pat", "say First.")
    run(sim, "Pat", "@time set 2026-01-02T08:00")
    run(sim, "Pat", "say Second.")
    run(sim, "Pat", "@time set 2026-01-01T20:00")  # back to day 1
    run(sim, "Pat", "say Third.")
    run(sim, "Pat", "@time set 2026-01-03T08:00")
    run(sim, "Pat", "say Fourth.")
    assert [line[-9:] for line in read(vault_dir, "days/2026-01-01/rooms/hall.md")] == [
        ' "First."',
        ' "Third."',
    ]
    assert read(vault_dir, "days/2026-01-02/world.md") == [
        '- [Day 2, 08:00] The Hall: Pat says, "Second."'
    ]


def test_the_day_survives_a_restart(vault_dir: Path, world_file: Path) -> None:
    first = Simulation.open(vault_dir, world_file)
    try:
        run(first, "Pat", "say Before.")
        run(first, "Pat", "@time set 2026-01-05T08:00")
    finally:
        first.save()
        first.close()
    again = Simulation.open(vault_dir, world_file)
    try:
        run(again, "Pat", "say After.")
    finally:
        again.close()
    assert read(vault_dir, "days/2026-01-01/world.md") == [
        '- [Day 1, 08:00] The Hall: Pat says, "Before."'
    ]
    assert read(vault_dir, "world.md") == ['- [Day 5, 08:00] The Hall: Pat says, "After."']


def test_a_hostile_room_stays_inside_the_chronicle_folder(sim: Simulation, vault_dir: Path) -> None:
    run(sim, "Pat", "@dig ../../escape\u2028# Heading")
    sim.deliver(Event(EventKind.EMOTE, "Someone\nlurks.", "../../../outside", "pat"))
    files = sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*.md"))
    chronicled = [f for f in files if f.startswith("chronicle/")]
    assert chronicled[0] == "chronicle/rooms/hall.md"
    assert re.fullmatch(r"chronicle/rooms/outside-[0-9a-f]{8}\.md", chronicled[1])
    assert chronicled[2:] == ["chronicle/world.md"]
    assert not list(vault_dir.parent.glob("outside*"))
    world = read(vault_dir, "world.md")
    assert world[-1] == "- [Day 1, 08:00] ../../../outside: Someone lurks."
    assert world[0].startswith("- [Day 1, 08:00] The Hall: Pat digs a new room: ../../escape")


def test_a_failed_write_warns_once_and_the_world_goes_on(vault_dir: Path, world_file: Path) -> None:
    warnings: list[str] = []
    sim = Simulation.open(vault_dir, world_file, warn=warnings.append)
    try:
        (vault_dir / "chronicle").write_text("not a folder", encoding="utf-8")
        first = run(sim, "Pat", "say One.")
        second = run(sim, "Pat", "say Two.")
        assert first.ok
        assert second.ok
        assert memories(sim, "Pip")[-2:] == ['Pat says, "One."', 'Pat says, "Two."']
        assert len(warnings) == 1, warnings
        assert "chronicle" in warnings[0]
        assert "the world goes on" in warnings[0]
        (vault_dir / "chronicle").unlink()
        run(sim, "Pat", "say Three.")
        assert read(vault_dir, "world.md") == ['- [Day 1, 08:00] The Hall: Pat says, "Three."']
        (vault_dir / "chronicle" / "rooms" / "hall.md").unlink()
        (vault_dir / "chronicle" / "rooms" / "hall.md").mkdir()
        assert run(sim, "Pat", "say Four.").ok
        assert len(warnings) == 2, "a new failure after a write that worked warns again"
    finally:
        sim.close()
