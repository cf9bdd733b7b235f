"""What the server negotiates, checked with telnetlib3 clients: MSSP for MUD listings,
CHARSET (UTF-8, or ASCII with replacement for a client that refuses it)."""

from __future__ import annotations

import asyncio
import time

import telnetlib3
from telnet_client import Client, Opener, eventually, plain
from telnetlib3.telopt import BINARY, CHARSET, DO, IAC, MSSP

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer


async def test_mssp_says_the_worlds_name_players_and_start(
    connect: Opener, server: MudServer
) -> None:
    player = await connect()
    await player.login("Pat")
    crawler = await connect(mssp=True)
    await eventually(lambda: crawler.writer.ctx.mssp_data is not None)
    data = crawler.writer.ctx.mssp_data
    assert data["NAME"] == "Fixture"
    assert data["PLAYERS"] == "1"
    assert abs(int(data["UPTIME"]) - time.time()) < 3600  # the start, in Unix seconds
    assert data["CODEBASE"].startswith("mudsim ")


async def test_a_client_that_did_not_ask_for_mssp_gets_none(connect: Opener) -> None:
    client = await connect()
    await client.login("Pip")
    assert client.writer.ctx.mssp_data is None


async def test_utf8_is_negotiated_and_passes_both_ways(connect: Opener, sim: Simulation) -> None:
    client = await connect()
    await client.login("Pip")
    text = await client.command("say Crème brûlée, 日本, ☕", "Pip> ")
    assert 'You say, "Crème brûlée, 日本, ☕"' in text
    assert sim.minds["ada"].tail[-1].text == 'Pip says, "Crème brûlée, 日本, ☕"'


class _AsciiClient(telnetlib3.TelnetClient):
    """A client that refuses CHARSET and BINARY: it gets seven-bit text."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert self.writer is not None
        self.writer.always_wont = {CHARSET}
        self.writer.always_dont = {BINARY}


async def test_a_client_refusing_charset_gets_ascii_with_replacement(
    server: MudServer, sim: Simulation
) -> None:
    reader, writer = await telnetlib3.open_connection(
        "127.0.0.1", server.port, encoding="ascii", client_factory=_AsciiClient,
        connect_minwait=0.0,
    )  # fmt: skip
    client = Client(reader, writer)
    await client.login("Pip")
    sim.execute(sim.character("Ada"), "say Café ☕ ready")
    assert 'Ada says, "Caf? ? ready"' in plain(await client.until('ready"'))
    client.close()


async def test_mssp_is_sent_once_however_often_a_client_asks(
    connect: Opener, server: MudServer
) -> None:
    crawler = await connect(mssp=True)
    await eventually(lambda: crawler.writer.ctx.mssp_data is not None)
    answers: list[object] = []
    crawler.writer.set_ext_callback(MSSP, answers.append)
    for _ in range(3):
        crawler.writer.send_iac(IAC + DO + MSSP)
    await crawler.login("Pat")  # the server has read and answered all it was sent
    assert answers == []
