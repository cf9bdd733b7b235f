"""``mudsim play`` as a real process: lines on stdin, the narrative on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _play(
    world_file: Path, vault_dir: Path, stdin: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.cli", "play", str(world_file), "--vault", str(vault_dir), *extra],
        input=stdin, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip


def test_play_runs_lines_until_quit_and_saves(world_file: Path, vault_dir: Path) -> None:
    done = _play(world_file, vault_dir, "say Hello there\n\ngo north\nquit\nsay never runs\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("You are Pat, in Fixture.")
    assert "The Hall" in out  # the opening look
    assert 'You say, "Hello there"' in out
    assert "You go north to The Yard." in out
    assert "never runs" not in out
    assert "Saved. Goodbye." in out
    lines = (vault_dir / "agents" / "Ada" / "memories.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == [
        'Pat says, "Hello there"',
        "Pat leaves north to The Yard.",
    ]
    world = (vault_dir / "world" / "world.yaml").read_text()
    assert "Pat is in The Yard" in world


def test_play_ends_cleanly_at_end_of_input(world_file: Path, vault_dir: Path) -> None:
    done = _play(world_file, vault_dir, "look", "--as", "Bea")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("You are Bea, in Fixture.")
    assert "Saved. Goodbye." in done.stdout
    assert "Traceback" not in done.stderr


def test_play_with_unknown_character_is_one_line_exit_2(world_file: Path, vault_dir: Path) -> None:
    done = _play(world_file, vault_dir, "", "--as", "Nobody")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("mudsim: no character called 'Nobody'")
