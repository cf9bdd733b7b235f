"""One process owns a vault: a second open fails at once, in this process or another,
while ``status`` still reads it; closing (or dying) gives the vault back."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine
from engine.cli import main
from engine.errors import VaultLockedError
from engine.sim.simulation import Simulation

REPO = Path(engine.__file__).resolve().parent.parent

HOLDER = """\
import sys
from pathlib import Path
from engine.sim.simulation import Simulation

sim = Simulation.open(Path(sys.argv[1]), Path(sys.argv[2]))
Path(sys.argv[3]).write_text("ready", encoding="utf-8")
sys.stdin.readline()
sim.close()
"""


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MUDSIM_DEBUG"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the child: ask it to close, then kill it if it has not gone."""
    if proc.poll() is None:
        try:
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (subprocess.TimeoutExpired, OSError):
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def holder(vault_dir: Path, world_file: Path, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another process that owns the vault until its stdin closes."""
    ready = tmp_path / "holder-ready"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(vault_dir), str(world_file), str(ready)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=child_env(),
    )
    try:
        deadline = time.monotonic() + 30
        while not ready.exists():
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                pytest.fail(f"the holder process ended early ({proc.returncode}): {err}")
            if time.monotonic() > deadline:
                pytest.fail("the holder process did not open the vault in 30 s")
            time.sleep(0.02)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()
        if proc.stdin is not None:
            proc.stdin.close()


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- in one process -----------------------------------------------------------------


def test_a_second_open_in_the_same_process_is_refused(
    sim: Simulation, vault_dir: Path, world_file: Path
) -> None:
    with pytest.raises(VaultLockedError) as caught:
        Simulation.open(vault_dir, world_file)
    assert str(vault_dir / ".lock") in str(caught.value)
    assert "in use" in str(caught.value)
    with pytest.raises(VaultLockedError):
        Simulation.open(vault_dir, world_file)
    assert sim.lock is not None
    assert sim.lock.held, "a refused open does not take the lock from its owner"


def test_the_cli_is_refused_while_a_simulation_holds_the_vault(
    sim: Simulation, vault_dir: Path, world_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (vault_dir / "world" / "world.yaml").read_bytes()
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "go north")
    assert code == 2
    assert out == ""
    assert err.startswith("mudsim: ")
    assert err.count("\n") == 1
    assert "lock" in err
    assert (vault_dir / "world" / "world.yaml").read_bytes() == before
    assert sim.character("Pat").location == "hall"


def test_after_close_the_vault_opens_again(vault_dir: Path, world_file: Path) -> None:
    first = Simulation.open(vault_dir, world_file)
    first.close()
    assert first.lock is None
    first.close()  # closing twice is harmless
    second = Simulation.open(vault_dir, world_file)
    try:
        assert second.lock is not None
        assert second.lock.held
    finally:
        second.close()
    third = Simulation.open(vault_dir, world_file)
    third.close()


# -- across processes ---------------------------------------------------------------


def test_another_process_holding_the_vault_makes_do_fail(
    holder: subprocess.Popen[bytes],
    vault_dir: Path,
    world_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("mudsim: ")
    assert "lock" in lines[0]
    assert "Traceback" not in err
    with pytest.raises(VaultLockedError):
        Simulation.open(vault_dir, world_file)
    assert holder.poll() is None, "the holder is still running"


def test_status_works_while_another_process_holds_the_vault(
    holder: subprocess.Popen[bytes], vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "status", "--vault", vault_dir)
    assert code == 0, err
    for name in ("Ada", "Bo", "Pat", "Pip", "Bea"):
        assert f"Memory of {name}" in out
    code, out, err = cli(capsys, "status", "--vault", vault_dir, "--json", "--agent", "Bo")
    assert code == 0, err
    assert '"name": "Bo"' in out


def test_the_vault_opens_again_once_the_other_process_closes_it(
    holder: subprocess.Popen[bytes], vault_dir: Path, world_file: Path
) -> None:
    with pytest.raises(VaultLockedError):
        Simulation.open(vault_dir, world_file)
    stop(holder)
    assert holder.returncode == 0
    sim = Simulation.open(vault_dir, world_file)
    sim.close()


def test_a_killed_owner_leaves_no_stale_lock(
    holder: subprocess.Popen[bytes],
    vault_dir: Path,
    world_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    holder.kill()
    holder.wait(timeout=10)
    assert (vault_dir / ".lock").exists()
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 0, err
    assert "The Hall" in out


def test_a_cli_process_is_refused_while_this_process_holds_the_vault(
    sim: Simulation, vault_dir: Path, world_file: Path
) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "engine.cli",
            "do",
            str(world_file),
            "--vault",
            str(vault_dir),
            "look",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env=child_env(),
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("mudsim: ")
    assert "lock" in done.stderr
    assert "Traceback" not in done.stderr
