"""telnetlib3's server protocol and writer, extended where telnetlib3 invites it.

``MudProtocol`` is telnetlib3's ``TelnetServer`` (in line mode: the client edits and
echoes its own lines) that also offers GMCP and MSSP (``WILL``), turns a connection
away when the host says so (without negotiating: quietly), says why it closes an idle one, and tells its host when it
comes and goes. ``MudWriter`` is telnetlib3's writer that tells the host each option
the client agrees to (``DO``), so MSSP is answered the moment a crawler asks, and that
agrees to echo only while the server means to (``may_echo``: a password is being typed,
``Connection.hidden_input``): a client's ``DO ECHO`` at any other time is refused, as
nothing here would echo its lines.

Every byte of the protocol is telnetlib3's; nothing here parses telnet. What a client's
malformed bytes make telnetlib3 raise (a NAWS of three bytes) it logs as a traceback, a
warning a line; ``quiet_protocol_errors`` makes that one debug line of ours.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from telnetlib3 import TelnetServer, TelnetWriterUnicode
from telnetlib3.telopt import ECHO, GMCP, MSSP, WILL, WONT

from engine.telnet.render import CR_LF, nvt_line_ends


class Host(Protocol):
    """What a connection needs from the server that accepted it."""

    def admit(self, protocol: MudProtocol) -> str | None:
        """None to let ``protocol`` in, else what to tell it before it is closed."""

    def agreed(self, protocol: MudProtocol, option: bytes) -> None:
        """The client agreed to ``option`` (it sent ``DO``)."""

    def left(self, protocol: MudProtocol) -> None:
        """An admitted connection is gone."""

    def idle_notice(self) -> str:
        """What an idle connection is told as it is closed."""


class MudWriter(TelnetWriterUnicode):
    """telnetlib3's writer; ``agreed`` hears each option the client agrees we do, once
    (a client repeating ``DO MSSP`` is not answered again and again)."""

    agreed: Callable[[bytes], None] | None = None
    may_echo = False
    """The server has said WILL ECHO and not yet WONT ECHO (the client's answer may come
    after a later DONT ECHO, which clears telnetlib3's record of the WILL)."""

    def handle_do(self, opt: bytes) -> bool:
        before = self.local_option.enabled(opt)
        if opt == ECHO and not self.may_echo:
            self.iac(WONT, ECHO)  # the client echoes its own lines
            return False
        accepted = super().handle_do(opt)
        if accepted and not before and self.agreed is not None:
            # telnetlib3 records the option as agreed once this returns
            asyncio.get_running_loop().call_soon(self.agreed, opt)
        return accepted


class MudProtocol(TelnetServer):
    """One client connection (see the module)."""

    host: ClassVar[Host]

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("writer_factory_encoding", MudWriter)
        super().__init__(**kwargs)
        self.admitted = False
        self.refused = False
        self.address = "?"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert self.writer is not None
        peer = self.get_extra_info("peername") or ("?",)
        self.address = str(peer[0])
        """The peer's address, kept: once the connection is lost it cannot be asked."""
        refusal = self.host.admit(self)
        if refusal is not None:
            self.refused = True
            self._say(refusal)
            self.writer.close()
            return
        self.admitted = True
        if isinstance(self.writer, MudWriter):
            self.writer.agreed = lambda option: self.host.agreed(self, option)

    def begin_negotiation(self) -> None:
        """telnetlib3 starts negotiating just after ``connection_made``: not with a
        connection turned away (its timer would find the connection gone and print a
        traceback)."""
        if self.refused:
            return
        super().begin_negotiation()

    def begin_advanced_negotiation(self) -> None:
        super().begin_advanced_negotiation()
        assert self.writer is not None
        self.writer.iac(WILL, GMCP)
        self.writer.iac(WILL, MSSP)

    def on_timeout(self) -> None:
        self._say(CR_LF + self.host.idle_notice())
        self.timeout_connection()

    def _say(self, text: str) -> None:
        if isinstance(self.writer, TelnetWriterUnicode):
            self.writer.write(nvt_line_ends(text) + CR_LF)

    def close(self, message: str | None = None) -> None:
        """Say ``message`` (if any), then close (a connection still negotiating, made
        room for in the waiting room)."""
        if message:
            self._say(message)
        if self.writer is not None:
            self.writer.close()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.admitted:
            self.admitted = False
            self.host.left(self)


def protocol_for(host: Host) -> type[MudProtocol]:
    """A ``MudProtocol`` class bound to ``host`` (telnetlib3 builds one per connection)."""

    class Bound(MudProtocol):
        pass

    Bound.host = host
    return Bound


class _ProtocolNoise(logging.Filter):
    """Drops the lines of a traceback telnetlib3 logs for a client's malformed bytes,
    logging its last line (the error) once at debug."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.funcName != "_log_exception":
            return True
        line = record.getMessage()
        if line and not line[0].isspace() and not line.startswith("Traceback"):
            logging.getLogger("mudsim.telnet").debug("malformed telnet data from a client: %s",
                                                     line)  # fmt: skip
        return False


_NOISE = _ProtocolNoise()


def quiet_protocol_errors() -> None:
    """Install the filter on telnetlib3's loggers (once, whatever the number of calls)."""
    for name in ("telnetlib3.server_base", "telnetlib3.client_base"):
        logger = logging.getLogger(name)
        if _NOISE not in logger.filters:
            logger.addFilter(_NOISE)
