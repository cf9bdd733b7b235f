"""Line ends on the wire (RFC 854: CR LF for a new line, CR NUL for a CR alone), seen by a
raw-socket client (``raw_client``), and what a terminal with no output processing shows
of them: Debian's ``telnet`` once BINARY is agreed, whose echo of Enter is a bare LF.
Every reply starts at the left edge, on its own row (no staircase)."""

from __future__ import annotations

import re

from helpers import run
from raw_client import DO, ECHO, WILL, WONT, RawClient

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer

LONG = "say " + "word " * 40
DESCRIPTION = "A long hall.\nIts floor is stone.\r\nA draught\rblows."


def bare_ends(data: bytes) -> list[bytes]:
    """Each LF with no CR before it, and each CR with neither LF nor NUL after it (with
    what surrounds it)."""
    found = re.finditer(rb"(?<!\r)\n|\r(?![\n\0])", data)
    return [data[max(0, m.start() - 20) : m.end() + 20] for m in found]


async def play(client: RawClient, sim: Simulation) -> list[str]:
    """Log in as Pat and play a few lines; the lines typed."""
    typed = ["Pat", "pat-password", "look", "say hello", "xyzzy", LONG]
    await client.until("Name: ")
    client.send("Pat")
    await client.until("Password: ")
    client.send("pat-password")
    for count, line in enumerate(typed[2:], start=1):
        await client.until("Pat> ", count)
        client.send(line)
    await client.until("Pat> ", len(typed) - 1)
    run(sim, "Ada", "say Good morning.")  # while the prompt waits
    await client.until('Ada says, "Good morning."')
    client.send("quit")
    await client.until("Goodbye.")
    return typed


async def test_every_line_ends_as_telnet_wants_and_starts_at_the_left_edge(
    server: MudServer, sim: Simulation
) -> None:
    sim.world.rooms["hall"].description = DESCRIPTION
    client = await RawClient.open(server.port)
    await play(client, sim)
    rows = client.screen.lines
    assert [row for row in rows if row[:1] == " "] == []  # no staircase
    assert bare_ends(bytes(client.data)) == []
    assert b"\r\0" in client.data  # a reply after a typed line starts back at the edge
    # the password was echoed by the client (it refused WILL ECHO), once
    assert rows[rows.index("Name: Pat") + 1] == "Password: pat-password"
    after_look = rows.index("Pat> look")
    assert rows[after_look + 1 : after_look + 6] == [
        "The Hall", "A long hall.", "Its floor is stone.", "A draught", "blows.",
    ]  # fmt: skip
    assert rows[rows.index("Pat> say hello") + 1] == 'You say, "hello"'
    assert rows[rows.index("Pat> xyzzy") + 1] == "There is no command 'xyzzy'."
    wrapped = rows[rows.index(f"Pat> {LONG.strip()}") + 1 :]
    assert wrapped[0].startswith('You say, "word word')
    assert wrapped[1].startswith("word word")
    assert rows[-5:] == ["Pat>", 'Ada says, "Good morning."', "quit",
                         "Goodbye. Your character stays where it is, asleep.", ""]  # fmt: skip
    client.close()


async def test_a_client_that_lets_the_server_echo_gets_its_enter_echoed(
    server: MudServer, sim: Simulation
) -> None:
    client = await RawClient.open(server.port, agree=frozenset({ECHO}))
    await play(client, sim)
    assert bare_ends(bytes(client.data)) == []
    rows = client.screen.lines
    assert rows[rows.index("Name: Pat") + 1 : rows.index("Name: Pat") + 3] == [
        "Password:", "You are Pat, in Fixture. Type 'help' for commands, '@color off' for plain text,",
    ]  # fmt: skip
    assert not client.server_echoes  # WONT ECHO once the password was read
    client.close()


async def test_an_unasked_do_echo_is_refused(server: MudServer, sim: Simulation) -> None:
    """The server echoes nothing in line mode: agreeing to echo would leave the client
    showing nothing of what is typed."""
    client = await RawClient.open(server.port)
    await client.until("Name: ")
    client.send("Pat")
    await client.until("Password: ")
    client.send("pat-password")
    await client.until("Pat> ")
    start = len(client.raw)
    client.send_command(DO, ECHO)
    client.send("look")
    await client.until("Pat> ", 2)
    answers = bytes(client.raw[start:])
    assert bytes([255, WONT, ECHO]) in answers
    assert bytes([255, WILL, ECHO]) not in answers
    client.close()
