"""``mudsim serve --web`` and ``mudsim run --headless --web`` as real processes: the
page is said on stderr, a browser's websocket logs in and plays, telnet is not
listened on unless asked for, SIGTERM tells the page; bad TLS options are one line."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest
from helpers import REPO, mudsim, mudsim_command, mudsim_env
from web_page import WAIT, Page, texts

from engine.telnet.server import STOPPING
from engine.vault.accounts import Account, AccountStore, hash_password

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),
]  # whole served worlds in subprocesses: CI runs them (-m slow)

FAKE = "fake:say Hello from the agents.;look"


async def _started(process: asyncio.subprocess.Process) -> tuple[int, str]:
    """The web port the process said on stderr, and its stderr so far."""
    assert process.stderr is not None
    err = ""
    async with asyncio.timeout(WAIT):
        while not (found := re.search(r"play in a browser at http://127\.0\.0\.1:(\d+)/", err)):
            line = (await process.stderr.readline()).decode()
            if not line:
                raise AssertionError(f"mudsim ended: {err}")
            err += line
    return int(found.group(1)), err


@pytest.mark.parametrize("verb", [["serve"], ["run", "--headless"]], ids=["serve", "run"])
async def test_serve_with_only_web_plays_in_a_browser_and_stops_cleanly(
    tmp_path: Path, world_file: Path, verb: list[str]
) -> None:
    vault = tmp_path / "vault"
    AccountStore(vault).add(Account("Pip", None, hash_password("pip-password")))
    process = await asyncio.create_subprocess_exec(
        *mudsim_command(*verb, world_file, "--vault", vault, "--web", "0", "--llm", FAKE),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=REPO,
        env=mudsim_env(),
    )  # fmt: skip
    try:
        port, err = await _started(process)
        assert "connect with: telnet" not in err  # only the web was asked for
        page = await Page.open(port)
        await page.login("Pip")
        # the agents, live: whatever Ada does next beside Pip (what she says is not
        # certain: the fake script is dealt across both agents' calls, a repeated say is
        # replaced, and which agent goes first varies)
        await page.until("Ada ", "text", within=90.0)
        await page.command("go north", "Pip> ")
        process.send_signal(signal.SIGTERM)
        assert STOPPING in texts(await page.closed())
        _out, rest = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, err + rest.decode()
        assert "Traceback" not in err + rest.decode()
        log = (vault / "logs" / "telnet.log").read_text("utf-8")
        assert "Pip logged in from 127.0.0.1" in log
        assert "serving Fixture to browsers" in log
    finally:
        if process.returncode is None:
            process.kill()
            await process.communicate()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--tls-cert", "missing.pem", "--tls-key", "missing.pem"],
         "mudsim: cannot read the TLS certificate or key: no file missing.pem"),
        (["--tls-cert", "missing.pem"], "mudsim: --tls-cert and --tls-key go together"),
        (["--web", "70000"], "expected a port from 0 to 65535, got '70000'"),
    ],
    ids=["missing-files", "cert-without-key", "bad-port"],
)  # fmt: skip
def test_bad_web_and_tls_options_are_one_line(
    tmp_path: Path, world_file: Path, options: list[str], error: str
) -> None:
    done = mudsim("serve", world_file, "--vault", tmp_path / "v", "--web", "0", *options)
    assert done.returncode == 2
    assert error in done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "v").exists()  # refused before anything was opened
