"""A world file that grew after its vault was seeded, through real ``mudsim`` processes:
``run``/``play``/``do`` check it and name what the vault lacks in one line, and
``mudsim world apply`` adds that (``--dry-run``: says what, writes nothing) without
touching what the vault has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD, mudsim

from engine.vault.lock import VaultLock

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

GROWN = FIXTURE_WORLD.replace(
    "objects:\n",
    """\
  - id: garden
    name: The Garden
    description: Roses climb a wall.
    exits: {east: hall}
objects:
  - {id: rose, name: a red rose, location: garden}
""",
    1,
) + (
    """\
  - name: Cy
    type: agent
    location: garden
    profile: A shy poet.
"""
)


def files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` and its bytes (the lock file too: a dry run makes none)."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


@pytest.fixture
def seeded(world_file: Path, vault_dir: Path) -> Path:
    """A vault seeded from the fixture world, where Pat dug a room and spoke to Ada."""
    done = mudsim(
        "do", world_file, "--vault", vault_dir, "say Hello, Ada.", "@dig shed -> The Shed"
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # a fresh vault: no note
    return vault_dir


@pytest.fixture
def grown(tmp_path: Path) -> Path:
    path = tmp_path / "grown.yaml"
    path.write_text(GROWN, encoding="utf-8")
    return path


def test_do_names_what_the_vault_lacks_in_one_line_and_the_vault_wins(
    seeded: Path, grown: Path
) -> None:
    done = mudsim("do", grown, "--vault", seeded, "go west")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"mudsim: note: {grown} declares 1 room, 2 exits, 1 object, 1 character that the "
        f"vault lacks (the vault's world is used as saved); add them with: "
        f"mudsim world apply {grown} --vault {seeded}\n"
    )
    assert "Exits here: north, stair, down and shed." in done.stdout  # no garden yet


@pytest.mark.parametrize("verb", ["do", "play", "run"])
def test_a_broken_world_file_is_an_error_even_when_the_vault_is_seeded(
    seeded: Path, tmp_path: Path, verb: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GROWN.replace("name: The Garden", "nmae: The Garden"), encoding="utf-8")
    before = files(seeded)
    extra = {"do": ["look"], "play": ["--frozen"], "run": ["--headless", "--llm", "fake:"]}[verb]
    done = mudsim(verb, bad, "--vault", seeded, *extra)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"mudsim: {bad}, line ")
    assert "rooms[4].name: missing required field 'name'" in done.stderr
    assert done.stderr.count("\n") == 1
    assert files(seeded) == before


def test_dry_run_lists_what_would_be_added_and_writes_nothing(seeded: Path, grown: Path) -> None:
    before = files(seeded)
    done = mudsim("world", "apply", grown, "--vault", seeded, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"Would add to {seeded} from {grown}: 1 room, 2 exits, 1 object, 1 character "
        "(dry run: nothing written).",
        "  + room garden (The Garden)",
        "  + exit 'west' from The Hall to The Garden",
        "  + exit 'east' from The Garden to The Hall",
        "  + object rose (a red rose) in The Garden",
        "  + character Cy (agent) in The Garden",
    ]
    assert files(seeded) == before


def test_apply_adds_what_is_new_and_keeps_what_agents_built_and_remember(
    seeded: Path, grown: Path
) -> None:
    ada = seeded / "agents" / "Ada"
    memories = {name: (ada / name).read_bytes() for name in ("memories.jsonl", "agent.md")}
    done = mudsim("world", "apply", grown, "--vault", seeded)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Added to {seeded} from {grown}: 1 room, 2 exits")
    assert {name: (ada / name).read_bytes() for name in memories} == memories
    snapshot = (seeded / "world" / "world.yaml").read_text(encoding="utf-8")
    assert "The Shed" in snapshot  # what Pat built stays
    assert "The Garden" in snapshot
    cy = seeded / "agents" / "Cy"
    assert sorted(p.name for p in cy.iterdir()) == ["agent.md", "memory-state.json"]
    assert json.loads((cy / "memory-state.json").read_text())["memories"] == 0

    again = mudsim("world", "apply", grown, "--vault", seeded)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (
        f"Nothing to add: {seeded} already has every room, exit, object and character "
        f"{grown} declares.\n"
    )

    walk = mudsim("do", grown, "--vault", seeded, "go west", "say Hi, Cy.")
    assert walk.returncode == 0, walk.stderr
    assert walk.stderr == ""  # nothing lacking: no note
    assert "Also here: Cy." in walk.stdout
    heard = (cy / "memories.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["text"] for line in heard] == [
        "Pat arrives from The Hall.",
        'Pat says, "Hi, Cy."',
    ]
    status = mudsim("status", "--vault", seeded, "--agent", "Cy", "--json")
    assert json.loads(status.stdout)["agents"][0]["memories"] == 2


def test_what_cannot_be_added_is_named_and_the_rest_is_added(seeded: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed.yaml"
    changed.write_text(GROWN.replace("exits: {north: yard,", "exits: {north: garden,"))
    done = mudsim("world", "apply", changed, "--vault", seeded)
    assert done.returncode == 0, done.stderr
    assert "  not added: exit 'north' from The Hall: it leads to The Yard in the vault" in (
        done.stdout
    )
    look = mudsim("do", changed, "--vault", seeded, "look")
    assert "north (The Yard)" in look.stdout


def test_apply_takes_the_vault_lock(seeded: Path, grown: Path) -> None:
    lock = VaultLock(seeded)
    lock.acquire()
    try:
        before = files(seeded)
        done = mudsim("world", "apply", grown, "--vault", seeded)
    finally:
        lock.release()
    assert done.returncode == 2
    assert done.stderr.startswith("mudsim: the vault ")
    assert "in use by another mudsim process" in done.stderr
    assert done.stderr.count("\n") == 1
    assert files(seeded) == before


@pytest.mark.parametrize("problem", ["unseeded", "bad world", "no verb"])
def test_apply_errors_are_one_line_and_exit_2(
    world_file: Path, vault_dir: Path, tmp_path: Path, problem: str
) -> None:
    if problem == "unseeded":
        done = mudsim("world", "apply", world_file, "--vault", vault_dir)
        assert "is not a seeded vault" in done.stderr
        assert not vault_dir.exists()
    elif problem == "bad world":
        bad = tmp_path / "bad.yaml"
        bad.write_text("name: [x\n", encoding="utf-8")
        done = mudsim("world", "apply", bad, "--vault", vault_dir)
        assert str(bad) in done.stderr
    else:
        done = mudsim("world", "--vault", vault_dir)
    assert done.returncode == 2
    assert done.stderr.startswith("mudsim: ")
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_an_apply_killed_after_its_commit_leaves_a_vault_that_loads(
    seeded: Path, grown: Path
) -> None:
    killed = mudsim("world", "apply", grown, "--vault", seeded, crash_at="world-save-mid")
    assert killed.returncode == -9
    assert (seeded / "agents" / "Cy" / "agent.md").exists()  # written before world.yaml
    again = mudsim("world", "apply", grown, "--vault", seeded)
    assert again.stdout.startswith("Nothing to add")
    walk = mudsim("do", grown, "--vault", seeded, "--as", "Cy", "look")
    assert walk.returncode == 0, walk.stderr
    assert walk.stdout.startswith("The Garden\n")
