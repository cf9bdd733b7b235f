"""``@password`` (``engine.telnet.own_password``): a logged-in player changes their own
password on a real loopback server: the password now first, then the new one twice,
none of them echoed, none of them anywhere in the vault (its logs, the run's record,
the character's journal) but as the account's hash."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from raw_client import ECHO, IAC, WILL, WONT, RawClient
from telnet_client import Opener, plain

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.vault.accounts import AccountStore, verify_password

NEW = "a brand new secret"


def held_anywhere(root: Path, *secrets: str) -> list[str]:
    """The vault's files that hold any of ``secrets``."""
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if any(secret.encode() in data for secret in secrets):
                found.append(str(path.relative_to(root)))
    return found


def stored(sim: Simulation, name: str) -> str:
    account = AccountStore(sim.vault.root).find(name)
    assert account is not None
    return account.password


async def test_a_player_changes_their_password_unseen(
    server: MudServer, sim: Simulation, connect: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mudsim.telnet")
    client = await RawClient.open(server.port, agree=frozenset({ECHO}))  # as telnet does
    await client.until("Name: ")
    client.send("Pip")
    await client.until("Password: ")
    client.send("pip-password")
    await client.until("Pip> ")
    start = len(client.raw)
    client.send("@password")
    for answer, prompt in [("pip-password", "Your password now: "), (NEW, "New password: "),
                           (NEW, "The same again: ")]:  # fmt: skip
        await client.until(prompt)
        assert client.server_echoes  # WILL ECHO agreed: the client shows nothing typed
        client.send(answer)
    await client.until("Your password is changed")
    await client.until("Pip> ", 2)
    asked = bytes(client.raw[start:])
    will, wont = bytes([IAC, WILL, ECHO]), bytes([IAC, WONT, ECHO])
    assert asked.index(will) < asked.index(b"Your password now: ") < asked.index(wont)
    assert not client.server_echoes
    assert [row for row in client.screen.lines if "secret" in row or "pip-pass" in row] == []
    client.send("look")  # the session plays on
    await client.until("Pip> ", 3)
    client.close()

    assert verify_password(NEW, stored(sim, "Pip"))
    assert "Pip changed its password (@password, from 127.0.0.1)" in caplog.messages
    assert not any(NEW in m or "pip-password" in m for m in caplog.messages)
    assert held_anywhere(sim.vault.root, NEW, "pip-password") == []

    again = await connect()
    for password, answer in [("pip-password", "Wrong name or password."), (NEW, "Pip> ")]:
        await again.until("Name: ")
        again.send("Pip")
        await again.until("Password: ")
        again.send(password)
        await again.until(answer)


async def test_a_wrong_password_now_changes_nothing_and_counts_as_a_failure(
    connect: Opener, sim: Simulation, server: MudServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mudsim.telnet")
    before = stored(sim, "Pip")
    client = await connect()
    await client.login("Pip")
    await client.command("@password", "Your password now: ")
    text = plain(await client.command("not my password", "Pip> "))
    assert "That is not your password; nothing was changed." in text
    assert "New password" not in text
    assert stored(sim, "Pip") == before
    assert "failed @password from 127.0.0.1: wrong password for Pip" in caplog.messages
    throttle = server.checks.queue.throttle
    assert (throttle.failures("127.0.0.1"), throttle.name_failures("Pip")) == (1, 1)
    assert held_anywhere(sim.vault.root, "not my password") == []


@pytest.mark.parametrize(
    ("new", "again", "said"),
    [
        ("shortpw", None, "A password needs at least 8 characters."),
        (NEW, "another secret", "The two did not match; nothing was changed."),
    ],
)
async def test_a_new_password_too_short_or_mistyped_changes_nothing(
    connect: Opener, sim: Simulation, new: str, again: str | None, said: str
) -> None:
    before = stored(sim, "Pip")
    client = await connect()
    await client.login("Pip")
    await client.command("@password", "Your password now: ")
    await client.command("pip-password", "New password: ")
    if again is None:
        text = await client.command(new, "Pip> ")
    else:
        await client.command(new, "The same again: ")
        text = await client.command(again, "Pip> ")
    assert said in plain(text)
    assert stored(sim, "Pip") == before
    assert held_anywhere(sim.vault.root, new, *([again] if again else [])) == []


async def test_a_password_typed_after_the_word_is_never_run_nor_kept(
    connect: Opener, sim: Simulation
) -> None:
    before = stored(sim, "Pip")
    client = await connect()
    await client.login("Pip")
    text = plain(await client.command("@password pip-password a-new-password", "Pip> "))
    assert "Type @password alone" in text
    assert stored(sim, "Pip") == before
    await client.command("look", "Pip> ")  # the journal and record have caught up
    assert held_anywhere(sim.vault.root, "a-new-password") == []
