"""A client's malformed telnet bytes (issue 45): a NAWS subnegotiation of one or three
bytes prints no traceback (telnetlib3 logged one, a warning a line, on the server's
stderr); it is one debug line, and the connection goes on to log in."""

from __future__ import annotations

import asyncio
import logging

import pytest
from telnet_client import serving

from engine.sim.simulation import Simulation

IAC, SB, SE, NAWS = 255, 250, 240, 31


@pytest.mark.parametrize("payload", [b"\x00", b"\x00\x50\x00"])
async def test_a_short_naws_is_one_debug_line_and_the_login_goes_on(
    sim: Simulation, caplog: pytest.LogCaptureFixture, payload: bytes
) -> None:
    caplog.set_level(logging.DEBUG)
    ours = logging.getLogger("mudsim.telnet")
    heard: list[str] = []
    listener = logging.Handler(logging.DEBUG)
    listener.emit = lambda record: heard.append(record.getMessage())  # type: ignore[method-assign]
    ours.addHandler(listener)
    async with serving(sim) as server:
        level, ours.level = ours.level, logging.DEBUG  # (the server sets its own at start)
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(bytes([IAC, SB, NAWS]) + payload + bytes([IAC, SE]))
        await writer.drain()
        seen = b""
        while b"Name:" not in seen:
            seen += await asyncio.wait_for(reader.read(4096), 10)
        writer.close()
    ours.removeHandler(listener)
    ours.level = level
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage() for r in loud]
    assert any(m.startswith("malformed telnet data from a client: ") for m in heard), heard
