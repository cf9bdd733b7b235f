"""The run record survives a SIGKILL like the journal: the tapes read back (a torn last
line left out), nothing before it is lost, and the next run records anew."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from helpers import mudsim

from engine.vault.run_store import CALLS, EVENTS, read_tape, runs

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
from harness_common import check_tapes


@pytest.mark.parametrize("passes", [3, 40])
def test_a_kill_mid_line_leaves_tapes_that_read(
    world_file: Path, tmp_path: Path, passes: int
) -> None:
    vault = tmp_path / "vault"
    killed = mudsim("run", world_file, "--vault", vault, "--headless", "--turns", "20",
                    "--llm", "fake:look;say Hi;go north", crash_at=f"journal-mid-line:{passes}")  # fmt: skip
    assert killed.returncode == -signal.SIGKILL
    (run,) = runs(vault)
    assert check_tapes(vault) == []
    events = read_tape(run.folder / EVENTS)
    assert events
    assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    assert not (run.folder / "end.json").exists()  # it never ended
    after = mudsim("run", world_file, "--vault", vault, "--headless", "--turns", "1",
                   "--llm", "fake:look")  # fmt: skip
    assert after.returncode == 0, after.stderr
    first, second = runs(vault)
    assert first.folder == run.folder
    assert read_tape(second.folder / EVENTS)[-1]["kind"] == "end"
    assert read_tape(second.folder / CALLS)
