"""One browser's websocket as the login dialogue and a session see it: the telnet
``Client`` protocol (``engine.telnet.client``), carried as JSON messages
(``engine.web.messages``).

Two tasks run beside the session (``WebServer`` owns them): ``receive`` takes the
page's messages, cuts and cleans their lines exactly as telnet's ``Connection`` does
(``LineAssembler`` at the vault's line limit, ``clean_line``: a line too long is
``TooLong``, one holding U+FFFD is ``NOT_TEXT``) and answers a message that is not a
line with one notice; ``send_all`` sends what ``say``, ``prompt`` and ``gmcp`` queued,
in order. At most ``QUEUED_LINES`` lines wait to be read: past that the socket is not
read (the page waits, as a telnet client does when nobody reads it). A page that reads
too slowly is not waited for: once more than ``max_output`` bytes wait to reach it,
its connection is dropped, as telnet's is. ``idle_seconds`` without a message closes
the connection with ``idle_notice``.

``close`` queues the reason (a notice and a ``close`` message), ends ``read_line`` at
once, and lets ``send_all`` deliver what is queued before it closes the websocket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Final, Protocol

from websockets.exceptions import ConnectionClosed

from engine.telnet.client import NOT_TEXT, Received, Rendered
from engine.telnet.limits import LineAssembler, TooLong, clean_line
from engine.telnet.render import NOTICE_STYLE
from engine.web import messages
from engine.web.messages import Refused

QUEUED_LINES: Final = 20
"""Lines received and not yet read, past which the socket is not read."""
RENDERED_KEY: Final = -1
"""The width ``Rendered`` keeps a web message under (telnet's widths are positive)."""
ROOM_INFO: Final = "Room.Info"

log = logging.getLogger("mudsim.telnet.web")


class Socket(Protocol):
    """What a ``WebClient`` needs of its websocket (websockets' ``ServerConnection``)."""

    @property
    def remote_address(self) -> Any: ...
    @property
    def transport(self) -> asyncio.Transport: ...
    async def recv(self) -> str | bytes: ...
    async def send(self, message: str) -> None: ...
    async def close(self, code: int = 1000, reason: str = "") -> None: ...


class WebClient:
    def __init__(
        self, socket: Socket, *, max_line: int, max_output: int,
        idle_seconds: float | None = None, idle_notice: str = "",
        here: Callable[[str], list[str]] | None = None,
    ) -> None:  # fmt: skip
        self.socket = socket
        peer = socket.remote_address
        self.address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        self.closed = False
        self.colour = True
        """Whether text goes out with its style (``@color`` switches it)."""
        self.lines = LineAssembler(max_line)
        self.max_output = max_output
        self.idle_seconds, self.idle_notice = idle_seconds, idle_notice
        self.here = here
        """A room's id -> who is in it (sent after each ``Room.Info``)."""
        self.dropped = False
        """The page read too slowly: the connection was dropped, not closed."""
        self._ready: deque[Received] = deque()
        self._ended = False
        """The page's side of the websocket is gone."""
        self._hidden = False
        self._outbox: deque[str] = deque()
        self._waiting = 0
        """Bytes in ``_outbox``."""
        self._arrived = asyncio.Event()
        self._drained = asyncio.Event()
        self._queued = asyncio.Event()

    @property
    def gone(self) -> bool:
        return self.closed or self._ended

    # -- reading ------------------------------------------------------------------------
    async def read_line(self) -> Received:
        """The next line the page sent (see ``Received``); None once the connection is
        closed or the page has gone and every line it sent whole was read."""
        while not self._ready:
            if self.closed or self._ended:
                return None
            self._arrived.clear()
            await self._arrived.wait()
        item = self._ready.popleft()
        self._drained.set()
        return item

    async def receive(self) -> None:
        """Take the page's messages until the websocket ends (never raises)."""
        try:
            while not self.closed:
                try:
                    async with asyncio.timeout(self.idle_seconds):
                        raw = await self.socket.recv()
                except TimeoutError:
                    log.info("closed the idle web connection from %s", self.address)
                    self.close(self.idle_notice)
                    return
                self._take(raw)
                while len(self._ready) >= QUEUED_LINES and not self.closed:
                    self._drained.clear()
                    await self._drained.wait()
        except ConnectionClosed:
            pass
        finally:
            self._ended = True
            self._arrived.set()

    def _take(self, raw: str | bytes) -> None:
        if self.closed:
            return
        parsed = messages.parse(raw)
        if isinstance(parsed, Refused):
            self.notice(parsed.text)
            return
        for item in self.lines.feed(parsed + "\n"):
            if isinstance(item, TooLong):
                self._ready.append(item)
            else:
                cleaned = clean_line(item)
                self._ready.append(NOT_TEXT if cleaned is None else cleaned)
        self._arrived.set()

    # -- writing ------------------------------------------------------------------------
    def say(self, text: str, style: str = "", rendered: Rendered | None = None) -> None:
        """``text`` as a ``text`` message; ``rendered`` keeps the message made, so one
        event seen by ten pages alike is encoded once."""
        key = (RENDERED_KEY, self.colour)
        message = rendered.get(key) if rendered is not None else None
        if message is None:
            message = messages.text(text, style, colour=self.colour)
            if rendered is not None:
                rendered[key] = message
        self.post(message)

    def notice(self, text: str) -> None:
        self.say(text, NOTICE_STYLE)

    def prompt(self, text: str) -> None:
        """The prompt for the next line; while ``hidden_input`` runs the page asks for
        it in a password field."""
        self.post(messages.prompt(text, hidden=self._hidden))

    def gmcp(self, package: str, data: Any) -> None:
        """As telnet's GMCP; after ``Room.Info``, who is in that room."""
        self.post(messages.gmcp(package, data))
        if package == ROOM_INFO and isinstance(data, dict) and isinstance(data.get("id"), str):
            self.send_here(data["id"])

    def send_here(self, room_id: str) -> None:
        """Who is in ``room_id`` now."""
        if self.here is not None:
            self.post(messages.here(room_id, self.here(room_id)))

    @contextlib.contextmanager
    def hidden_input(self) -> Iterator[None]:
        self._hidden = True
        try:
            yield
        finally:
            self._hidden = False

    def post(self, message: str) -> None:
        """Queue one message (JSON text) for the page."""
        if self.closed:
            return
        size = len(message.encode())
        if self._waiting + size > self.max_output:
            log.warning("closed the web connection from %s: %d bytes waited for it (it "
                        "reads too slowly)", self.address, self._waiting + size)  # fmt: skip
            self._drop()
            return
        self._outbox.append(message)
        self._waiting += size
        self._queued.set()

    async def send_all(self) -> None:
        """Send what is queued, in order, until closed; then close the websocket (never
        raises)."""
        try:
            while True:
                while self._outbox:
                    message = self._outbox.popleft()
                    self._waiting -= len(message.encode())
                    await self.socket.send(message)
                if self.closed:
                    break
                self._queued.clear()
                await self._queued.wait()
            if not self.dropped:
                await self.socket.close(1000, "goodbye")
        except ConnectionClosed:
            pass

    def close(self, message: str | None = None) -> None:
        """Say ``message`` (if any), then close: ``read_line`` ends now, the websocket
        once what is queued is sent."""
        if self.closed:
            return
        if message:
            self.notice(message)
        self.post(messages.close(message))
        self._stop()

    def _drop(self) -> None:
        """Close without waiting for the page: what is queued is thrown away."""
        self.dropped = True
        self._outbox.clear()
        self._waiting = 0
        self._stop()
        self.socket.transport.abort()

    def _stop(self) -> None:
        self.closed = True
        self._arrived.set()
        self._drained.set()
        self._queued.set()
