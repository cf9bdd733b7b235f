"""A telnet client with no telnetlib3, for what the server puts on the wire: plain
asyncio streams, every option the server offers refused (``WILL`` -> ``DONT``, ``DO`` ->
``WONT``) but those it is told to agree to, the bytes it was sent kept as they came
(``raw``) and with the telnet commands taken out (``data``); and ``Screen``, what a
terminal shows of them.

``Screen`` is a terminal with no output processing, as Debian's ``telnet`` (netkit 0.17,
and inetutils') leaves its terminal once the server agrees to BINARY: CR goes to the
start of the row, LF down a row in the same column. The client echoes what it types
there as such a ``telnet`` does: the line, then the Enter as a bare LF, unless the
server echoes (it said ``WILL ECHO`` and the client agreed), when nothing is echoed.
"""

from __future__ import annotations

import asyncio
from typing import Final

IAC, DONT, DO, WONT, WILL, SB, SE = 255, 254, 253, 252, 251, 250, 240
ECHO: Final = 1
WAIT: Final = 15.0
"""Seconds a read waits for text it expects before the test fails (never a timing check)."""


class Screen:
    """The rows a terminal shows (printable ASCII, CR, LF; NUL shows nothing)."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = [[]]
        self.row = self.col = 0

    def feed(self, data: bytes) -> None:
        for byte in data:
            if byte == 0x0D:
                self.col = 0
            elif byte == 0x0A:
                self.row += 1
                if self.row == len(self.rows):
                    self.rows.append([])
            elif 0x20 <= byte < 0x7F:
                cells = self.rows[self.row]
                cells.extend(" " * (self.col + 1 - len(cells)))
                cells[self.col] = chr(byte)
                self.col += 1

    @property
    def lines(self) -> list[str]:
        return ["".join(cells).rstrip() for cells in self.rows]


class RawClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 agree: frozenset[int]) -> None:  # fmt: skip
        self.reader, self.writer, self.agree = reader, writer, agree
        self.raw = bytearray()
        """Every byte the server sent."""
        self.data = bytearray()
        """The text it sent: ``raw`` without its telnet commands."""
        self.screen = Screen()
        self.server_echoes = False
        self._unparsed = bytearray()
        self._theirs: set[int] = set()
        """The options the server does (its ``WILL`` agreed to)."""

    @classmethod
    async def open(cls, port: int, *, agree: frozenset[int] = frozenset()) -> RawClient:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, agree)

    def send(self, line: str) -> None:
        """Type ``line`` and Enter: CR LF on the wire, the echo on the screen."""
        if not self.server_echoes:
            self.screen.feed(line.encode("ascii") + b"\n")
        self.writer.write(line.encode("ascii") + b"\r\n")

    def send_command(self, *command: int) -> None:
        self.writer.write(bytes([IAC, *command]))

    async def until(self, text: str, times: int = 1) -> None:
        """Read until ``text`` has come ``times`` times in all (counting from the start)."""
        wanted = text.encode("ascii")
        async with asyncio.timeout(WAIT):
            while self.data.count(wanted) < times:
                chunk = await self.reader.read(4096)
                if not chunk:
                    raise AssertionError(f"the connection closed before {text!r}; "
                                         f"saw {bytes(self.raw)!r}")  # fmt: skip
                self.raw += chunk
                self._parse(chunk)

    def _parse(self, chunk: bytes) -> None:
        """Take the telnet commands out of what came, answering each offer."""
        buf = self._unparsed + chunk
        text, at = bytearray(), 0
        while at < len(buf):
            byte = buf[at]
            if byte != IAC:
                text.append(byte)
                at += 1
                continue
            if at + 1 >= len(buf):
                break
            command = buf[at + 1]
            if command == IAC:
                text.append(IAC)
                at += 2
            elif command in (WILL, WONT, DO, DONT):
                if at + 2 >= len(buf):
                    break
                self._answer(command, buf[at + 2])
                at += 3
            elif command == SB:
                end = buf.find(bytes([IAC, SE]), at + 2)
                if end < 0:
                    break
                at = end + 2
            else:  # GA, NOP ...
                at += 2
        self._unparsed = buf[at:]
        self.data += text
        self.screen.feed(bytes(text))

    def _answer(self, command: int, option: int) -> None:
        if command in (WILL, WONT):
            agreed = command == WILL and option in self.agree
            if agreed != (option in self._theirs):  # a change: answered, else not (RFC 854)
                self.send_command(DO if agreed else DONT, option)
                self._theirs ^= {option}
            elif command == WILL and not agreed:
                self.send_command(DONT, option)
            if option == ECHO:
                self.server_echoes = agreed
        elif command == DO:
            self.send_command(WILL if option in self.agree else WONT, option)

    def close(self) -> None:
        self.writer.close()
