"""Logging in over telnet: accounts, passwords that are never echoed, failures and the
delay they earn, taking a character over, pending accounts and new characters."""

from __future__ import annotations

import asyncio
import itertools
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


DELAY = 0.1
"""``login_delay_s`` of the slowed server: past one free failure, a check starts 0.1 s
after the last one ended, doubling."""


async def slowed_server(sim: Simulation, delay: float) -> MudServer:
    """A server whose checks slow down after one failure, by address or by name."""
    add_accounts(sim, "Pat", "Pip")
    config = TelnetConfig(max_logging_in_per_address=5, login_free_failures=1,
                          login_delay_s=delay)  # fmt: skip
    server = MudServer(sim, ServeOptions(port=0), config=config)
    await server.start()
    return server


@pytest.fixture
async def slowed(sim: Simulation) -> AsyncIterator[MudServer]:
    server = await slowed_server(sim, DELAY)
    yield server
    await server.close()


@pytest.fixture
async def stalled(sim: Simulation) -> AsyncIterator[MudServer]:
    """Past one failure, the next check of that address or name waits 60 s."""
    server = await slowed_server(sim, 60.0)
    yield server
    await server.close()


async def guess(server: MudServer, name: str, password: str = "wrong-password", *,
                source: str = "127.0.0.1") -> Client:  # fmt: skip
    """A client that typed ``name`` and ``password``; its answer not yet read."""
    client = await Client.open(server.port, source=source)
    await client.until("Name: ")
    client.send(name)
    await client.until("Password: ")
    client.send(password)
    return client


def failed_checks(caplog: pytest.LogCaptureFixture, ending: str = "") -> list[float]:
    """When each failed check was logged (the server logs it as the check ends)."""
    return [r.created for r in caplog.records
            if r.getMessage().startswith("failed login from") and r.getMessage().endswith(ending)]  # fmt: skip


async def test_parallel_guesses_from_one_address_are_checked_one_slot_apart(
    slowed: MudServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 33: the throttle counted failures per connection (20 parallel guesses were
    all answered within 9 s); issue 45: one address's checks run one at a time, each
    starting its slot after the last one ended (0.1, 0.2, 0.4, 0.8 s), whatever name."""
    caplog.set_level(logging.INFO, logger="mudsim.telnet")
    guessers = [await guess(slowed, name) for name in ("Pat", "Bea", "Pip", "Nobody", "Pat")]
    for client in guessers:
        await client.until("Wrong name or password.")
    ended = failed_checks(caplog)
    assert len(ended) == 5
    slots = [DELAY, 2 * DELAY, 4 * DELAY, 8 * DELAY]
    gaps = [b - a for a, b in itertools.pairwise(ended)]
    assert all(gap >= slot for gap, slot in zip(gaps, slots, strict=True)), gaps
    for client in guessers:
        client.close()


async def test_logging_in_as_ones_own_account_resets_no_failures(slowed: MudServer) -> None:
    """Issue 45: three wrong guesses at Pat, then a login as one's own account (Pip),
    repeated, gave 25 guesses a minute never slowed: a success reset the address."""
    throttle = slowed.checks.queue.throttle
    for _ in range(3):
        guesser = await guess(slowed, "Pat")
        await guesser.until("Wrong name or password.")
        guesser.close()
    own = await Client.open(slowed.port)
    await own.login("Pip")
    assert (throttle.failures("127.0.0.1"), throttle.name_failures("pat")) == (3, 3)
    again = await guess(slowed, "Pat")
    await again.until("Wrong name or password.")
    assert (throttle.failures("127.0.0.1"), throttle.name_failures("Pat")) == (4, 4)
    assert throttle.name_failures("Pip") == 0
    for client in (own, again):
        client.close()


async def test_a_guessed_names_owner_waits_its_slot_and_others_do_not(
    stalled: MudServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Right or wrong, an answer for a name that failed waits the name's slot (so a
    guesser who gives up early learns nothing from the wait); a right password for
    another name, from another address, is answered at once."""
    caplog.set_level(logging.INFO, logger="mudsim.telnet")
    first = await guess(stalled, "Pat", source="127.0.0.2")
    await first.until("Wrong name or password.")
    owner = await guess(stalled, "Pat", "pat-password", source="127.0.0.3")
    bystander = await Client.open(stalled.port, source="127.0.0.4")
    await bystander.login("Pip")  # at once, while Pat's owner waits
    await asyncio.sleep(0.3)
    assert "Pat> " not in owner.seen
    assert "Wrong name" not in owner.seen
    assert len(stalled.checks.queue) == 1
    owner.close()  # gives up: the check is dropped, never run
    await eventually(lambda: len(stalled.checks.queue) == 0)
    throttle = stalled.checks.queue.throttle
    assert throttle.name_failures("Pat") == 1
    assert len(failed_checks(caplog, "for Pat")) == 1
    assert not any("Pat logged in" in r.getMessage() for r in caplog.records)
    for client in (first, bystander):
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
