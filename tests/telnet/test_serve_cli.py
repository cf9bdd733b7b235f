"""``mudsim serve`` and ``mudsim run --telnet`` as real processes: two players log in,
see each other and the agents in real time, a GMCP client gets Room.Info on each move;
SIGTERM tells every client, saves and exits 0, and the run replays exactly."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import sys
from pathlib import Path

import pytest
from helpers import REPO, mudsim, mudsim_command, mudsim_env
from telnet_client import WAIT, Client, eventually, plain

from engine.vault.accounts import Account, AccountStore, hash_password

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),
]  # whole served worlds in subprocesses: CI runs them (-m slow)

FAKE = "fake:say Hello from the agents.;look"


class Served:
    """A ``mudsim serve`` (or ``run --telnet``) process and the port it said it took."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.err = ""
        self.port = 0

    @classmethod
    async def start(cls, *argv: object) -> Served:
        process = await asyncio.create_subprocess_exec(
            *mudsim_command(*argv), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=REPO, env=mudsim_env(),
        )  # fmt: skip
        served = cls(process)
        assert process.stderr is not None
        try:
            async with asyncio.timeout(WAIT):
                while not (found := re.search(r"connect with: telnet \S+ (\d+)", served.err)):
                    line = (await process.stderr.readline()).decode()
                    if not line:
                        raise AssertionError(f"mudsim ended: {served.err}")
                    served.err += line
        except BaseException:
            await served.__aexit__()
            raise
        served.port = int(found.group(1))
        return served

    async def __aenter__(self) -> Served:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """A process the test did not stop (it failed first) is killed."""
        if self.process.returncode is None:
            self.process.kill()
            await self.process.communicate()

    async def stop(self) -> tuple[int, str, str]:
        """SIGTERM; (exit code, stdout, stderr)."""
        self.process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(self.process.communicate(), 60)
        return self.process.returncode or 0, out.decode(), self.err + err.decode()


def _accounts(vault: Path) -> None:
    store = AccountStore(vault)
    for name in ("Pat", "Pip"):
        store.add(Account(name, None, hash_password(f"{name.lower()}-password")))


async def test_serve_two_players_and_the_agents_then_sigterm_saves_and_replays(
    tmp_path: Path, world_file: Path
) -> None:
    vault = tmp_path / "vault"
    _accounts(vault)
    async with await Served.start("serve", world_file, "--vault", vault, "--telnet", "0",
                                "--llm", FAKE, "--seed", "3") as served:  # fmt: skip
        assert "connect with: telnet 127.0.0.1" in served.err
        assert ("limits: 50 players (one more for an admin), 12 logging in at once (3 from "
                "one address) for at most 30 s") in served.err  # fmt: skip
        pat, pip = await Client.open(served.port), await Client.open(served.port, term="Mudlet")
        await pat.login("Pat")
        await pip.login("Pip")
        await pat.until("Ada ", within=90.0)  # an agent, live (whatever she does next)
        await pip.command("say Hello, Pat.", "Pip> ")
        await pat.until('Pip says, "Hello, Pat."')
        await pat.command("say Hello, Pip.", "Pat> ")
        await pip.until('Pat says, "Hello, Pip."')
        await pip.command("go north", "Pip> ")
        await eventually(lambda: pip.gmcp.get("Room.Info", {}).get("id") == "yard")
        await pip.command("go south", "Pip> ")
        await eventually(lambda: pip.gmcp.get("Room.Info", {}).get("id") == "hall")
        await pip.command("go north", "Pip> ")
        code, out, err = await served.stop()
    for client in (pat, pip):
        assert "The world is stopping now; it is being saved. Goodbye." in plain(
            await client.closed()
        )
    assert code == 0, err
    assert "mudsim: Pat logged in from 127.0.0.1" in err
    assert "Traceback" not in err
    assert '[The Hall] Pip says, "Hello, Pat."' in out  # the narrative, as run --headless
    assert re.search(r"^Run summary: 2 agents, \d+ turns", out, re.MULTILINE)
    saved = (vault / "world" / "world.yaml").read_text(encoding="utf-8")
    assert "#   Pip is in The Yard" in saved
    assert (vault / "config" / "telnet.md").is_file()
    assert "Pip logged in from 127.0.0.1" in (vault / "logs" / "telnet.log").read_text("utf-8")
    (run,) = (vault / "runs").iterdir()
    replayed = await asyncio.to_thread(mudsim, "replay", run, "--vault", tmp_path / "again")
    assert replayed.returncode == 0, replayed.stderr
    assert "byte-identical" in replayed.stdout


