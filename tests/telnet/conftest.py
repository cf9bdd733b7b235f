"""The served world in-process: a ``MudServer`` on an ephemeral loopback port, over a
simulation of the fixture world (accounts for Pat, Pip and Bea), and telnetlib3 clients
that log in to it (``connect``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from telnet_client import Client, Opener, serving

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import ServeOptions, TelnetConfig


@pytest.fixture
def config() -> TelnetConfig:
    return TelnetConfig()


@pytest.fixture
def serve_options() -> ServeOptions:
    return ServeOptions(port=0)


@pytest.fixture
async def server(
    sim: Simulation, config: TelnetConfig, serve_options: ServeOptions
) -> AsyncIterator[MudServer]:
    async with serving(sim, serve_options, config) as served:
        yield served


@pytest.fixture
async def connect(server: MudServer) -> AsyncIterator[Opener]:
    """Open clients to the server (closed at the end of the test)."""
    clients: list[Client] = []

    async def opener(**kwargs: Any) -> Client:
        client = await Client.open(server.port, **kwargs)
        clients.append(client)
        return client

    yield opener
    for client in clients:
        client.close()
