"""A fork without --headless goes on in the terminal UI after its branch point."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from helpers import mudsim

from engine.lab.fork import ForkOptions, fork_run
from engine.tui.app import MudsimApp
from engine.tui.fork_view import in_the_tui
from engine.vault.run_store import read_tape, runs


async def test_a_fork_in_the_tui_runs_live_after_the_branch(
    world_file: Path, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    done = mudsim("run", world_file, "--vault", vault, "--headless", "--turns", "3",
                  "--llm", "fake:say Morning;look")  # fmt: skip
    assert done.returncode == 0, done.stderr
    parent = runs(vault)[0].folder
    seen: list[str] = []

    async def drive(app: MudsimApp) -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(200):
                if all(n >= 1 for n in app.scheduler.turns_taken.values()):
                    break
                await asyncio.sleep(0.05)
            seen.append(str(app.sub_title))
            await pilot.press("q")

    options = ForkOptions(at=2, turns=1, llm="fake:say From the fork", headless=False)
    await fork_run(parent, tmp_path / "fork", options, os.environ,
                   show=in_the_tui(options.turns, options.model, run_app=drive))  # fmt: skip
    assert seen
    (fork,) = runs(tmp_path / "fork")
    events = read_tape(fork.folder / "events.jsonl")
    branch = next(e["n"] for e in events if e["kind"] == "branch")
    said = [e["text"] for e in events[branch:] if e["kind"] == "event"]
    assert any("From the fork" in text for text in said)
    assert json.loads((fork.folder / "run.json").read_text())["branch_at"] == 2
