"""The world's save order: a save cut off at any file leaves a vault that loads, in the
old state or the new one, and a character whose room the world file lacks (left by an
older mudsim's save order) goes to the start room with a warning."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import run

from engine.sim.simulation import Simulation
from engine.vault import world_store


def open_sim(vault_dir: Path, world_file: Path, warnings: list[str] | None = None) -> Simulation:
    sink = warnings if warnings is not None else []
    return Simulation.open(vault_dir, world_file, warn=sink.append)


def dig_and_enter(vault_dir: Path, world_file: Path) -> None:
    """Bea (a builder in the yard) digs The Shed and walks in; the world is not saved."""
    sim = open_sim(vault_dir, world_file)
    assert run(sim, "Bea", "@dig The Shed -> Rakes and a cobweb.").ok
    assert run(sim, "Bea", "go shed").ok
    assert sim.character("Bea").location == "room-1"
    sim.close()


def test_a_character_in_a_room_the_world_file_lacks_goes_to_the_start_room(
    vault_dir: Path, world_file: Path
) -> None:
    """What an older save order left after a kill between the agent files and the world
    file: agent.md in the dug room, world.yaml without it. Loading used to refuse."""
    open_sim(vault_dir, world_file).close()
    old_world = (vault_dir / "world" / "world.yaml").read_bytes()
    sim = open_sim(vault_dir, world_file)
    assert run(sim, "Bea", "@dig The Shed").ok
    assert run(sim, "Bea", "go shed").ok
    sim.save()
    sim.close()
    (vault_dir / "world" / "world.yaml").write_bytes(old_world)

    warnings: list[str] = []
    sim = open_sim(vault_dir, world_file, warnings)
    try:
        bea = sim.character("Bea")
        assert "room-1" not in sim.world.rooms
        assert bea.location == "hall", "the start room is the world file's first room"
        assert len(warnings) == 1, warnings
        assert "Bea's room 'room-1'" in warnings[0]
        assert "the start room, The Hall" in warnings[0]
        assert run(sim, "Bea", "look").text.startswith("The Hall")
    finally:
        sim.close()


def test_start_room_is_the_first_room(vault_dir: Path, world_file: Path) -> None:
    open_sim(vault_dir, world_file).close()
    world = world_store.load_world(vault_dir, warn=pytest.fail)
    assert world_store.start_room(world).id == "hall"


def test_a_building_command_saves_the_world_when_it_commits(
    vault_dir: Path, world_file: Path
) -> None:
    """No save at the end (as if killed): the room dug is on disk already."""
    dig_and_enter(vault_dir, world_file)
    world = world_store.load_world(vault_dir, warn=pytest.fail)
    assert world.rooms["room-1"].name == "The Shed"
    assert world.rooms["yard"].exits["shed"] == "room-1"
    assert world.next_room_number == 2
    assert world.find_characters("Bea")[0].location == "yard", "walking waits for the next save"


def test_the_world_is_saved_before_anyone_remembers_the_building(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When world.yaml with the new room lands, no journal mentions the dig yet: a kill
    there can never leave a memory of a room the world lacks."""
    open_sim(vault_dir, world_file).close()
    journals = [vault_dir / "agents" / name / "memories.jsonl" for name in ("Bea", "Bo")]
    seen: list[bool] = []
    real_replace: Callable[..., None] = os.replace

    def replace(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == "world.yaml":
            seen.append(any(p.exists() and "Shed" in p.read_text() for p in journals))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    sim = open_sim(vault_dir, world_file)
    assert run(sim, "Bea", "@dig The Shed").ok
    sim.close()
    assert seen == [False]
    assert all("Shed" in p.read_text() for p in journals), "both remember it afterwards"


def _writes_in_a_save(vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    calls: list[str] = []
    real_replace = os.replace

    def counting(src: str | Path, dst: str | Path) -> None:
        calls.append(str(dst))
        real_replace(src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", counting)
        sim = open_sim(vault_dir, world_file)
        assert run(sim, "Pat", "go north").ok  # changes Pat's agent.md only
        sim.vault.save_world(sim.world)
        sim.close()
    return len(calls)


@pytest.mark.parametrize("cut_at", range(7))
def test_a_save_cut_off_at_any_file_leaves_a_vault_that_loads(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch, cut_at: int
) -> None:
    """Dig, walk in, save; dig again, walk on; the next save fails at its ``cut_at``-th
    file. Whatever landed, the vault loads and everyone stands in a room of the world
    loaded, in the old place or the new one."""
    open_sim(vault_dir, world_file).close()
    sim = open_sim(vault_dir, world_file)
    for line in ("@dig The Shed", "go shed"):
        assert run(sim, "Bea", line).ok
    sim.save()
    real_replace = os.replace
    written: list[str] = []

    def failing(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name in ("world.yaml", "agent.md"):
            if len(written) == cut_at:
                raise OSError(28, "No space left on device")
            written.append(Path(dst).parent.name)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    try:
        for line in ("@dig The Loft", "go loft"):
            assert run(sim, "Bea", line).ok
        assert run(sim, "Pat", "go north").ok
        sim.vault.save_world(sim.world)
    except OSError:
        pass
    monkeypatch.undo()
    sim.close()

    warnings: list[str] = []
    sim = open_sim(vault_dir, world_file, warnings)
    try:
        assert warnings == []
        bea, pat = sim.character("Bea"), sim.character("Pat")
        assert bea.location in ("room-1", "room-2"), written
        assert bea.location in sim.world.rooms, written
        assert pat.location in ("hall", "yard"), written
        assert "room-1" in sim.world.rooms
    finally:
        sim.close()


def test_an_unchanged_world_is_not_rewritten(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    open_sim(vault_dir, world_file).close()
    # world.yaml (its comment says who is where) and Pat's agent.md
    assert _writes_in_a_save(vault_dir, world_file, monkeypatch) == 2


def test_a_new_vault_cut_off_mid_seed_is_seeded_again(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first save writes the characters before world.yaml (which marks the vault
    seeded), so a seed cut off half-way is not a vault with missing characters."""
    real_replace = os.replace
    count = [0]

    def failing(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name in ("world.yaml", "agent.md"):
            count[0] += 1
            if count[0] == 3:
                raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="Input/output error"):
        open_sim(vault_dir, world_file)
    monkeypatch.undo()
    assert not (vault_dir / "world" / "world.yaml").exists()
    sim = open_sim(vault_dir, world_file)
    assert [c.name for c in sim.world.characters.values()] == ["Ada", "Bo", "Pat", "Pip", "Bea"]
    sim.close()


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\u2029", "\x85", "\x0b"])
def test_a_name_with_a_line_break_cannot_break_the_who_is_where_comment(
    vault_dir: Path, world_file: Path, brk: str
) -> None:
    """Names come through the parser and the world schema, which refuse line breaks;
    the snapshot's comment flattens them anyway, so no name can ever end it early."""
    sim = open_sim(vault_dir, world_file)
    try:
        room = sim.world.rooms[sim.character("Bo").location]
        room.name = f"The Yard{brk}rooms: []"
        sim.save()
    finally:
        sim.close()
    again = world_store.load_world(vault_dir)
    assert again.rooms[room.id].name == f"The Yard{brk}rooms: []"


def test_a_world_save_that_fails_warns_and_the_next_save_writes_it(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk at a building command's save: the command still happens, the user is
    told in one line, and the next save (the disk has room again) writes the room."""
    import errno

    warnings: list[str] = []
    sim = open_sim(vault_dir, world_file, warnings)
    try:
        real_write = world_store.atomic_write_text

        def full_disk(path: Path, text: str) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(world_store, "atomic_write_text", full_disk)
        assert run(sim, "Bea", "@dig The Shed").ok
        assert len(warnings) == 1
        assert "the world could not be saved now" in warnings[0]
        assert "No space left on device" in warnings[0]
        assert "room-1" not in world_store.load_world(vault_dir, warn=pytest.fail).rooms

        monkeypatch.setattr(world_store, "atomic_write_text", real_write)
        sim.save()
    finally:
        sim.close()
    assert world_store.load_world(vault_dir, warn=pytest.fail).rooms["room-1"].name == "The Shed"


def test_reading_a_profile_saves_nothing(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the commands that change the saved world save it: a read writes no file."""
    sim = open_sim(vault_dir, world_file)
    try:

        def no_writes(path: Path, text: str) -> None:
            raise AssertionError(f"a read wrote {path}")

        monkeypatch.setattr(world_store, "atomic_write_text", no_writes)
        monkeypatch.setattr(world_store, "_write_if_changed", no_writes)
        assert run(sim, "Bea", "@my-profile").ok
        assert run(sim, "Bea", "@my-description").ok
    finally:
        monkeypatch.undo()
        sim.close()


def test_each_change_to_a_character_reaches_its_file_at_the_next_save(
    vault_dir: Path, world_file: Path
) -> None:
    """agent.md texts are rendered once per distinct character: a change made in place
    (a list appended to, a field set) is a new character and is written."""
    sim = open_sim(vault_dir, world_file)
    bea = sim.character("Bea")
    agent_md = vault_dir / "agents" / "Bea" / "agent.md"
    sim.save()
    before = agent_md.read_text("utf-8")
    bea.aliases.append("the builder")
    sim.save()
    assert "the builder" in agent_md.read_text("utf-8")
    bea.goal = "a shed with a door"
    bea.aliases.remove("the builder")
    sim.save()
    after = agent_md.read_text("utf-8")
    assert "the builder" not in after
    assert "goal: a shed with a door" in after
    bea.goal = ""
    sim.save()
    assert agent_md.read_text("utf-8") == before  # the same character, the same text
    sim.close()
