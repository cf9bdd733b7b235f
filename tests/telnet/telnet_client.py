"""telnetlib3 clients for the served world's tests, and the fixture accounts.

Accounts: Pat (admin, in the hall), Pip (player, in the hall), Bea (builder, in the
yard), each with the password ``<name>-password`` (lower case), e.g. ``pat-password``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import telnetlib3
from telnetlib3.telopt import MSSP

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import ServeOptions, TelnetConfig
from engine.vault.accounts import Account, AccountStore, hash_password

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WAIT = 15.0
"""Seconds a test waits for text it expects before it fails (never a timing check)."""


@functools.cache
def password_hash(name: str) -> str:
    return hash_password(f"{name.lower()}-password")


def add_accounts(sim: Simulation, *names: str) -> None:
    """Accounts for ``names``, each with the role its character has in the fixture world
    (roles live in accounts: an account with none is a player's)."""
    store = AccountStore(sim.vault.root)
    for name in names:
        if store.find(name) is None:
            role = sim.character(name).role if name in ("Pat", "Pip", "Bea") else None
            store.add(Account(name, role, password_hash(name)))


@contextlib.asynccontextmanager
async def serving(
    sim: Simulation,
    options: ServeOptions | None = None,
    config: TelnetConfig | None = None,
    **kwargs: Any,
) -> AsyncIterator[MudServer]:
    """A server for ``sim`` (accounts for Pat, Pip and Bea) on an ephemeral port, closed
    at the end (``kwargs``: ``MudServer``'s, such as ``clock`` and ``sleep``)."""
    add_accounts(sim, "Pat", "Pip", "Bea")
    server = MudServer(sim, options or ServeOptions(port=0), config=config or TelnetConfig(),
                       **kwargs)  # fmt: skip
    await server.start()
    try:
        yield server
    finally:
        await server.close()


class Client:
    """A telnetlib3 client: what it sent, what it was sent (kept whole in ``seen``)."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self.reader, self.writer = reader, writer
        self.seen = ""
        self._read_to = 0
        """Where the last ``until`` stopped reading ``seen``."""

    @classmethod
    async def open(cls, port: int, *, cols: int = 80, term: str = "xterm", mssp: bool = False,
                   encoding: str = "utf8", source: str = "127.0.0.1") -> Client:  # fmt: skip
        """A client connected to ``port`` on 127.0.0.1 from the address ``source`` (any
        of 127.0.0.0/8: each is another address to the server's limits)."""
        factory = None
        if mssp:

            class MsspClient(telnetlib3.TelnetClient):
                def connection_made(self, transport: asyncio.BaseTransport) -> None:
                    super().connection_made(transport)
                    assert self.writer is not None
                    self.writer.passive_do.add(MSSP)

            factory = MsspClient
        reader, writer = await telnetlib3.open_connection(
            "127.0.0.1", port, cols=cols, term=term, encoding=encoding, connect_minwait=0.0,
            client_factory=factory or telnetlib3.TelnetClient, local_addr=(source, 0),
        )  # fmt: skip
        return cls(reader, writer)

    def send(self, line: str) -> None:
        self.writer.write(line + "\r\n")

    async def until(self, text: str, within: float = WAIT) -> str:
        """Read until ``text`` arrives (after what earlier calls consumed); the text read
        up to and including it, colours left in."""
        async with asyncio.timeout(within):
            while text not in self.seen[self._read_to :]:
                chunk = await self.reader.read(4096)
                if not chunk:
                    raise AssertionError(
                        f"the connection closed before {text!r}; saw {self.seen!r}"
                    )
                self.seen += chunk
        end = self.seen.index(text, self._read_to) + len(text)
        part, self._read_to = self.seen[self._read_to : end], end
        return part

    async def until_count(self, text: str, count: int, within: float = WAIT) -> None:
        """Read until ``text`` has come ``count`` times in all."""
        async with asyncio.timeout(within):
            while self.seen.count(text) < count:
                chunk = await self.reader.read(4096)
                if not chunk:
                    raise AssertionError(f"the connection closed; saw {self.seen!r}")
                self.seen += chunk
        self._read_to = len(self.seen)

    async def closed(self, within: float = WAIT) -> str:
        """Read until the server closes the connection; what came meanwhile."""
        async with asyncio.timeout(within):
            while chunk := await self.reader.read(4096):
                self.seen += chunk
        part, self._read_to = self.seen[self._read_to :], len(self.seen)
        return part

    async def login(self, name: str, password: str | None = None) -> str:
        """Log in as ``name`` (its fixture password unless given); the text to the prompt."""
        await self.until("Name: ")
        self.send(name)
        await self.until("Password: ")
        self.send(password if password is not None else f"{name.lower()}-password")
        return await self.until(f"{name}> ")

    async def command(self, line: str, prompt: str) -> str:
        """Send ``line``; what came back up to the next ``prompt``."""
        self.send(line)
        return await self.until(prompt)

    @property
    def gmcp(self) -> dict[str, Any]:
        return dict(self.writer.ctx.gmcp_data)

    def close(self) -> None:
        self.writer.close()


def plain(text: str) -> str:
    return ANSI.sub("", text)


async def eventually(check: Callable[[], bool], within: float = WAIT) -> None:
    async with asyncio.timeout(within):
        while not check():  # noqa: ASYNC110 - polling a condition the test names
            await asyncio.sleep(0.01)


Opener = Callable[..., Awaitable[Client]]
