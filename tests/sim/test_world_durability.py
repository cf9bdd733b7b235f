"""A real ``mudsim do`` killed (SIGKILL, through the ``world-save-mid`` crash point)
in the middle of a world save after ``@dig``: the vault loads, and the room dug is
there."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from helpers import mudsim

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default


@pytest.mark.parametrize(
    "crash_at",
    [
        "world-save-mid:1",  # in the save @dig makes when it commits
        "world-save-mid:2",  # in the save at the end of `do`, world.yaml written, agent.md not
    ],
)
def test_a_kill_in_the_middle_of_a_world_save_after_dig_leaves_a_vault_that_loads(
    world_file: Path, vault_dir: Path, crash_at: str
) -> None:
    seeded = mudsim("do", world_file, "--vault", vault_dir, "look")
    assert seeded.returncode == 0, seeded.stderr

    killed = mudsim(
        "do", world_file, "--vault", vault_dir, "--as", "Bea", "@dig The Shed", "go shed",
        crash_at=crash_at,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    status = mudsim("status", "--vault", vault_dir, "--json")
    assert status.returncode == 0, status.stderr
    assert "Bea" in [agent["name"] for agent in json.loads(status.stdout)["agents"]]

    look = mudsim("do", world_file, "--vault", vault_dir, "--as", "Bea", "look", "go shed")
    assert look.returncode == 0, look.stderr
    assert look.stderr == ""
    first, second = look.stdout.split("\n> go shed\n")
    assert first.startswith("> look\nThe Yard\n"), "Bea's walk into the shed was not saved"
    assert "shed (The Shed)" in first, "the room dug survived the kill"
    assert "The Shed\nA newly made room." in second
