"""Input limits (``config/limits.md``): a command line past ``max_command_chars`` is
refused whole, with nothing remembered or heard by anyone; a note may not grow past
``max_note_bytes``."""

from __future__ import annotations

from pathlib import Path

from helpers import run

from engine.sim.simulation import Simulation


def test_a_200_kb_say_is_refused_and_nobody_remembers_it(sim: Simulation) -> None:
    before = {key: mind.count for key, mind in sim.minds.items()}
    result = run(sim, "Bo", "say " + "blah " * 40_000)
    assert not result.ok
    assert result.text.startswith("That line is 200,004 characters long; a command may be at")
    assert "\n" not in result.text
    assert {key: mind.count for key, mind in sim.minds.items()} == before
    assert run(sim, "Bo", "say " + "x" * (4_000 - 4)).ok  # at the limit: fine


def test_the_limits_come_from_the_vault(vault_dir: Path, world_file: Path) -> None:
    Simulation.open(vault_dir, world_file).close()
    limits = vault_dir / "config" / "limits.md"
    text = limits.read_text(encoding="utf-8")
    assert "max_command_chars: 4000" in text
    limits.write_text(
        text.replace("max_command_chars: 4000", "max_command_chars: 40").replace(
            "max_note_bytes: 65536", "max_note_bytes: 30"
        ),
        encoding="utf-8",
    )
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert not run(sim, "Bo", "say " + "a" * 40).ok
        assert run(sim, "Bo", "note Seeds -> plant in spring").ok  # 15 bytes
        grown = run(sim, "Bo", "note Seeds -> water them daily")  # 15 + separator + 15
        assert not grown.ok
        assert "a note may hold at most 30" in grown.text
        note = sim.vault.notes("Bo").read("Seeds")
        assert note is not None
        assert note.body == "plant in spring"  # the refused growth left it as it was
    finally:
        sim.close()
