"""The world served to browsers in-process: a ``MudServer`` (not listening on telnet)
and a ``WebServer`` on an ephemeral loopback port, over a simulation of the fixture
world (accounts for Pat, Pip and Bea); ``connect`` opens websockets to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from web_page import Opener, Page, add_accounts

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import ServeOptions, TelnetConfig
from engine.web.server import WebServer


@pytest.fixture
def config() -> TelnetConfig:
    return TelnetConfig()


@pytest.fixture
async def mud(sim: Simulation, config: TelnetConfig) -> AsyncIterator[MudServer]:
    add_accounts(sim, "Pat", "Pip", "Bea")
    server = MudServer(sim, ServeOptions(port=0), config=config)
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def web(mud: MudServer) -> AsyncIterator[WebServer]:
    server = WebServer(mud, 0)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


@pytest.fixture
async def connect(web: WebServer) -> AsyncIterator[Opener]:
    """Open websockets to the web server (closed at the end of the test)."""
    pages: list[Page] = []

    async def opener(**kwargs: Any) -> Page:
        page = await Page.open(web.port, **kwargs)
        pages.append(page)
        return page

    yield opener
    for page in pages:
        await page.close()
