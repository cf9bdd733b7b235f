"""What the login dialogue and a session need of a client, whatever carries it.

A telnet connection (``engine.telnet.connection.Connection``) and a browser's websocket
(``engine.web``) both give this: lines in (cleaned, cut at the line limit), text out
(wrapped and coloured, or sent as structured messages), a prompt, GMCP-like data, input
that is not shown while a password is typed, and a close that says why.
"""

from __future__ import annotations

import contextlib
from typing import Any, Final, Protocol

from engine.telnet.limits import TooLong

NOT_TEXT: Final = object()
"""A line that held bytes the client's encoding does not give text for."""
Received = str | TooLong | object | None
"""What ``read_line`` gives: a clean line, ``TooLong``, ``NOT_TEXT``, or None at the end."""
Rendered = dict[tuple[int, bool], str]
"""Text made for clients, by (width, colour): one event seen by ten clients alike is
made once."""


class Client(Protocol):
    address: str
    """The peer's IP address (what limits, throttles and bans count by)."""
    closed: bool
    colour: bool
    """Whether text goes out coloured (``@color`` switches it)."""

    @property
    def gone(self) -> bool:
        """Closed, by the server or by the client (its side of the connection ended)."""

    async def read_line(self) -> Received:
        """The next line the client sent (see ``Received``)."""

    def say(self, text: str, style: str = "", rendered: Rendered | None = None) -> None:
        """``text`` as whole lines in ``style`` (a Rich style name, as the TUI's)."""

    def notice(self, text: str) -> None:
        """The server's own words (a refused line, the world stopping)."""

    def prompt(self, text: str) -> None:
        """``text`` as the prompt for the next line."""

    def gmcp(self, package: str, data: Any) -> None:
        """Structured data (GMCP ``Room.Info``, ``Char.Status``), if the client takes it."""

    def hidden_input(self) -> contextlib.AbstractContextManager[None]:
        """While the block runs, what the client types is not shown (a password)."""

    def close(self, message: str | None = None) -> None:
        """Say ``message`` (if any), then close; ``read_line`` ends."""
