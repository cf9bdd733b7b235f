"""Logging in over telnet: accounts, passwords that are never echoed, failures and the
delay they earn, taking a character over, pending accounts and new characters."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
from telnet_client import Client, Opener, add_accounts, eventually, password_hash, plain
from telnetlib3.telopt import ECHO

from engine.commands.helpers import describe_room
from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import ServeOptions, TelnetConfig
from engine.vault.accounts import Account, AccountStore, verify_password
from engine.world.model import Role


async def test_the_right_password_shows_the_room_as_look_does(
    connect: Opener, sim: Simulation
) -> None:
    client = await connect()
    text = plain(await client.login("Pat"))
    assert "Name: " in client.seen
    assert "You are Pat, in Fixture." in text
    pat = sim.character("Pat")
    look = describe_room(sim.world, sim.world.rooms["hall"], pat)
    assert "Exits: north (The Yard)" in look
    assert look.replace("\n", "\r\n") + "\r\nPat> " in text


async def test_a_wrong_password_and_an_unknown_name_get_the_same_answer(
    connect: Opener, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mudsim.telnet")
    client = await connect()
    await client.until("Name: ")
    # a password typed at the Name: prompt (issue 33, defect 3) is never logged
    for name, password in (("Pat", "not-her-password"), ("MySecretPassw0rd", "whatever-it-is")):
        client.send(name)
        await client.until("Password: ")
        client.send(password)
        assert "Wrong name or password." in await client.until("Name: ")
    client.send("Pip")  # a third try, the right one
    await client.until("Password: ")
    client.send("pip-password")
    await client.until("Pip> ")
    failures = [r.getMessage() for r in caplog.records if "failed login" in r.getMessage()]
    assert failures == [
        "failed login from 127.0.0.1: wrong password for Pat",
        "failed login from 127.0.0.1: the name typed is not an account",
    ]
    assert not any("MySecretPassw0rd" in r.getMessage() for r in caplog.records)
    assert any(r.getMessage() == "Pip logged in from 127.0.0.1" for r in caplog.records)


async def test_a_player_character_without_an_account_cannot_log_in(connect: Opener) -> None:
    client = await connect()
    await client.until("Name: ")
    client.send("Ada")  # an agent: nobody logs in as one
    await client.until("Password: ")
    client.send("anything-at-all")
    assert "Wrong name or password." in await client.until("Name: ")


async def test_three_failures_on_one_connection_close_it(connect: Opener) -> None:
    client = await connect()
    await client.until("Name: ")
    for _ in range(3):
        client.send("Pat")
        await client.until("Password: ")
        client.send("wrong-password")
        await client.until("Wrong name or password.")
    assert "Too many failed logins; goodbye." in await client.closed()


async def test_the_password_is_never_echoed_by_the_server_or_the_client(connect: Opener) -> None:
    for term in ("xterm", "Mudlet"):  # a MUD client is told WILL ECHO too (telnetlib3 alone
        client = await connect(term=term)  # would spare it: it reads it as password mode)
        await client.until("Name: ")
        assert not client.writer.remote_option.enabled(ECHO)  # the client echoes the name
        client.send("Pip")
        await client.until("Password: ")
        await eventually(lambda c=client: c.writer.remote_option.enabled(ECHO))  # type: ignore[misc]
        client.send("pip-password")
        await client.until("Pip> ")
        assert "pip-password" not in client.seen
        assert not client.writer.remote_option.enabled(ECHO)  # WONT ECHO: echoing again
        client.close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def held() -> asyncio.Event:
    return asyncio.Event()


@pytest.fixture
async def slow_server(
    sim: Simulation, sleeps: list[float], held: asyncio.Event
) -> AsyncIterator[MudServer]:
    """A server whose login delay is held until the test lets it go (``held``), and
    which records each delay asked for."""

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if seconds > 0:
            await held.wait()
            held.clear()

    add_accounts(sim, "Pat", "Pip")
    config = TelnetConfig(max_logging_in_per_address=5)  # (as many as it may open)
    server = MudServer(sim, ServeOptions(port=0), config=config, sleep=sleep)
    await server.start()
    yield server
    await server.close()


async def test_twenty_connections_guessing_from_one_address_never_slow_a_right_password_elsewhere(
    slow_server: MudServer, sleeps: list[float], held: asyncio.Event
) -> None:
    """Issue 33, defects 1 and 2: the throttle counted failures per connection (20
    parallel guesses were all answered within 9 s) and one address could take every
    connection; a right password waited as long as the guesses."""
    guessers = [await Client.open(slow_server.port) for _ in range(20)]
    turned_away = 0
    for client in guessers:
        text = await client.until("\n")  # the first line: the welcome, or why not
        if "Too many connections from your address are logging in (at most 5 at once)" in text:
            turned_away += 1
    assert turned_away == 15
    admitted = [c for c in guessers if "Welcome to" in c.seen]
    assert len(admitted) == 5
    for client in admitted:  # five failures from the address, answered at once
        await client.until("Name: ")
        client.send("Pat")
        await client.until("Password: ")
        client.send("wrong-password")
        await client.until("Wrong name or password.")
    assert sleeps == [0.0] * 10  # an answer wait and a failure wait for each
    for client in admitted:  # now all five guess at once: one answer a slot
        await client.until("Name: ")
        client.send("Pat")
        await client.until("Password: ")
        client.send("another-wrong-password")
    await eventually(lambda: len(sleeps) == 15)
    assert sleeps[10:] == pytest.approx([2.0, 4.0, 6.0, 8.0, 10.0], abs=1.0)  # 2 s apart
    owner = await Client.open(slow_server.port, source="127.0.0.2")
    await owner.login("Pat")  # the right password from elsewhere: at once
    assert sleeps[15:] == [0.0]
    assert not any("Wrong name or password." in c.seen[c.seen.index("another"):]
                   for c in admitted if "another" in c.seen)  # fmt: skip
    for client in (*guessers, owner):
        client.close()


async def test_logging_in_as_ones_own_account_resets_no_failures(
    slow_server: MudServer, sleeps: list[float], held: asyncio.Event
) -> None:
    """Issue 45: three wrong guesses at Pat, then a login as one's own account (Pip),
    repeated, gave 25 guesses a minute never slowed: a success reset the address."""
    for _ in range(5):  # five failures from this address, answered at once
        guesser = await Client.open(slow_server.port)
        await guesser.until("Name: ")
        guesser.send("Pat")
        await guesser.until("Password: ")
        guesser.send("wrong-password")
        await guesser.until("Wrong name or password.")
        guesser.close()
    assert sleeps == [0.0] * 10
    own = await Client.open(slow_server.port)
    login = asyncio.ensure_future(own.login("Pip"))  # its own right password...
    await eventually(lambda: len(sleeps) == 11)
    assert sleeps[10] == pytest.approx(2.0)  # ...waits its address's slot
    held.set()
    await login
    again = await Client.open(slow_server.port)
    await again.until("Name: ")
    again.send("Pat")
    await again.until("Password: ")
    again.send("another-wrong-password")
    await eventually(lambda: len(sleeps) == 12)
    assert sleeps[11] > 0  # the success reset nothing: the next guess still waits
    held.set()
    for client in (own, again):
        client.close()


async def test_a_second_login_with_the_password_takes_the_character_over(
    connect: Opener, server: MudServer
) -> None:
    first, second, third = await connect(), await connect(), await connect()
    await first.login("Pip")
    await second.until("Name: ")
    second.send("Pip")  # without the password: the first connection is untouched
    await second.until("Password: ")
    second.send("not-the-password")
    await second.until("Wrong name or password.")
    assert not first.writer.connection_closed
    await third.login("Pip")
    assert "Pip logged in again from 127.0.0.1; this connection is closed." in plain(
        await first.closed()
    )
    text = await third.command("say I am back.", "Pip> ")
    assert 'You say, "I am back."' in text
    assert list(server.sessions) == ["pip"]
    assert "(Pip has connected.)" not in third.seen + first.seen


async def test_a_pending_account_chooses_its_password_at_its_first_login(
    connect: Opener, sim: Simulation
) -> None:
    store = AccountStore(sim.vault.root)
    store.set_password("Bea", "")  # as @account password Bea leaves it
    client = await connect()
    await client.until("Name: ")
    client.send("Bea")
    assert "Choose a password for Bea" in await client.until("Password: ")
    client.send("short")
    await client.until("at least 8 characters")
    await client.until("Password: ")
    client.send("bea-new-password")
    await client.until("The same again: ")
    client.send("bea-other-password")
    await client.until("did not match")
    await client.until("Password: ")
    client.send("bea-new-password")
    await client.until("The same again: ")
    client.send("bea-new-password")
    await client.until("Bea> ")
    account = store.find("bea")
    assert account is not None
    assert verify_password("bea-new-password", account.password)
    assert "bea-new-password" not in store.path.read_text(encoding="utf-8")


async def test_the_account_role_becomes_the_characters(connect: Opener, sim: Simulation) -> None:
    store = AccountStore(sim.vault.root)
    store.remove("Pip")
    store.add(Account("Pip", Role.BUILDER, password_hash("Pip")))
    client = await connect()
    await client.login("Pip")
    assert sim.character("Pip").role is Role.BUILDER
    text = await client.command("@dig The Pantry", "Pip> ")
    assert "You dig The Pantry" in text
    assert "role: builder" in (sim.vault.root / "agents" / "Pip" / "agent.md").read_text("utf-8")
