"""A vault an older mudsim wrote keeps its characters: a folder named by the old rule
(``Zoë`` in ``agents/Zo``) moves to its name of today (``agents/Zoe``) when the vault
is taken, memories and all, even when an earlier move was cut off half way."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD, run

from engine.errors import VaultError
from engine.sim.simulation import Simulation
from engine.vault.vault import Vault

WITH_ZOE = (
    FIXTURE_WORLD
    + """\
  - name: Zoë
    type: agent
    location: hall
    profile: A keeper of bees.
"""
)


@pytest.fixture
def old_vault(tmp_path: Path) -> tuple[Path, Path]:
    """A vault where Zoë remembers a thought, laid out as an older mudsim did."""
    world_file = tmp_path / "zoe.yaml"
    world_file.write_text(WITH_ZOE, encoding="utf-8")
    vault = tmp_path / "vault"
    sim = Simulation.open(vault, world_file, notice=None)
    try:
        assert run(sim, "Zoë", "think The hives hum today.").ok
        sim.save()
    finally:
        sim.close()
    (vault / "agents" / "Zoe").rename(vault / "agents" / "Zo")
    snapshot = vault / "world" / "world.yaml"
    text = snapshot.read_text(encoding="utf-8")
    snapshot.write_text(text.replace("\n- Zoe\n", "\n- Zo\n"), encoding="utf-8")
    return vault, world_file


def thoughts(sim: Simulation, name: str) -> list[str]:
    return [m.text for m in sim.minds[sim.character(name).id].tail]


def test_an_old_folder_moves_to_its_new_name_with_its_memories(
    old_vault: tuple[Path, Path],
) -> None:
    vault, world_file = old_vault
    sim = Simulation.open(vault, world_file, notice=None)
    try:
        assert any("The hives hum today." in text for text in thoughts(sim, "Zoë"))
    finally:
        sim.close()
    assert (vault / "agents" / "Zoe" / "memories.jsonl").is_file()
    assert not (vault / "agents" / "Zo").exists()
    snapshot = (vault / "world" / "world.yaml").read_text(encoding="utf-8")
    assert "\n- Zoe\n" in snapshot
    assert "\n- Zo\n" not in snapshot
    assert snapshot.startswith("# mudsim world snapshot")  # its comment for people kept


def test_a_move_cut_off_before_the_world_file_was_written_is_finished(
    old_vault: tuple[Path, Path],
) -> None:
    vault, world_file = old_vault
    (vault / "agents" / "Zo").rename(vault / "agents" / "Zoe")  # moved; world.yaml not yet
    sim = Simulation.open(vault, world_file, notice=None)
    try:
        assert any("The hives hum today." in text for text in thoughts(sim, "Zoë"))
    finally:
        sim.close()
    assert "\n- Zoe\n" in (vault / "world" / "world.yaml").read_text(encoding="utf-8")


def test_reading_an_old_vault_without_its_lock_says_what_moves_it(
    old_vault: tuple[Path, Path],
) -> None:
    vault, _world_file = old_vault
    with pytest.raises(VaultError, match=r"Zoë's folder is agents/Zoe now, and it was not moved"):
        Vault(vault).load_world()
    assert (vault / "agents" / "Zo").is_dir()  # a read moves nothing


def test_an_old_folder_whose_new_name_is_taken_stays_and_says_so(
    old_vault: tuple[Path, Path],
) -> None:
    vault, world_file = old_vault
    (vault / "agents" / "Zoe").mkdir()
    (vault / "agents" / "Zoe" / "memories.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(VaultError, match=r"was not moved there .*someone else's"):
        Simulation.open(vault, world_file, notice=None)
    assert (vault / "agents" / "Zo" / "memories.jsonl").is_file()
