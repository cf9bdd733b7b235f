"""A websocket client for the web tests: it speaks the page's JSON messages, as
``engine/web/static/app.js`` does, and keeps every message it was sent (``seen``).

Accounts (``add_accounts``): Pat (admin, in the hall), Pip (player, in the hall), Bea
(builder, in the yard), each with the password ``<name>-password`` (lower case).
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

from engine.sim.simulation import Simulation
from engine.vault.accounts import Account, AccountStore, hash_password

WAIT = 20.0
"""Seconds a test waits for what it expects before it fails (never a timing check)."""
Message = dict[str, Any]


@functools.cache
def password_hash(name: str) -> str:
    return hash_password(f"{name.lower()}-password")


def add_accounts(sim: Simulation, *names: str) -> None:
    store = AccountStore(sim.vault.root)
    for name in names:
        if store.find(name) is None:
            store.add(Account(name, None, password_hash(name)))


class Page:
    """One websocket to ``/ws``; ``until`` reads on to a message the test names."""

    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket
        self.seen: list[Message] = []
        self._read_to = 0
        self.ended = False

    @classmethod
    async def open(cls, port: int, *, origin: str | None = None,
                   tls: ssl.SSLContext | None = None, **kwargs: Any) -> Page:  # fmt: skip
        scheme = "wss" if tls is not None else "ws"
        socket = await connect(f"{scheme}://127.0.0.1:{port}/ws", ssl=tls,
                               origin=Origin(origin) if origin else None, **kwargs)  # fmt: skip
        return cls(socket)

    async def send(self, text: str) -> None:
        await self.socket.send(json.dumps({"type": "line", "text": text}))

    async def send_raw(self, raw: str | bytes) -> None:
        await self.socket.send(raw)

    async def _next(self) -> None:
        try:
            raw = await self.socket.recv()
        except ConnectionClosed:
            self.ended = True
            raise
        self.seen.append(json.loads(raw))

    async def until(
        self, text: str, kind: str | None = None, within: float = WAIT
    ) -> list[Message]:
        """Read until a message (of ``kind``, if given) whose text holds ``text`` (after
        what earlier calls consumed); the messages up to and including it."""
        async with asyncio.timeout(within):
            while True:
                for at in range(self._read_to, len(self.seen)):
                    message = self.seen[at]
                    if (kind is None or message["type"] == kind) and text in str(
                        message.get("text", "")
                    ):
                        part, self._read_to = self.seen[self._read_to : at + 1], at + 1
                        return part
                try:
                    await self._next()
                except ConnectionClosed as exc:
                    raise AssertionError(f"closed before {text!r}; saw {self.seen!r}") from exc

    async def until_type(self, kind: str, within: float = WAIT, **fields: Any) -> Message:
        """Read until a message of ``kind`` with these ``fields``; that message."""
        async with asyncio.timeout(within):
            while True:
                for at in range(self._read_to, len(self.seen)):
                    message = self.seen[at]
                    if message["type"] == kind and all(
                        message.get(k) == v for k, v in fields.items()
                    ):
                        self._read_to = at + 1
                        return message
                await self._next()

    async def closed(self, within: float = WAIT) -> list[Message]:
        """Read until the server closes the websocket; what came meanwhile."""
        async with asyncio.timeout(within):
            while not self.ended:
                try:
                    await self._next()
                except ConnectionClosed:
                    break
        part, self._read_to = self.seen[self._read_to :], len(self.seen)
        return part

    async def login(self, name: str, password: str | None = None) -> list[Message]:
        """Log in as ``name`` (its fixture password unless given); the messages to the
        prompt."""
        await self.until("Name: ", "prompt")
        await self.send(name)
        asked = await self.until("Password: ", "prompt")
        assert asked[-1]["hidden"] is True  # the page asks in a password field
        await self.send(password if password is not None else f"{name.lower()}-password")
        return await self.until(f"{name}> ", "prompt")

    async def command(self, line: str, prompt: str) -> list[Message]:
        await self.send(line)
        return await self.until(prompt, "prompt")

    async def close(self) -> None:
        await self.socket.close()


def texts(messages: list[Message]) -> str:
    """The text messages' text, a line each."""
    return "\n".join(str(m["text"]) for m in messages if m["type"] == "text")


Opener = Callable[..., Awaitable[Page]]
"""The ``connect`` fixture: opens a ``Page`` to the test's web server."""
