"""The vault on disk: default config files, settings read back, atomic writes, the world
saved and restored, corrupt files refused without being touched, memory state and notes."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import frontmatter
import pytest
from helpers import FIXTURE_WORLD, run

from engine.config import (
    AIDefaultsConfig,
    LimitsConfig,
    LLMConfig,
    MemoryCompactionConfig,
    RecordConfig,
    Settings,
)
from engine.errors import VaultError, VaultLockedError, WorldFileError
from engine.memory.record import MemoryKind
from engine.memory.waterfall import Windows
from engine.sim.simulation import Simulation
from engine.sim.status import read_status
from engine.vault.files import atomic_write_text

CONFIG_DEFAULTS = {
    "llm.md": LLMConfig(),
    "memory_compaction.md": MemoryCompactionConfig(),
    "ai_defaults.md": AIDefaultsConfig(),
    "limits.md": LimitsConfig(),
    "record.md": RecordConfig(),
}
STATE_KEYS = {
    "memories",
    "boundary",
    "in_flight",
    "failures",
    "last_error",
    "rejections",
    "held_for_memory",
    "updated",
}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (but the lock file) and its bytes."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != ".lock"
    }


def journal_lines(vault_dir: Path, folder: str) -> list[dict[str, Any]]:
    path = vault_dir / "agents" / folder / "memories.jsonl"
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines()]


def seed(vault_dir: Path, world_file: Path, *commands: tuple[str, str]) -> None:
    """Open the vault (seeding it), run ``(who, command)`` pairs, save and close."""
    sim = Simulation.open(vault_dir, world_file)
    try:
        for who, line in commands:
            assert run(sim, who, line).ok, line
        sim.save()
    finally:
        sim.close()


# -- config -------------------------------------------------------------------------


def test_a_new_vault_gets_every_config_file_with_its_defaults(
    sim: Simulation, vault_dir: Path
) -> None:
    config = vault_dir / "config"
    assert sorted(p.name for p in config.iterdir()) == sorted(CONFIG_DEFAULTS)
    for name, defaults in CONFIG_DEFAULTS.items():
        text = (config / name).read_text(encoding="utf-8")
        assert text.startswith("---\n")
        post = frontmatter.loads(text)
        assert post.metadata == defaults.model_dump(mode="json"), name
        assert post.content.strip().startswith("#"), f"{name} explains its settings"
    assert sim.settings == Settings()


def test_existing_config_files_are_not_rewritten(vault_dir: Path, world_file: Path) -> None:
    seed(vault_dir, world_file)
    path = vault_dir / "config" / "ai_defaults.md"
    path.write_text("---\nthink_interval: 2.5\n---\nMy own words.\n", encoding="utf-8")
    (vault_dir / "config" / "llm.md").unlink()
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert sim.settings.ai_defaults.think_interval == 2.5
    finally:
        sim.close()
    assert path.read_text(encoding="utf-8") == "---\nthink_interval: 2.5\n---\nMy own words.\n"
    restored = frontmatter.loads((vault_dir / "config" / "llm.md").read_text(encoding="utf-8"))
    assert restored.metadata == LLMConfig().model_dump(mode="json"), "a missing file comes back"


def test_a_changed_compaction_setting_is_used(vault_dir: Path, world_file: Path) -> None:
    seed(vault_dir, world_file)
    path = vault_dir / "config" / "memory_compaction.md"
    text = path.read_text(encoding="utf-8")
    changed = text.replace("immediate_window: 64", "immediate_window: 8")
    assert changed != text
    path.write_text(changed, encoding="utf-8")

    sim = Simulation.open(vault_dir, world_file)
    try:
        ada, bo = sim.character("Ada"), sim.character("Bo")
        assert sim.settings.memory_compaction.immediate_window == 8
        assert sim.windows_for(ada) == Windows(8, 64)
        assert sim.minds[ada.id].windows == Windows(8, 64)
        assert sim.windows_for(bo) == Windows(4, 4), "a character's own windows still win"
    finally:
        sim.close()
    by_name = {s.name: s for s in read_status(vault_dir)}
    assert by_name["Ada"].windows == Windows(8, 64)
    assert by_name["Bo"].windows == Windows(4, 4)
    assert path.read_text(encoding="utf-8") == changed


@pytest.mark.parametrize(
    ("name", "front", "mentions"),
    [
        ("memory_compaction.md", "immediate_windw: 8", "immediate_windw"),
        ("memory_compaction.md", "immediate_window: 0", "immediate_window"),
        ("ai_defaults.md", "think_intervall: 3", "think_intervall"),
        ("llm.md", "endpoint: []", "endpoint"),
        ("llm.md", "endpoints: [{url: http://x, kind: grpc}]", "kind"),
    ],
)
def test_a_config_mistake_raises_naming_the_file(
    vault_dir: Path, world_file: Path, name: str, front: str, mentions: str
) -> None:
    seed(vault_dir, world_file)
    path = vault_dir / "config" / name
    path.write_text(f"---\n{front}\n---\nExplanation.\n", encoding="utf-8")
    before = snapshot(vault_dir)

    with pytest.raises(VaultError) as caught:
        Simulation.open(vault_dir, world_file)

    assert not isinstance(caught.value, VaultLockedError)
    assert str(path) in str(caught.value)
    assert mentions in str(caught.value)
    assert snapshot(vault_dir) == before
    with pytest.raises(VaultError) as again:
        Simulation.open(vault_dir, world_file)
    assert not isinstance(again.value, VaultLockedError), "a failed open gives the lock back"


# -- atomic writes ------------------------------------------------------------------


def test_saving_leaves_no_temporary_files(vault_dir: Path, world_file: Path) -> None:
    seed(
        vault_dir,
        world_file,
        ("Pat", "go north"),
        ("Pat", "note Moss -> Librarian."),
        ("Pat", "note Moss -> Owes me a coin."),
        ("Pat", "@dig The Shed"),
    )
    seed(vault_dir, world_file, ("Pat", "look"))
    leftovers = [p for p in vault_dir.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    hidden = sorted(p.name for p in vault_dir.rglob(".*"))
    assert hidden == [".lock"]


def test_a_failed_atomic_write_keeps_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "world" / "world.yaml"
    atomic_write_text(path, "old contents\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "new contents \ud800 that cannot be encoded\n")
    assert path.read_text(encoding="utf-8") == "old contents\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["world.yaml"]


# -- the world, saved and restored --------------------------------------------------


def test_the_world_and_memories_survive_save_and_reopen(vault_dir: Path, world_file: Path) -> None:
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert run(sim, "Pat", "go north").ok
        dug = run(sim, "Pat", "@dig The Shed -> A small shed of planks.")
        assert dug.ok
        assert "room-1" in dug.text
        assert run(sim, "Pat", "@set-description A traveller in a red cloak.").ok
        assert run(sim, "Bea", "shed").ok
        assert run(sim, "Ada", "think The lamp is brass.").ok
        rooms = {rid: copy.deepcopy(vars(room)) for rid, room in sim.world.rooms.items()}
        things = {tid: copy.deepcopy(vars(thing)) for tid, thing in sim.world.things.items()}
        people = {c.name: copy.deepcopy(vars(c)) for c in sim.world.characters.values()}
        order = [c.name for c in sim.world.characters.values()]
        next_room = sim.world.next_room_number
        counts = {c.name: sim.minds[c.id].count for c in sim.world.characters.values()}
        texts = {
            c.name: [m.text for m in sim.minds[c.id].tail] for c in sim.world.characters.values()
        }
        sim.save()
    finally:
        sim.close()

    assert next_room == 2
    assert rooms["room-1"]["name"] == "The Shed"
    assert rooms["room-1"]["exits"] == {"out": "yard"}
    assert rooms["yard"]["exits"]["shed"] == "room-1"
    assert counts["Bo"] >= 3
    assert counts["Pip"] >= 1

    sim = Simulation.open(vault_dir, world_file)
    try:
        world = sim.world
        assert {rid: vars(room) for rid, room in world.rooms.items()} == rooms
        assert {tid: vars(thing) for tid, thing in world.things.items()} == things
        assert {c.name: vars(c) for c in world.characters.values()} == people
        assert [c.name for c in world.characters.values()] == order
        assert world.next_room_number == next_room
        assert sim.character("Pat").location == "yard"
        assert sim.character("Bea").location == "room-1"
        assert sim.character("Pat").description == "A traveller in a red cloak."
        for character in world.characters.values():
            mind = sim.minds[character.id]
            assert mind.count == counts[character.name], character.name
            assert [m.text for m in mind.tail] == texts[character.name]
            new = mind.record(
                MemoryKind.THOUGHT, "after reopening", location=character.location, occupants=[]
            )
            assert new.seq == counts[character.name], character.name
        dug_again = run(sim, "Pat", "@dig The Barn")
        assert "room-2" in dug_again.text, "room ids continue, never reused"
    finally:
        sim.close()

    for name, count in counts.items():
        lines = journal_lines(vault_dir, name)
        assert [entry["seq"] for entry in lines] == list(range(len(lines)))
        assert lines[count]["text"] == "after reopening"


def test_memories_survive_a_close_without_save(vault_dir: Path, world_file: Path) -> None:
    seed(vault_dir, world_file)
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert run(sim, "Pat", "go north").ok
        count = sim.minds[sim.character("Bo").id].count
    finally:
        sim.close()
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert sim.minds[sim.character("Bo").id].count == count
        assert sim.minds[sim.character("Bo").id].tail[-1].text == "Pat arrives from The Hall."
    finally:
        sim.close()


def test_the_vault_wins_over_a_changed_world_file(vault_dir: Path, world_file: Path) -> None:
    seed(vault_dir, world_file, ("Pat", "go north"))
    world_file.write_text(
        world_file.read_text(encoding="utf-8")
        .replace("The Hall", "The Great Hall")
        .replace("A muddy yard.", "A paved yard."),
        encoding="utf-8",
    )
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert sim.world.rooms["hall"].name == "The Hall"
        assert sim.world.rooms["yard"].description == "A muddy yard."
        assert sim.character("Pat").location == "yard", "not reset to the world file's room"
    finally:
        sim.close()


def test_a_seeded_vault_still_checks_its_world_file_and_the_vault_wins(
    vault_dir: Path, world_file: Path, tmp_path: Path
) -> None:
    seed(vault_dir, world_file, ("Pat", "go north"))
    before = snapshot(vault_dir)
    with pytest.raises(WorldFileError, match=r"gone\.yaml"):
        Simulation.open(vault_dir, tmp_path / "gone.yaml")
    assert snapshot(vault_dir) == before
    renamed = tmp_path / "renamed.yaml"
    renamed.write_text(FIXTURE_WORLD.replace("name: The Yard", "name: The Muddy Yard"))
    sim = Simulation.open(vault_dir, renamed)
    try:
        assert sim.character("Pat").location == "yard"
        assert sim.world.rooms["yard"].name == "The Yard"  # the vault wins
    finally:
        sim.close()


# -- corrupt files ------------------------------------------------------------------


def _replace_middle_line(data: bytes) -> bytes:
    lines = data.split(b"\n")
    assert len(lines) >= 4, "the journal needs at least three records"
    lines[1] = b'{"seq": 1, "at": garbage'
    return b"\n".join(lines)


CORRUPTIONS: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "world.yaml not YAML": ("world/world.yaml", lambda _: b"rooms: [unclosed\n  - {\n"),
    "world.yaml a string": ("world/world.yaml", lambda _: b"just some garbage\n"),
    "world.yaml binary": ("world/world.yaml", lambda _: b"\xff\xfe\x00\x81garbage"),
    "world.yaml empty": ("world/world.yaml", lambda _: b""),
    "world.yaml unknown key": ("world/world.yaml", lambda data: data + b"weather: rainy\n"),
    "world.yaml exit to nowhere": (
        "world/world.yaml",
        lambda data: data.replace(b"north: yard", b"north: nowhere"),
    ),
    "agent.md bad front matter": (
        "agents/Ada/agent.md",
        lambda _: b"---\nname: [Ada\nid: ada\n---\n# Ada\n",
    ),
    "agent.md unknown key": (
        "agents/Ada/agent.md",
        lambda data: data.replace(b"\nid: ada\n", b"\nid: ada\ncolour: red\n"),
    ),
    "agent.md missing field": (
        "agents/Ada/agent.md",
        lambda data: data.replace(b"\nlocation: hall\n", b"\n"),
    ),
    # (An unknown room in agent.md is no error: tests/vault/test_world_store.py.)
    "memory-state.json not JSON": ("agents/Ada/memory-state.json", lambda _: b"{not json"),
    "memory-state.json wrong shape": (
        "agents/Ada/memory-state.json",
        lambda _: b'{"memories": -1, "colour": "red"}',
    ),
    "memories.jsonl middle line": ("agents/Bo/memories.jsonl", _replace_middle_line),
}


@pytest.mark.parametrize(("relative", "corrupt"), CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupt_vault_file_stops_the_open_and_is_left_alone(
    vault_dir: Path,
    world_file: Path,
    relative: str,
    corrupt: Callable[[bytes], bytes],
) -> None:
    seed(vault_dir, world_file, ("Pat", "go north"), ("Pat", "say hello"), ("Pat", "go south"))
    path = vault_dir / relative
    corrupted = corrupt(path.read_bytes())
    assert corrupted != path.read_bytes()
    path.write_bytes(corrupted)
    before = snapshot(vault_dir)

    with pytest.raises(VaultError) as caught:
        Simulation.open(vault_dir, world_file)

    assert not isinstance(caught.value, VaultLockedError)
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value), "one line for the user"
    assert path.read_bytes() == corrupted
    assert snapshot(vault_dir) == before, "nothing in the vault was changed"

    with pytest.raises(VaultError) as again:
        Simulation.open(vault_dir, world_file)
    assert not isinstance(again.value, VaultLockedError), "a failed open gives the lock back"
    assert snapshot(vault_dir) == before


# -- memory state and notes ---------------------------------------------------------


def test_memory_state_is_written_on_save(vault_dir: Path, world_file: Path) -> None:
    started = datetime.now(UTC) - timedelta(seconds=1)
    seed(vault_dir, world_file, ("Pat", "go north"), ("Pat", "say hello"))
    for folder in ("Ada", "Bo", "Pat", "Pip", "Bea"):
        state = json.loads(
            (vault_dir / "agents" / folder / "memory-state.json").read_text(encoding="utf-8")
        )
        assert set(state) == STATE_KEYS, folder
        assert state["memories"] == len(journal_lines(vault_dir, folder)), folder
        assert state["boundary"] == 0
        assert state["in_flight"] is False
        assert state["failures"] == 0
        assert state["last_error"] is None
        updated = datetime.fromisoformat(state["updated"])
        assert updated.tzinfo is not None
        assert started <= updated <= datetime.now(UTC) + timedelta(seconds=1)
    pat = json.loads((vault_dir / "agents" / "Pat" / "memory-state.json").read_text())
    assert pat["memories"] == 2


def test_memory_state_follows_the_journal_after_more_commands(
    vault_dir: Path, world_file: Path
) -> None:
    seed(vault_dir, world_file, ("Pat", "look"))
    seed(vault_dir, world_file, ("Pat", "look"), ("Pat", "look"))
    state = json.loads((vault_dir / "agents" / "Pat" / "memory-state.json").read_text())
    assert state["memories"] == 3 == len(journal_lines(vault_dir, "Pat"))


def read_note(path: Path) -> tuple[dict[str, Any], list[str]]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    post = frontmatter.loads(text)
    entries = [entry.strip() for entry in post.content.split("\n---\n")]
    return dict(post.metadata), entries


def test_notes_have_front_matter_and_entries_separated_by_a_rule(
    sim: Simulation, vault_dir: Path
) -> None:
    assert run(sim, "Pat", "note Moss -> Librarian; knows the ledger.").ok
    path = vault_dir / "agents" / "Pat" / "notes" / "Moss.md"
    first_meta, entries = read_note(path)
    assert set(first_meta) == {"title", "created", "updated", "sim"}  # sim: the world clock
    assert first_meta["title"] == "Moss"
    assert entries == ["Librarian; knows the ledger."]

    assert run(sim, "Pat", "note Moss -> Owes me a coin.").ok
    meta, entries = read_note(path)
    assert entries == ["Librarian; knows the ledger.", "Owes me a coin."]
    assert "\n---\n" in path.read_text(encoding="utf-8").split("---\n", 2)[2]
    assert meta["title"] == "Moss"
    assert meta["created"] == first_meta["created"]
    assert isinstance(meta["updated"], str)
    assert meta["updated"] >= meta["created"]

    assert run(sim, "Pat", "@overwrite-note Moss -> Only this.").ok
    meta, entries = read_note(path)
    assert entries == ["Only this."]
    assert meta["created"] == first_meta["created"]


def test_a_note_title_with_spaces_and_a_reason(sim: Simulation, vault_dir: Path) -> None:
    assert run(sim, "Pat", "note My Plans -> Find the key. | so I remember").ok
    path = vault_dir / "agents" / "Pat" / "notes" / "My_Plans.md"
    meta, entries = read_note(path)
    assert meta["title"] == "My Plans"
    assert meta["reason"] == "so I remember"
    assert entries == ["Find the key."]
    assert sim.vault.notes("Pat").read("My Plans") is not None


def test_an_unusable_note_title_fails_in_world_and_writes_nothing(
    sim: Simulation, vault_dir: Path
) -> None:
    before = snapshot(vault_dir)
    result = run(sim, "Pat", "note ../ -> escape")
    assert not result.ok
    after = snapshot(vault_dir)
    changed = {name for name in after if before.get(name) != after[name]}
    assert changed == {"agents/Pat/memories.jsonl"}, "only the failure is remembered"
    assert not (vault_dir / "agents" / "Pat" / "notes").exists()
