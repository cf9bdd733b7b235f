"""``mudsim account passwd`` (``engine.telnet.passwd_cli``): an account's password
changed from a shell, in real vault files, also while the world is served (the next
login asks for the new one); refusals are one line and change nothing; the password is
nowhere in the vault but as its hash."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import mudsim
from telnet_client import Opener

from engine.cli import main
from engine.sim.simulation import Simulation
from engine.vault.accounts import Account, AccountStore, hash_password, verify_password

NEW = "a brand new secret"


def passwd(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """``mudsim account passwd ARGV`` in this process: (exit code, stdout, stderr)."""
    code = main(["account", "passwd", *(str(arg) for arg in argv)])
    out, err = capsys.readouterr()
    return code, out, err


def stored(vault: Path, name: str) -> str:
    account = AccountStore(vault).find(name)
    assert account is not None
    return account.password


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A vault (not seeded) with accounts for Pat and Wren."""
    folder = tmp_path / "vault"
    AccountStore(folder).add(Account("Pat", None, hash_password("pat-password")))
    AccountStore(folder).add(Account("Wren", None, hash_password("wren-password")))
    return folder


def test_passwd_sets_the_new_password_and_logs_who_did_it(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wren = stored(vault, "Wren")
    code, out, err = passwd(capsys, "--vault", vault, "pat", "--password", f"  {NEW} ")
    assert (code, err) == (0, "")
    assert out.startswith(f"Changed the password of Pat in {vault / 'config' / 'accounts.md'}.")
    assert "the next login" in out
    assert verify_password(NEW, stored(vault, "Pat"))
    assert not verify_password("pat-password", stored(vault, "Pat"))
    assert stored(vault, "Wren") == wren  # the others are as they were
    assert (AccountStore(vault).path.stat().st_mode & 0o777) == 0o600
    log = (vault / "logs" / "telnet.log").read_text(encoding="utf-8")
    assert "(mudsim account passwd, from a shell) changed the password of Pat" in log
    held = [p for p in vault.rglob("*") if p.is_file() and NEW.encode() in p.read_bytes()]
    assert held == []


def test_passwd_reads_one_line_of_standard_input(vault: Path) -> None:
    done = mudsim("account", "passwd", "--vault", vault, "Wren", stdin=f"{NEW}\n")
    assert done.returncode == 0, done.stderr
    assert verify_password(NEW, stored(vault, "Wren"))


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["Pat", "--password", "shortpw"], "at least 8 characters. The password is as it was"),
        (["Pat"], "no password: give --password, or one line on standard input"),
        (["Malory", "--password", NEW], "has no account called 'Malory' (mudsim account add"),
    ],
)
def test_passwd_refuses_with_one_line_and_changes_nothing(
    vault: Path, argv: list[str], error: str
) -> None:
    before = AccountStore(vault).path.read_bytes()
    done = mudsim("account", "passwd", "--vault", vault, *argv)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert error in line
    assert AccountStore(vault).path.read_bytes() == before


def test_passwd_never_makes_a_vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = passwd(capsys, "--vault", tmp_path / "nope", "Pat", "--password", NEW)
    assert code == 2
    assert "is no vault (no such folder)" in err
    assert not (tmp_path / "nope").exists()


async def test_passwd_while_the_world_is_served(
    connect: Opener, sim: Simulation, capsys: pytest.CaptureFixture[str]
) -> None:
    playing = await connect()
    await playing.login("Pip")
    code, _out, err = passwd(capsys, "--vault", sim.vault.root, "Pip", "--password", NEW)
    assert (code, err) == (0, "")
    await playing.command("look", "Pip> ")  # whoever is connected stays so
    client = await connect()
    for password, answer in [("pip-password", "Wrong name or password."), (NEW, "Pip> ")]:
        await client.until("Name: ")
        client.send("Pip")
        await client.until("Password: ")
        client.send(password)
        await client.until(answer)
