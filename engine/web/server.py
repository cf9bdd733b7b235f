"""The world in a browser: one page over plain HTTP, and a websocket where it plays.

    web = WebServer(mud_server, port=8080)
    await web.start()             # listening; web.port says where
    ...
    await web.close()             # every page told, sessions ended, listener closed

One port serves both (websockets' ``serve``, on the loop the world runs on): a GET of
``/`` (``index.html``), ``/app.js`` or ``/style.css`` is answered from ``static/``
with a strict Content-Security-Policy (the page loads nothing from anywhere else);
``/ws`` opens the websocket. A browser says which page opened it (``Origin``): one
whose host is not this server's (``Host``) is refused with 403, so another site cannot
play as a visitor who is logged in here (cross-site websocket hijacking); a client
that sends no Origin (not a browser) may connect.

A websocket is admitted as a telnet connection is (``MudServer.admit_address``: the
same counts, by the peer's address), then its ``WebClient`` goes through
``MudServer.serve_client`` (the login dialogue, then the session). The page also
learns who is in its room (``here``) after each ``Room.Info`` and whenever something
happens there. Every connection's work is a task this server awaits when it closes
(and cancels, after ``CLOSE_GRACE``, if it will not end).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import ssl
from dataclasses import dataclass
from importlib import resources
from typing import Final
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from engine.errors import UsageError
from engine.telnet.server import CLOSE_GRACE, STOPPING, MudServer
from engine.telnet.settings import DEFAULT_BIND
from engine.web import messages
from engine.web.client import WebClient
from engine.world.events import Event

WS_PATH: Final = "/ws"
FAILED: Final = "Something went wrong on the server; this connection is closed."
FLUSH_SECONDS: Final = 10.0
"""Seconds a closed connection's last messages get to reach the page."""
ASSETS: Final = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/index.html": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
_HOST = re.compile(r"[A-Za-z0-9.\-]+(:\d{1,5})?|\[[0-9A-Fa-f:.]+\](:\d{1,5})?")
"""A Host header that may be named in the page's Content-Security-Policy."""

log = logging.getLogger("mudsim.telnet.web")
wire_log = logging.getLogger("mudsim.telnet.web.wire")
"""websockets' own log: its warnings and errors (a failed handshake is only info)."""
wire_log.setLevel(logging.WARNING)


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str


def frame_limit(max_line: int) -> int:
    """The largest message a page may send: a line at the limit, every character
    escaped in JSON (``\\uXXXX``), and room for the rest of the message."""
    return max(16 * 1024, max_line * 6 + 1024)


def load_assets() -> dict[str, Asset]:
    static = resources.files("engine.web") / "static"
    return {
        path: Asset((static / name).read_bytes(), kind) for path, (name, kind) in ASSETS.items()
    }


