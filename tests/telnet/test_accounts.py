"""Accounts: the vault's ``config/accounts.md`` (scrypt hashes, never a password),
``mudsim account add`` from a shell, and ``@account`` in the world."""

from __future__ import annotations

import contextlib
import shutil
import stat
import sys
import threading
from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD, REPO, mudsim, mudsim_env, run
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import UnsafeNameError, VaultError
from engine.sim.simulation import Simulation
from engine.vault.accounts import (
    Account,
    AccountError,
    AccountStore,
    hash_password,
    new_name_problem,
    password_problem,
    verify_password,
)
from engine.world.folder_names import safe_name
from engine.world.model import Role


def test_a_hash_has_its_own_salt_and_only_its_password_matches() -> None:
    first, second = hash_password("correct horse"), hash_password("correct horse")
    assert first != second  # a salt of its own each time
    assert first.startswith("scrypt$16384$8$1$")
    assert "correct horse" not in first
    assert verify_password("correct horse", first)
    assert verify_password("correct horse", second)
    assert not verify_password("correct horsE", first)


@pytest.mark.parametrize(
    "stored",
    [
        "", "plain-text-password", "scrypt$16384$8$1$AAAA", "md5$1$2$3$AAAA$BBBB",
        "scrypt$16384$8$1$not base64!$AAAA", "scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA",
        "scrypt$1073741824$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA",  # 2**30: gigabytes, refused
    ],
)  # fmt: skip
def test_a_malformed_or_costly_hash_never_matches(stored: str) -> None:
    assert not verify_password("anything", stored)


def test_the_store_keeps_accounts_in_its_file(tmp_path: Path) -> None:
    store = AccountStore(tmp_path)
    assert store.load() == []
    store.add(Account("Pat", Role.ADMIN, hash_password("pat-password")))
    store.add(Account("Wren"))
    assert [(a.name, a.role, a.pending) for a in AccountStore(tmp_path).load()] == [
        ("Pat", Role.ADMIN, False), ("Wren", None, True),
    ]  # fmt: skip
    assert store.find("pAT") is not None
    with pytest.raises(AccountError, match="already an account called 'pat'"):
        store.add(Account("pat"))
    store.set_password("wren", hash_password("wren-password"))
    with pytest.raises(AccountError, match="chosen a password meanwhile"):
        store.set_password("Wren", "x", only_if_pending=True)
    assert store.remove("PAT").name == "Pat"
    with pytest.raises(AccountError, match="no account called 'Pat'"):
        store.remove("Pat")
    text = store.path.read_text(encoding="utf-8")
    assert text.startswith("---\naccounts:\n- name: Wren\n")
    assert "wren-password" not in text
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600  # issue 33, defect 7


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\naccounts: [{name: A, colour: red}]\n---\n", "accounts.0.colour"),
        ("---\naccounts: [{name: A, role: king}]\n---\n", "accounts.0.role"),
        ("---\naccounts: [{name: A}, {name: a}]\n---\n", "names the account 'a' twice"),
        ("---\naccounts: [\n---\n", "invalid front matter"),
    ],
)
def test_a_broken_accounts_file_is_one_error_naming_it(
    tmp_path: Path, text: str, problem: str
) -> None:
    store = AccountStore(tmp_path)
    store.path.parent.mkdir(parents=True)
    store.path.write_text(text, encoding="utf-8")
    with pytest.raises(VaultError, match=problem) as caught:
        store.find("A")
    assert "accounts.md" in str(caught.value)


def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    names = [f"Name{n}" for n in range(16)]
    threads = [
        threading.Thread(target=AccountStore(tmp_path).add, args=(Account(name),)) for name in names
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.name for a in AccountStore(tmp_path).load()) == sorted(names)


@given(st.text(max_size=30))
def test_a_name_fit_for_a_new_character_makes_its_own_folder(name: str) -> None:
    if new_name_problem(name) is None and name.isascii():
        assert safe_name(name) == name  # nothing of it is lost in its folder's name
        assert 2 <= len(name) <= 24


def test_names_and_passwords_that_are_refused() -> None:
    for bad in ("A", "9lives", "has space", "../etc", "x" * 25, "Zое", "Рор", "me", "Quit"):
        assert new_name_problem(bad) is not None, bad
    for device in ("Con", "aux", "NUL", "com1", "LPT9", "Prn"):  # issue 33, defect 7
        assert new_name_problem(device) == (f"'{device}' is a device name on Windows and "
                                            "cannot name a folder; pick another name.")  # fmt: skip
        with pytest.raises(UnsafeNameError, match="device name on Windows"):
            safe_name(device)
    assert new_name_problem("Conrad") is None
    assert new_name_problem("Wren-2") is None
    assert password_problem("short") == "A password needs at least 8 characters."
    assert password_problem("tab\there!") == "A password may hold only printable characters."
    assert password_problem("long enough") is None


