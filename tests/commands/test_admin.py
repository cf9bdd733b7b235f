"""@save, @impersonate / @imp (admins only), and what each role may do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run

from engine.sim.prompting import build_prompt
from engine.sim.simulation import Simulation


def world_yaml(vault_dir: Path) -> str:
    return (vault_dir / "world" / "world.yaml").read_text(encoding="utf-8")


def test_save_rewrites_the_vault(sim: Simulation, vault_dir: Path) -> None:
    assert "#   Pat is in The Hall" in world_yaml(vault_dir)
    run(sim, "Pat", "go north")
    run(sim, "Pat", "@set-description A traveller, muddy now.")
    result = run(sim, "Pat", "@save")
    assert result.ok
    assert result.text == "The world is saved."
    assert "#   Pat is in The Yard" in world_yaml(vault_dir)
    agent = (vault_dir / "agents" / "Pat" / "agent.md").read_text(encoding="utf-8")
    assert "location: yard" in agent
    assert "A traveller, muddy now." in agent
    state = json.loads((vault_dir / "agents" / "Pat" / "memory-state.json").read_text())
    assert state["memories"] == 2


def test_saved_building_survives_a_restart(
    sim: Simulation, vault_dir: Path, world_file: Path
) -> None:
    run(sim, "Pat", "@dig The Attic")
    run(sim, "Pat", "@save")
    sim.close()
    again = Simulation.open(vault_dir, world_file)
    try:
        assert again.world.rooms["room-1"].name == "The Attic"
        assert again.world.rooms["hall"].exits["attic"] == "room-1"
    finally:
        again.close()


@pytest.mark.parametrize(("who", "role"), [("Pip", "player"), ("Bea", "builder")])
def test_save_needs_the_admin_role(sim: Simulation, vault_dir: Path, who: str, role: str) -> None:
    before = world_yaml(vault_dir)
    run(sim, who, "go south" if who == "Bea" else "go north")
    result = run(sim, who, "@save")
    assert not result.ok
    assert result.text == f"'@save' needs the admin role; you are a {role}."
    assert world_yaml(vault_dir) == before


def test_a_builder_may_build_but_not_administer(sim: Simulation) -> None:
    assert run(sim, "Bea", "@dig The Shed").ok
    assert not run(sim, "Bea", "@save").ok
    assert not run(sim, "Bea", "@impersonate Ada").ok


def test_an_admin_may_do_everything(sim: Simulation) -> None:
    lines = [
        "@dig The Attic",
        "@exit The Tower",
        "@tp The Yard",
        "@memory-status Ada",
        "@save",
        "@impersonate Ada",
    ]
    for line in lines:
        result = run(sim, "Pat", line)
        assert result.ok, f"{line}: {result.shown}"
    assert sim.character("Pat").location == "yard"


@pytest.mark.parametrize("line", ["@impersonate Ada", "@imp ada"])
def test_impersonate_shows_the_exact_prompt(sim: Simulation, line: str) -> None:
    run(sim, "Pat", 'say "Hello, Ada."')
    run(sim, "Pip", "emote waves.")
    result = run(sim, "Pat", line)
    assert result.ok
    note, prompt = result.text.split("\n", 1)
    assert (
        note == "(What it brings to mind shows its scores in [brackets]; the model is sent none.)"
    )
    assert prompt == build_prompt(sim, sim.character("Ada"), scores=True)
    assert prompt == build_prompt(sim, sim.character("Ada"))  # nothing brought to mind yet
    assert result.text.startswith(
        note + "\nYou are Ada. A careful gardener.\nBASIC COMMANDS: look | go <exit>"
    )
    assert '\n---\nPat says, "Hello, Ada."\nPip waves.\n---\n## Good moves here' in result.text
    assert result.text.endswith(
        "You are Ada in The Hall. A long hall with a stone floor.\n"
        "Exits: north, stair, down   Also here: Pat, Pip\n~Ada>"
    )


def test_impersonate_a_player_fails(sim: Simulation) -> None:
    result = run(sim, "Pat", "@impersonate Pip")
    assert not result.ok
    assert result.text == "Pip is a player and has no prompt."


@pytest.mark.parametrize(
    ("args", "text"),
    [("Zed", "You don't see any character called 'Zed'."), ("", "Impersonate whom?")],
)
def test_impersonate_nobody_fails(sim: Simulation, args: str, text: str) -> None:
    result = run(sim, "Pat", f"@impersonate {args}")
    assert not result.ok
    assert result.text == text


def test_impersonate_needs_the_admin_role(sim: Simulation) -> None:
    result = run(sim, "Bea", "@imp Ada")
    assert not result.ok
    assert result.text == "'@impersonate' needs the admin role; you are a builder."


def test_impersonate_shows_the_scores_of_what_the_agent_brings_to_mind(sim: Simulation) -> None:
    run(sim, "Ada", "note Lamp -> The brass lamp in the hall needs oil every evening.")
    shown = run(sim, "Pat", "@impersonate Ada").text
    assert "## Relevant private notes" in shown
    assert "- Lamp: The brass lamp in the hall needs oil every evening.  [rel " in shown
    assert ", score " in shown
    assert ", note]" in shown
    assert "[rel " not in build_prompt(sim, sim.character("Ada"))  # never sent to a model