async def test_serve_on_a_port_in_use_is_one_line_and_exit_2(
    tmp_path: Path, world_file: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = await asyncio.to_thread(mudsim, "serve", world_file, "--vault", tmp_path / "v",
                                       "--telnet", str(port), "--llm", FAKE)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.endswith(f"mudsim: cannot listen on 127.0.0.1 port {port}: "
                                "Address already in use\n")  # fmt: skip


def test_serve_with_no_llm_is_exit_3(tmp_path: Path, world_file: Path) -> None:
    done = mudsim("serve", world_file, "--vault", tmp_path / "v", "--telnet", "0")
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["run", "--bind", "0.0.0.0"], "--bind and --open go with --telnet PORT"),
        (["serve", "--telnet", "70000"], "expected a port from 0 to 65535, got '70000'"),
    ],
)
def test_bad_telnet_options_are_one_line(
    tmp_path: Path, world_file: Path, argv: list[str], error: str
) -> None:
    done = mudsim(argv[0], world_file, "--vault", tmp_path / "v", *argv[1:])
    assert done.returncode == 2
    assert error in done.stderr
    assert done.stderr.count("\n") == 1


async def test_run_headless_with_telnet_serves_as_serve_does(
    tmp_path: Path, world_file: Path
) -> None:
    vault = tmp_path / "vault"
    _accounts(vault)
    async with await Served.start("run", world_file, "--vault", vault, "--headless",
                                  "--telnet", "0", "--llm", FAKE) as served:  # fmt: skip
        client = await Client.open(served.port)
        await client.login("Pat")
        code, _out, err = await served.stop()
    assert code == 0, err


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal for the TUI")
async def test_run_with_telnet_serves_beside_the_tui(tmp_path: Path, world_file: Path) -> None:
    import os
    import pty

    vault = tmp_path / "vault"
    _accounts(vault)
    main, terminal = pty.openpty()  # the TUI draws on a real (pseudo) terminal
    env = {**mudsim_env(), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    process = await asyncio.create_subprocess_exec(
        *mudsim_command("run", world_file, "--vault", vault, "--telnet", "0", "--llm", FAKE),
        stdin=terminal, stdout=terminal, stderr=terminal, cwd=REPO, env=env,  # Textual: stderr
    )  # fmt: skip
    os.close(terminal)
    screen = bytearray()
    loop = asyncio.get_running_loop()
    loop.add_reader(main, lambda: screen.extend(_read(main)))
    try:
        async with asyncio.timeout(WAIT):  # the TUI is up: then the server listens
            while b"Fixture" not in screen:  # noqa: ASYNC110 - the screen fills as it draws
                await asyncio.sleep(0.05)
        port = await _listening_port(vault)
        client = await Client.open(port)
        await client.login("Pip")
        await client.until("Ada ", within=90.0)  # an agent, live (whatever she does next)
        await client.command("say Hello from telnet.", "Pip> ")
        os.write(main, b"q")  # quit the TUI: the client is told, the vault saved
        assert "The world is stopping now" in await client.closed()
        assert await asyncio.wait_for(process.wait(), 60) == 0
    finally:
        loop.remove_reader(main)
        if process.returncode is None:
            process.kill()
            await process.wait()
        os.close(main)
    journal = (vault / "agents" / "Ada" / "memories.jsonl").read_text(encoding="utf-8")
    assert 'Pip says, \\"Hello from telnet.\\"' in journal
    assert "Pip logged in from 127.0.0.1" in (vault / "logs" / "telnet.log").read_text("utf-8")


def _read(fd: int) -> bytes:
    import os

    try:
        return os.read(fd, 65536)
    except OSError:
        return b""


async def _listening_port(vault: Path) -> int:
    """The port ``run --telnet 0`` took, from the vault's connection log."""
    log = vault / "logs" / "telnet.log"
    async with asyncio.timeout(WAIT):
        while not (log.exists() and (found := re.search(r"port (\d+)", log.read_text("utf-8")))):  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # a file another process writes
    return int(found.group(1))


def test_listening_beyond_this_machine_is_warned_of() -> None:
    from engine.telnet.serve import exposure_warning

    for loopback in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert exposure_warning(loopback) is None
    for wide in ("0.0.0.0", "::", "192.168.1.20", "mud.example.org"):
        warning = exposure_warning(wide)
        assert warning is not None
        assert "telnet sends passwords unencrypted" in warning