# -- mudsim account add --------------------------------------------------------------
def test_account_add_reads_the_password_from_standard_input(
    tmp_path: Path, world_file: Path
) -> None:
    vault = tmp_path / "vault"
    assert mudsim("do", world_file, "--vault", vault, "--as", "Pat", "look").returncode == 0
    done = mudsim("account", "add", "--vault", vault, "pat", stdin="  pat-password \n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Added the account Pat (the player role) to ")
    account = AccountStore(vault).find("Pat")
    assert account is not None
    assert verify_password("pat-password", account.password)
    done = mudsim("account", "add", "--vault", vault, "Wren", "--role", "builder",
                  "--password", "wren-password")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Nobody is called Wren yet: the first login makes a player character" in done.stdout
    assert AccountStore(vault).find("wren") == AccountStore(vault).load()[1]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault seeded from the fixture world, with an account for Pat."""
    folder = tmp_path_factory.mktemp("seeded")
    world = folder / "fixture.yaml"
    world.write_text(FIXTURE_WORLD, encoding="utf-8")
    mudsim("do", world, "--vault", folder / "vault", "--as", "Pat", "look")
    AccountStore(folder / "vault").add(Account("Pat", None, hash_password("pat-password")))
    return folder / "vault"


@pytest.mark.parametrize(
    ("argv", "stdin", "error"),
    [
        (["Ada", "--password", "ada-password"], "", "Ada is an agent in"),
        (["Pat", "--password", "other-password"], "", "already has an account called 'Pat'"),
        (["Pip", "--password", "short"], "", "at least 8 characters. Nothing was added."),
        (["Pip"], "", "no password: give --password, or one line on standard input"),
        (["no good", "--password", "long-enough"], "", "A new name has 2 to 24 characters"),
        (["Pip", "--role", "king", "--password", "long-enough"], "", "invalid choice: 'king'"),
    ],
)
def test_account_add_refuses_with_one_line(
    tmp_path: Path, seeded: Path, argv: list[str], stdin: str, error: str
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(seeded, vault)
    before = AccountStore(vault).path.read_bytes()
    done = mudsim("account", "add", "--vault", vault, *argv, stdin=stdin)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert error in done.stderr
    assert "Traceback" not in done.stderr
    assert AccountStore(vault).path.read_bytes() == before


def test_account_add_on_a_vault_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "vault").write_text("not a folder", encoding="utf-8")
    done = mudsim("account", "add", "--vault", tmp_path / "vault", "Pat", "--password", "x" * 8)
    assert (done.returncode, done.stderr) == (2, f"mudsim: the vault {tmp_path / 'vault'} is a "
                                                 "file, not a folder\n")  # fmt: skip


# -- @account ---------------------------------------------------------------------------
def test_at_account_adds_resets_lists_and_removes_without_a_password(sim: Simulation) -> None:
    result = run(sim, "Pat", "@account add Wren builder")
    assert result.ok, result.text
    assert "Wren may log in (a new player character, made at the start room), with the " \
           "builder role." in result.text  # fmt: skip
    store = AccountStore(sim.vault.root)
    wren = store.find("Wren")
    assert wren == Account("Wren", Role.BUILDER, "")
    store.set_password("Wren", hash_password("wren-password"))
    assert run(sim, "Pat", "@account password wren").ok
    assert store.find("Wren") == Account("Wren", Role.BUILDER, "")  # pending again
    assert run(sim, "Pat", "@account add Pip").ok
    listed = run(sim, "Pat", "@account").text
    assert listed == ("Accounts (2):\n- Wren: builder; password chosen at the next login\n"
                      "- Pip: player; password chosen at the next login")  # fmt: skip
    assert run(sim, "Pat", "@account remove Wren").ok
    assert [a.name for a in store.load()] == ["Pip"]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("@account add Ada", "Ada is an agent; accounts are for players."),
        ("@account add me", "reads as something else"),
        ("@account add Nul", "'Nul' is a device name on Windows"),
        ("@account add Pip", "already an account called Pip"),
        ("@account remove Nobody", "There is no account called Nobody."),
        ("@account remove Pat", "You cannot remove your own account."),
        ("@account frobnicate Pip", "'frobnicate' is not something @account does."),
        ("@account add", "@account add whom?"),
    ],
)
def test_at_account_refusals(sim: Simulation, line: str, says: str) -> None:
    AccountStore(sim.vault.root).add(Account("Pip"))
    AccountStore(sim.vault.root).add(Account("Pat"))
    result = run(sim, "Pat", line)
    assert not result.ok
    assert says in result.text


def test_at_account_is_for_admins(sim: Simulation) -> None:
    result = run(sim, "Bea", "@account add Wren")
    assert not result.ok
    assert result.text == "'@account' needs the admin role; you are a builder."
    assert AccountStore(sim.vault.root).load() == []


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
@pytest.mark.parametrize(("again", "code"), [("pat-password", 0), ("other-password", 2)])
def test_account_add_at_a_terminal_asks_twice_without_echo(
    tmp_path: Path, again: str, code: int
) -> None:
    import os
    import pty

    vault = tmp_path / "vault"
    argv = [sys.executable, "-m", "engine.cli", "account", "add", "--vault", str(vault), "Pat"]
    pid, terminal = pty.fork()  # the child's controlling terminal: getpass reads it
    if pid == 0:  # pragma: no cover - the child becomes mudsim
        os.chdir(REPO)
        os.execve(sys.executable, argv, mudsim_env())
    screen = b""

    def read_until(text: bytes) -> None:
        nonlocal screen
        while text not in screen:
            chunk = os.read(terminal, 1024)
            assert chunk, screen
            screen += chunk

    read_until(b"Password for Pat: ")
    os.write(terminal, b"pat-password\n")
    read_until(b"The same again: ")
    os.write(terminal, again.encode() + b"\n")
    with contextlib.suppress(OSError):  # the end of the child: EIO
        while chunk := os.read(terminal, 1024):
            screen += chunk
    _, status = os.waitpid(pid, 0)
    os.close(terminal)
    assert os.waitstatus_to_exitcode(status) == code
    assert b"pat-password" not in screen
    assert b"other-password" not in screen
    if code == 0:
        account = AccountStore(vault).find("Pat")
        assert account is not None
        assert verify_password("pat-password", account.password)
    else:
        assert b"the two passwords did not match; nothing was added" in screen
        assert AccountStore(vault).load() == []
