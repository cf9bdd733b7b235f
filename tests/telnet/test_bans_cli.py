"""``mudsim ban list|add|remove`` (``engine.telnet.bans_cli``): the bans from a shell,
with the refusals of ``@ban``, while the world is served (an admin who banned their own
network lifts the ban here, and the next connection from it is let in)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import mudsim
from telnet_client import Client, plain, serving

from engine.cli import main
from engine.sim.simulation import Simulation
from engine.vault.bans import BanStore


def ban(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``mudsim ban ARGV`` in this process: (exit code, stdout, stderr)."""
    code = main(["ban", *(str(arg) for arg in argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_add_list_and_remove(sim: Simulation, capsys: pytest.CaptureFixture[str]) -> None:
    vault = sim.vault.root
    assert ban(capsys, "list", "--vault", vault) == (0, "Nobody is banned.\n", "")
    code, out, err = ban(capsys, "add", "--vault", vault, "pip", "--for", "2h",
                         "--reason", "spamming the square")  # fmt: skip
    assert (code, err) == (0, "")
    assert out.startswith("Banned: pip, until ")
    assert "(spamming the square)." in out
    assert "whoever is connected now stays" in out
    assert ban(capsys, "add", "--vault", vault, "203.0.113.9/24")[0] == 0
    code, out, _err = ban(capsys, "list", "--vault", vault)
    lines = out.splitlines()
    assert lines[0] == "Bans (2):"
    assert lines[1].startswith("- pip, until 20")
    assert lines[1].endswith(" UTC (spamming the square)")
    assert lines[2] == "- 203.0.113.0/24, until lifted"
    assert ban(capsys, "remove", "--vault", vault, "PIP")[0] == 0
    assert [b.target for b in BanStore(vault).active()] == ["203.0.113.0/24"]
    assert (BanStore(vault).path.stat().st_mode & 0o777) == 0o600
    log = (vault / "logs" / "telnet.log").read_text(encoding="utf-8")
    assert "banned pip, until " in log
    assert "lifted the ban of pip" in log
    assert "(mudsim ban, from a shell)" in log


def test_an_account_that_is_no_character_yet_may_be_banned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    added = main(["account", "add", "--vault", str(vault), "Wren", "--password", "a long secret"])
    assert added == 0
    capsys.readouterr()
    assert ban(capsys, "add", "--vault", vault, "wren", "--for", "forever")[0] == 0
    assert BanStore(vault).name_ban("Wren") is not None


def test_a_name_that_is_nobody_is_refused_unless_forced(
    sim: Simulation, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = sim.vault.root
    code, out, err = ban(capsys, "add", "--vault", vault, "Malory", "--for", "2h")
    assert (code, out) == (2, "")
    assert err == ("mudsim: no account or character is called Malory: nothing was banned "
                   "(check the name, or add --force to ban it anyway)\n")  # fmt: skip
    assert not BanStore(vault).path.exists()
    assert ban(capsys, "add", "--vault", vault, "Malory", "--force")[0] == 0
    assert [b.target for b in BanStore(vault).active()] == ["Malory"]


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["add", "10.0.0.0/7"], "10.0.0.0/7 is too wide a network to ban"),
        (["add", "Pip", "--for", "2 hours"], "expected a length such as 30m, 2h, 7d, 1w"),
        (["remove", "Pip"], "Pip is not banned in "),
    ],
)
def test_what_cannot_be_done_is_one_line(
    sim: Simulation, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    code, out, err = ban(capsys, argv[0], "--vault", sim.vault.root, *argv[1:])
    assert (code, out) == (2, "")
    assert error in err
    assert err.count("\n") == 1


def test_a_vault_that_is_not_there_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = ban(capsys, "add", "--vault", tmp_path / "typo", "10.0.0.1")
    assert code == 2
    assert err == f"mudsim: {tmp_path / 'typo'} is no vault (no such folder)\n"
    assert not (tmp_path / "typo").exists()


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"---\nbans: [\n---\n", "bans.md has invalid front matter"),
        (b"---\nbans: [{target: x, colour: red}]\n---\n", "bans.md, bans.0.colour"),
        (b"---\nbans: []\n---\n\xff\xfe broken\n", "cannot read "),
    ],
)
@pytest.mark.parametrize("verb", ["list", "add", "remove"])
def test_a_broken_bans_file_is_one_line_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, error: str, verb: str
) -> None:
    vault = tmp_path / "vault"
    path = BanStore(vault).path
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    code, out, err = ban(capsys, verb, "--vault", vault, *([] if verb == "list" else ["10.0.0.1"]))
    assert (code, out) == (2, "")
    assert err.startswith("mudsim: ")
    assert error in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    if verb != "list":
        assert err.endswith("; nothing was changed\n")
    assert path.read_bytes() == content


@pytest.mark.timeout(120)
async def test_a_served_world_lets_in_an_address_unbanned_from_a_shell(sim: Simulation) -> None:
    """The world served (this process holds the vault), the bans changed by real
    ``mudsim ban`` processes: the next connection from the address is refused, then let in."""
    vault = sim.vault.root
    async with serving(sim) as server:
        added = await asyncio.to_thread(mudsim, "ban", "add", "--vault", vault, "127.0.0.3")
        assert added.returncode == 0, added.stderr
        refused = await Client.open(server.port, source="127.0.0.3")
        assert "Your address is banned from this world." in plain(await refused.closed())
        listed = await asyncio.to_thread(mudsim, "ban", "list", "--vault", vault)
        assert listed.stdout == "Bans (1):\n- 127.0.0.3/32, until lifted\n"
        removed = await asyncio.to_thread(mudsim, "ban", "remove", "--vault", vault, "127.0.0.3")
        assert removed.returncode == 0, removed.stderr
        assert removed.stdout.startswith("The ban of 127.0.0.3/32 is lifted")
        back = await Client.open(server.port, source="127.0.0.3")
        await back.until("Name: ")  # let in: an address ban refuses before this
        back.close()
