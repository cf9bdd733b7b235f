"""Connections that have not logged in (issue 45): capped apart from the players, a few
from one address, and when the room is full the longest waiting connection of the
busiest address makes room, so ten addresses holding slow connections open never keep
an account or the admin out."""

from __future__ import annotations

import asyncio
import time

from telnet_client import Client, eventually, plain, serving

from engine.sim.simulation import Simulation
from engine.telnet.connection import Connection
from engine.telnet.settings import TelnetConfig
from engine.telnet.waiting_room import EVICTED, WaitingRoom


def test_the_busiest_address_s_longest_waiting_connection_makes_room() -> None:
    now = [0.0]
    room: WaitingRoom[str] = WaitingRoom(4, 2, lambda: now[0])
    for name, address in [("a1", "A"), ("b1", "B"), ("a2", "A"), ("c1", "C")]:
        room.enter(name, address)
        now[0] += 1
    assert room.admit("D", logging_in=4, mine=0) == (None, "a1")  # A holds two: its oldest
    assert len(room) == 3
    refused, victim = room.admit("B", logging_in=3, mine=2)
    assert victim is None
    assert refused is not None
    assert "at most 2 at once" in refused
    assert room.admit("E", logging_in=3, mine=0) == (None, None)  # room: nobody closed


async def test_ten_addresses_holding_connections_open_never_keep_an_account_out(
    sim: Simulation,
) -> None:
    config = TelnetConfig(login_seconds=3)
    async with serving(sim, config=config) as server:
        attackers = []
        for host in range(10, 20):  # each opens what it may, and never logs in
            for _ in range(config.max_per_address):  # until refused: 50 in all
                attackers.append(await Client.open(server.port, source=f"127.0.0.{host}"))
        await asyncio.sleep(0.3)
        assert len(server.waiting) <= config.logging_in_most
        for who, source in (("Pip", "127.0.0.2"), ("Pat", "127.0.0.3")):  # a player, the admin
            started = time.monotonic()
            client = await Client.open(server.port, source=source)
            await client.login(who)
            assert time.monotonic() - started < 1.0
        assert sorted(server.sessions) == ["pat", "pip"]
        # whoever is still waiting is closed at the login deadline
        await eventually(lambda: len(server.waiting) == 0, within=config.login_seconds + 5)
        told = [" ".join(plain(await c.closed()).split()) for c in attackers]
        assert any(EVICTED in text for text in told)
        assert any("are logging in (at most 3 at once)" in text for text in told)
        assert any("Logging in took too long" in text for text in told)


async def test_connections_still_negotiating_hold_places_and_make_room_too(
    sim: Simulation,
) -> None:
    """The guessing attack (issue 45): places were counted from the connections open,
    but only those past negotiation could be closed to make room, so while attackers'
    fresh connections negotiated (or were closing) an account was told "Too many
    connections are logging in". Raw sockets that never answer an option stay
    negotiating for 1.5 s; an account logging in among them closes one."""
    config = TelnetConfig(max_logging_in=4, login_seconds=2)
    async with serving(sim, config=config) as server:
        silent = []
        for host in range(10, 14):
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port,
                                                           local_addr=(f"127.0.0.{host}", 0))  # fmt: skip
            silent.append((reader, writer))
        await eventually(lambda: len(server.waiting) == 4)
        assert not any(isinstance(c, Connection) for c in server.waiting)  # negotiating
        client = await Client.open(server.port, source="127.0.0.2")
        await client.login("Pip")
        assert list(server.sessions) == ["pip"]
        closed = [await reader.read() for reader, _writer in silent]
        assert sum(1 for text in closed if EVICTED.encode() in text) == 1
        for _reader, writer in silent:
            writer.close()


def test_of_addresses_holding_as_many_places_the_one_that_failed_most_makes_room() -> None:
    """Under the guessing attack every address held one place, and the longest waiting
    was as often an honest client as a guesser: now the guessers' failures count."""
    now = [0.0]
    failed = {"10.0.0.9": 7, "10.0.0.8": 2}
    room: WaitingRoom[str] = WaitingRoom(3, 3, lambda: now[0], lambda a: failed.get(a, 0))
    for name, address in [("honest", "10.0.0.1"), ("guesser", "10.0.0.9"), ("other", "10.0.0.8")]:
        room.enter(name, address)
        now[0] += 1
    assert room.admit("10.0.0.2", logging_in=3, mine=0) == (None, "guesser")
    assert room.admit("10.0.0.2", logging_in=3, mine=0) == (None, "other")
    room.enter("second", "10.0.0.1")  # two places: the busiest address goes first still
    assert room.admit("10.0.0.3", logging_in=3, mine=0) == (None, "honest")