class WebServer:
    def __init__(self, mud: MudServer, port: int, bind: str = DEFAULT_BIND,
                 tls: ssl.SSLContext | None = None) -> None:  # fmt: skip
        self.mud, self.bind, self.tls = mud, bind, tls
        self._port = port
        self.assets = load_assets()
        self.max_size = frame_limit(mud.max_line)
        self.clients: set[WebClient] = set()
        self.stopping = False
        self._server: Server | None = None
        self._handlers: set[asyncio.Task[object]] = set()

    # -- listening ----------------------------------------------------------------------
    async def start(self) -> None:
        """Listen on ``bind`` and ``port`` (raises ``UsageError`` if it cannot)."""
        try:
            self._server = await serve(
                self._handle, self.bind, self._port, process_request=self._http,
                max_size=self.max_size, compression=None, ssl=self.tls, logger=wire_log,
            )  # fmt: skip
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise UsageError(f"cannot listen for browsers on {self.bind} port {self._port}: "
                             f"{reason}") from exc  # fmt: skip
        self.mud.sim.listeners.append(self._heard)
        log.info("serving %s to browsers on %s port %d", self.mud.sim.world.name, self.bind,
                 self.port)  # fmt: skip

    @property
    def port(self) -> int:
        """The port listened on (the chosen one when asked for 0)."""
        sockets = self._server.sockets if self._server is not None else ()
        return int(sockets[0].getsockname()[1]) if sockets else self._port

    @property
    def url(self) -> str:
        """Where a browser on this machine finds the page."""
        host = "localhost" if self.bind in ("0.0.0.0", "::", "") else self.bind
        if ":" in host:
            host = f"[{host}]"
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/"

    async def close(self, notice: str = STOPPING) -> None:
        """Tell every page ``notice``, end every connection, stop listening."""
        self.stopping = True
        with contextlib.suppress(ValueError):
            self.mud.sim.listeners.remove(self._heard)
        for client in list(self.clients):
            client.close(notice)
        if self._server is None:
            return
        self._server.close(close_connections=False)  # the pages are told first, above
        try:
            async with asyncio.timeout(CLOSE_GRACE + FLUSH_SECONDS):
                await self._server.wait_closed()
        except TimeoutError:
            for task in list(self._handlers):
                task.cancel()
            await self._server.wait_closed()

    # -- HTTP -------------------------------------------------------------------------
    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        """The page's files; None lets ``/ws`` become a websocket (if its Origin is
        this server's)."""
        path = urlsplit(request.path).path
        if path == WS_PATH:
            return self._foreign_origin(connection, request)
        asset = self.assets.get(path)
        if asset is None:
            response = connection.respond(404, "Not found: this server has one page, at /.\n")
        else:
            response = Response(200, "OK", Headers({
                "Content-Type": asset.content_type, "Content-Length": str(len(asset.body)),
                "Connection": "close",
            }), asset.body)  # fmt: skip
        _secure(response.headers, request)
        return response

    def _foreign_origin(self, connection: ServerConnection, request: Request) -> Response | None:
        """The refusal for a websocket a page from another site opened, else None."""
        origins = request.headers.get_all("Origin")
        if not origins:
            return None  # not a browser: nobody's session to hijack
        hosts = request.headers.get_all("Host")
        origin = urlsplit(origins[0])
        if (len(origins) == 1 and len(hosts) == 1 and origin.scheme in ("http", "https")
                and origin.netloc.lower() == hosts[0].lower()):  # fmt: skip
            return None
        log.warning("refused a websocket from %s opened by the page of %s",
                    _peer(connection), origins[0][:200])  # fmt: skip
        return connection.respond(403, "Refused: this game's websocket may only be opened by "
                                  "its own page, not by a page from another site.\n")  # fmt: skip

    # -- one websocket ------------------------------------------------------------------
    async def _handle(self, socket: ServerConnection) -> None:
        """websockets calls this for each websocket opened (never raises)."""
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            await self._play(socket)
        except Exception as exc:
            log.error("the web connection from %s failed", _peer(socket), exc_info=exc)
            with contextlib.suppress(Exception):  # what is left of it may be told why
                await socket.send(messages.close(FAILED))
                await socket.close(1011, "server error")
        finally:
            if task is not None:
                self._handlers.discard(task)

    async def _play(self, socket: ServerConnection) -> None:
        address = _peer(socket)
        refused = "The world is stopping; try again later." if self.stopping else None
        refused = refused or self.mud.admit_address(address)
        if refused is not None:
            with contextlib.suppress(ConnectionClosed):
                await socket.send(messages.close(refused))
                await socket.close(1008, "refused")
            return
        try:
            config = self.mud.config
            client = WebClient(
                socket, max_line=self.mud.max_line, max_output=config.max_output_kb * 1024,
                idle_seconds=config.idle_seconds, idle_notice=self.mud.idle_notice(),
                here=self._here,
            )  # fmt: skip
            self.clients.add(client)
            client.post(messages.hello(self.mud.sim.world.name, self.mud.max_line))
            await self._run(client)
        finally:
            self.mud.left_address(address)

    async def _run(self, client: WebClient) -> None:
        try:
            async with asyncio.timeout(None) as deadline, asyncio.TaskGroup() as group:
                group.create_task(client.receive(), name=f"web input from {client.address}")
                group.create_task(client.send_all(), name=f"web output to {client.address}")
                await self.mud.serve_client(client)
                client.close()
                deadline.reschedule(asyncio.get_running_loop().time() + FLUSH_SECONDS)
        except TimeoutError:  # the page would not take its last messages
            client.socket.transport.abort()
        finally:
            self.clients.discard(client)

    # -- the world's side ---------------------------------------------------------------
    def _here(self, room_id: str) -> list[str]:
        return [c.name for c in self.mud.sim.world.characters_in(room_id)]

    def _heard(self, event: Event) -> None:
        """Something happened in a room: the pages playing there learn who is in it
        (never raises: ``Simulation.deliver`` is in the middle of a command)."""
        try:
            for session in list(self.mud.sessions.values()):
                conn = session.conn
                character = session.character
                if (isinstance(conn, WebClient) and character.location == event.room_id
                        and character.id != event.actor_id):  # fmt: skip
                    conn.send_here(event.room_id)  # (a mover learns from its Room.Info)
        except Exception:
            log.exception("telling the pages who is in %s failed", event.room_id)


def _secure(headers: Headers, request: Request) -> None:
    """The page may load and connect to this server only."""
    hosts = request.headers.get_all("Host")
    host = hosts[0] if len(hosts) == 1 and _HOST.fullmatch(hosts[0]) else None
    sockets = f" ws://{host} wss://{host}" if host else ""
    headers["Content-Security-Policy"] = (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        f"connect-src 'self'{sockets}; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Referrer-Policy"] = "no-referrer"
    headers["Cache-Control"] = "no-store"


def _peer(socket: ServerConnection) -> str:
    peer = socket.remote_address
    return str(peer[0]) if isinstance(peer, tuple) and peer else "?"
