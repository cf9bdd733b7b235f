"""One client, as the login dialogue and the session see it: lines in, text out.

Lines come from telnetlib3's reader (decoded in the encoding CHARSET settled, or ASCII
with U+FFFD for what does not decode), cut by ``LineAssembler`` at the vault's line
limit and cleaned by ``clean_line``; a line that is too long or is not text is handed
up as such (``TooLong``, ``NOT_TEXT``), never to the parser. Text goes out through
``render`` (safe, wrapped at the client's NAWS width, coloured unless the client shows
none or the player said ``@color off``), with CR LF line ends; what cannot be encoded
for the client becomes ``?`` (telnetlib3's writer with ``errors="replace"``).

Line ends are telnet's (RFC 854): CR LF for a new line, CR NUL for a CR alone; no bare
LF or CR leaves (``nvt_line_ends``). A client edits and echoes its own lines (the
server does not say WILL ECHO but for a password), and its echo of Enter may be a bare
LF: Debian's ``telnet`` agrees to BINARY, which turns its terminal's output processing
off, so the cursor goes down but not back. Text that follows a line the client typed
therefore starts with CR NUL (back to the line's start: nothing to a client whose
Enter already got there). While the server echoes (a password, WILL ECHO agreed) it
echoes the Enter as CR LF itself.

A client that reads too slowly is not waited for: once more than ``max_output`` bytes
wait to be sent to it, its connection is closed.
"""

from __future__ import annotations

import contextlib
import logging
from asyncio import WriteTransport
from collections import deque
from collections.abc import Iterator
from typing import Any, Final

from telnetlib3 import TelnetReaderUnicode, TelnetWriterUnicode
from telnetlib3.telopt import ECHO, WILL, WONT

from engine.telnet.client import NOT_TEXT, Received, Rendered
from engine.telnet.limits import LineAssembler, TooLong, clean_line
from engine.telnet.protocol import MudWriter
from engine.telnet.render import (
    CR_LF,
    CR_NUL,
    NOTICE_STYLE,
    lines_for,
    nvt_line_ends,
    supports_colour,
    wrap_width,
)

READ_CHUNK: Final = 4096

log = logging.getLogger("mudsim.telnet")


class Connection:
    def __init__(
        self, reader: TelnetReaderUnicode, writer: TelnetWriterUnicode, *, max_line: int,
        max_output: int,
    ) -> None:  # fmt: skip
        self.reader, self.writer = reader, writer
        self.lines = LineAssembler(max_line)
        self.max_output = max_output
        self._ready: deque[str | TooLong] = deque()
        self.colour = supports_colour(self.terminal_types())
        """Whether text goes out in colour (``@color`` switches it)."""
        self._opening = ""
        """What the next text starts with: CR LF after a prompt (a new line), CR NUL
        after a line the client typed and echoed (back to the line's start), else
        nothing."""
        self.closed = False
        self.address = str((writer.get_extra_info("peername") or ("?",))[0])

    # -- what the client said about itself ----------------------------------------------
    def terminal_types(self) -> list[str]:
        """The TTYPE answers, in order (``xterm``, ``MUDLET``, ``MTTS 2825`` ...)."""
        found = []
        for number in range(1, 9):
            name = self.writer.get_extra_info(f"ttype{number}")
            if not name:
                break
            found.append(str(name))
        return found

    @property
    def width(self) -> int:
        return wrap_width(self.writer.get_extra_info("cols"))

    @property
    def gone(self) -> bool:
        return self.closed or self.writer.is_closing()

    # -- reading ------------------------------------------------------------------------
    async def read_line(self) -> Received:
        """The next line the client sent (see ``Received``); a line cut off by the end
        of the connection is dropped."""
        while not self._ready:
            if self.closed:
                return None
            try:
                chunk = await self.reader.read(READ_CHUNK)
            except (ConnectionError, OSError):
                return None
            if not chunk:
                return None
            self._ready.extend(self.lines.feed(chunk))
        item = self._ready.popleft()
        self._opening = CR_NUL  # the client's echo of Enter may have been a bare LF
        if isinstance(item, TooLong):
            return item
        cleaned = clean_line(item)
        return NOT_TEXT if cleaned is None else cleaned

    # -- writing ------------------------------------------------------------------------
    def say(self, text: str, style: str = "", rendered: Rendered | None = None) -> None:
        """``text`` as whole lines (wrapped, coloured in ``style``); ``rendered`` keeps
        what was made for each (width, colour), so one event seen by ten clients alike is
        wrapped and coloured once."""
        key = (self.width, self.colour)
        block = rendered.get(key) if rendered is not None else None
        if block is None:
            block = CR_LF.join(lines_for(text, key[0], style, colour=key[1])) + CR_LF
            if rendered is not None:
                rendered[key] = block
        self._write(self._opening + block)
        self._opening = ""

    def notice(self, text: str) -> None:
        """The server's own words (a refused line, the world stopping)."""
        self.say(text, NOTICE_STYLE)

    def prompt(self, text: str) -> None:
        """``text`` with no line end, then telnet's Go Ahead (what MUD clients take for
        the end of a prompt)."""
        self._write(self._opening + text)
        self._opening = CR_LF
        if not self.closed:
            self.writer.send_ga()

    def gmcp(self, package: str, data: Any) -> None:
        """A GMCP message, if the client agreed to GMCP (else nothing)."""
        if not self.closed:
            self.writer.send_gmcp(package, data)

    @contextlib.contextmanager
    def hidden_input(self) -> Iterator[None]:
        """While the block runs the client does not echo what is typed (``WILL ECHO``:
        a plain telnet stops echoing, a MUD client masks its input line); then it does
        again (``WONT ECHO``). The Enter typed meanwhile is echoed as CR LF when the
        client agreed (``DO ECHO``); one that refused echoed it itself."""
        self._may_echo(True)
        self.writer.iac(WILL, ECHO)
        try:
            yield
        finally:
            self._may_echo(False)
            if not self.closed:
                echoing = self.writer.local_option.enabled(ECHO)
                self.writer.iac(WONT, ECHO)
                if echoing:
                    self._write(CR_LF)  # the Enter the client did not echo
                    self._opening = ""

    def _may_echo(self, may: bool) -> None:
        if isinstance(self.writer, MudWriter):
            self.writer.may_echo = may

    def _write(self, text: str) -> None:
        if self.closed or self.writer.connection_closed:
            return
        transport = self.writer.transport
        waiting = transport.get_write_buffer_size() if isinstance(transport, WriteTransport) else 0
        if waiting > self.max_output:
            log.warning("closed the connection from %s: %d bytes waited for it (it reads "
                        "too slowly)", self.address, waiting)  # fmt: skip
            assert isinstance(transport, WriteTransport)
            transport.abort()  # what waits is dropped: close() would wait for it to drain
            self.close()
            return
        self.writer.write(nvt_line_ends(text))

    def close(self, message: str | None = None) -> None:
        """Say ``message`` (if any), then close; the reader ends."""
        if self.closed:
            return
        if message:
            self.notice(message)
        self.closed = True
        self.writer.close()
