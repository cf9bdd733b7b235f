"""@narrative, @narrative-here (anyone) and @narrative-clear (admins): what they show,
how a bad number of lines is refused, and what clearing removes."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run

from engine.commands.chronicle import DEFAULT_LINES, MAX_LINES
from engine.sim.simulation import Simulation

HINT = f"Try: @narrative 20 (from 1 to {MAX_LINES} lines; {DEFAULT_LINES} when left out)."


def test_narrative_shows_the_last_lines_of_the_world(sim: Simulation) -> None:
    run(sim, "Pat", "say One.")
    run(sim, "Bea", "emote hums.")
    result = run(sim, "Pip", "@narrative")
    assert result.ok
    assert result.text == (
        f"The chronicle of Fixture, the last 2 lines (all there is today; you asked for "
        f"{DEFAULT_LINES}):\n"
        '- [Day 1, 08:00] The Hall: Pat says, "One."\n'
        "- [Day 1, 08:00] The Yard: Bea hums."
    )
    assert run(sim, "Pip", "@narrative 1").text == (
        "The chronicle of Fixture, the last line:\n- [Day 1, 08:00] The Yard: Bea hums."
    )


def test_narrative_here_shows_only_this_room(sim: Simulation) -> None:
    run(sim, "Pat", "say One.")
    run(sim, "Bea", "emote hums.")
    assert run(sim, "Pip", "@narrative-here").text.splitlines()[1:] == [
        '- [Day 1, 08:00] Pat says, "One."'
    ]
    assert run(sim, "Bea", "@narrative-here 5").text.splitlines()[1:] == [
        "- [Day 1, 08:00] Bea hums."
    ]


def test_narrative_bounds_the_lines_it_shows(sim: Simulation) -> None:
    for number in range(MAX_LINES + 5):
        run(sim, "Pat", f"say {number}")
    shown = run(sim, "Pip", f"@narrative {MAX_LINES}").text.splitlines()
    assert len(shown) == MAX_LINES + 1
    assert shown[-1].endswith(f'"{MAX_LINES + 4}"')
    assert len(run(sim, "Pip", "@narrative").text.splitlines()) == DEFAULT_LINES + 1
    assert run(sim, "Pip", "@narrative +3").ok


def test_an_empty_chronicle_says_so(sim: Simulation) -> None:
    result = run(sim, "Pip", "@narrative-here")
    assert result.ok
    assert result.text == "The chronicle of The Hall has nothing yet today (or it was cleared)."


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("ten", "'ten' is not a number of lines."),
        ("1.5", "'1.5' is not a number of lines."),
        ("5 6", "'5 6' is not a number of lines."),
        ("-3", "A number of lines cannot be negative."),
        ("0", "Ask for at least 1 line."),
        ("-0", "Ask for at least 1 line."),
        (str(MAX_LINES + 1), f"At most {MAX_LINES} lines at a time."),
        ("9" * 3000, f"At most {MAX_LINES} lines at a time."),
        ("x" * 100, f"'{'x' * 40}...' is not a number of lines."),
        ("\u0663", "'\u0663' is not a number of lines."),
    ],
    ids=lambda value: value if len(value) < 20 else f"{value[:8]}...",
)
def test_a_bad_number_of_lines_gets_one_clear_message(
    sim: Simulation, words: str, message: str
) -> None:
    result = run(sim, "Pip", f"@narrative {words}")
    assert not result.ok
    assert (result.text, result.hint) == (message, HINT)
    here = run(sim, "Pip", f"@narrative-here {words}")
    assert (here.ok, here.text) == (False, message)


def test_narrative_clear_is_refused_to_anyone_but_an_admin(
    sim: Simulation, vault_dir: Path
) -> None:
    run(sim, "Pat", "say Keep this.")
    for who in ("Pip", "Bea", "Ada"):
        result = run(sim, who, "@narrative-clear")
        assert not result.ok
        assert "needs the admin role" in result.text
    assert (vault_dir / "chronicle" / "world.md").is_file()


def test_narrative_clear_removes_todays_files_and_says_which(
    sim: Simulation, vault_dir: Path
) -> None:
    run(sim, "Pat", "say Yesterday.")
    run(sim, "Pat", "@time set 2026-01-02T08:00")
    run(sim, "Pat", "say One.")
    run(sim, "Pat", "say Two.")
    run(sim, "Bea", "emote hums.")
    result = run(sim, "Pat", "@narrative-clear")
    assert result.ok
    assert result.text == (
        "Cleared the chronicle: world.md (3 lines), rooms/hall.md (2 lines), "
        "rooms/yard.md (1 line). Earlier days (chronicle/days/) are kept."
    )
    chronicle = vault_dir / "chronicle"
    assert sorted(p.relative_to(chronicle).as_posix() for p in chronicle.rglob("*.md")) == [
        "days/2026-01-01/rooms/hall.md",
        "days/2026-01-01/world.md",
    ]
    assert run(sim, "Pat", "@narrative-clear").text == "The chronicle has nothing to clear today."
    refused = run(sim, "Pat", "@narrative-clear all")
    assert not refused.ok
    assert refused.text.startswith("@narrative-clear takes no arguments")
    run(sim, "Pat", "say Again.")
    assert run(sim, "Pat", "@narrative").text.splitlines()[1:] == [
        '- [Day 2, 08:00] The Hall: Pat says, "Again."'
    ]


def test_an_unreadable_chronicle_is_a_failure_that_says_why(
    sim: Simulation, vault_dir: Path
) -> None:
    (vault_dir / "chronicle").write_text("not a folder", encoding="utf-8")
    assert run(sim, "Pat", "say Lost.").ok
    result = run(sim, "Pat", "@narrative")
    assert not result.ok
    assert "cannot read" in result.text


def test_the_commands_are_in_help(sim: Simulation) -> None:
    query = run(sim, "Pip", "help query").text
    assert "@narrative [n]" in query
    assert "@narrative-here [n]" in query
    assert "@training-status" in query
    admin = run(sim, "Pat", "help admin").text
    assert "@narrative-clear" in admin
    assert "@training-toggle" in admin
    assert "@narrative-clear" not in run(sim, "Pip", "commands").text
