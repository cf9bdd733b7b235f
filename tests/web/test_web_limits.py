"""What a page may send, and what it may not: messages that are not lines, a line past
the vault's limit, a frame past the size limit, another site's page (Origin), too
many connections, silence, and a page that reads too slowly. Each gets one clear
answer, never a traceback, and the connection (or the server) goes on where it should."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from web_page import Opener, Page, texts
from websockets.exceptions import InvalidStatus

from engine.sim.simulation import Simulation
from engine.telnet.client import NOT_TEXT
from engine.telnet.limits import TooLong
from engine.telnet.settings import TelnetConfig
from engine.web.client import WebClient
from engine.web.server import WebServer


@pytest.mark.parametrize(
    ("raw", "answer"),
    [
        ("look", "That message was not JSON"),
        (b"\x00\x01binary", "That was a binary message"),
        ("[1, 2, 3]", "That message was not understood"),
        ('{"type": "resize", "cols": 80}', "That message was not understood"),
        ('{"type": "line", "text": 42}', 'That line message had no "text" string'),
        ("[" * 5_000 + "]" * 5_000, "That message was not JSON"),  # nested past recursion
    ],
    ids=["not-json", "binary", "a-list", "another-type", "text-not-a-string", "deep"],
)
async def test_a_message_that_is_not_a_line_gets_one_notice_and_is_ignored(
    connect: Opener, raw: str | bytes, answer: str
) -> None:
    page = await connect()
    await page.login("Pip")
    await page.send_raw(raw)
    notice = (await page.until(answer, "text"))[-1]
    assert notice["classes"] == ["s-bold", "s-yellow"]
    assert "It was ignored" in notice["text"] or "it was ignored" in notice["text"]
    shown = await page.command("look", "Pip> ")  # the connection goes on
    assert "The Hall" in texts(shown)
    assert answer not in texts(shown)  # one notice, not one a line


async def test_a_line_past_the_limit_is_refused_and_not_run(
    connect: Opener, sim: Simulation
) -> None:
    limit = sim.settings.limits.max_command_chars
    page = await connect()
    await page.login("Pip")
    shown = await page.command("say " + "x" * limit, "Pip> ")
    assert (f"That line is {limit + 4:,} characters long; a line may be at most {limit:,}. "
            "It was not run.") in texts(shown)  # fmt: skip
    assert "You say" not in texts(shown)
    assert "x" * 10 not in texts(shown)
    shown = await page.command("say " + "y" * (limit - 4), "Pip> ")  # at the limit: runs
    assert "You say" in texts(shown)


async def test_control_characters_are_cleaned_and_undecodable_text_refused(
    connect: Opener,
) -> None:
    page = await connect()
    await page.login("Pip")
    shown = await page.command("\x1b[31mlo\x07ok", "Pip> ")
    assert "The Hall" in texts(shown)
    shown = await page.command("say \ufffd", "Pip> ")
    assert "not text in the encoding" in texts(shown)


async def test_a_frame_past_the_size_limit_closes_the_connection(
    connect: Opener, web: WebServer
) -> None:
    page = await connect()
    await page.login("Pip")
    await page.send_raw(json.dumps({"type": "line", "text": "z" * web.max_size}))
    await page.closed()
    assert page.socket.close_code == 1009  # message too big
    assert page.socket.close_reason is not None
    assert "exceeds limit" in page.socket.close_reason


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:1", "null"])
async def test_a_page_from_another_site_may_not_open_the_websocket(
    web: WebServer, origin: str
) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await Page.open(web.port, origin=origin)
    response = refused.value.response
    assert response.status_code == 403
    assert b"may only be opened by its own page" in response.body


async def test_the_pages_own_origin_may(connect: Opener, web: WebServer) -> None:
    page = await connect(origin=f"http://127.0.0.1:{web.port}")
    await page.login("Pip")


@pytest.fixture
def config() -> TelnetConfig:
    return TelnetConfig(max_per_address=2, idle_minutes=1 / 60)


async def test_connections_past_the_limit_are_told_and_closed(connect: Opener) -> None:
    first, second = await connect(), await connect()
    await first.until("Name: ", "prompt")
    await second.until("Name: ", "prompt")
    third = await connect()
    shown = await third.closed()
    assert shown[-1]["type"] == "close"
    assert "connections" in shown[-1]["text"]
    assert third.socket.close_code == 1008
    await first.close()
    await first.closed()
    fourth = await connect()  # the first's place is free again
    await fourth.until("Name: ", "prompt")


async def test_silence_closes_the_connection(connect: Opener) -> None:
    page = await connect()
    shown = await page.closed()  # idle_minutes: one second
    assert "Nothing came from you for" in texts(shown)


class Stuck:
    """A websocket whose page never reads: each send waits forever."""

    def __init__(self) -> None:
        self.remote_address = ("192.0.2.7", 50000)
        self.aborted = False
        self.sent: list[str] = []
        self.sending = asyncio.Event()
        self.incoming: asyncio.Queue[str | bytes] = asyncio.Queue()
        outer = self

        class Transport:
            def abort(self) -> None:
                outer.aborted = True

        self.transport: Any = Transport()

    async def recv(self) -> str | bytes:
        return await self.incoming.get()

    async def send(self, message: str) -> None:
        self.sent.append(message)
        self.sending.set()
        await asyncio.Event().wait()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        raise AssertionError("a page that does not read is dropped, not closed")


async def test_a_page_that_reads_too_slowly_is_dropped() -> None:
    socket = Stuck()
    client = WebClient(socket, max_line=100, max_output=1000)
    sending = asyncio.create_task(client.send_all())
    reading = asyncio.create_task(client.read_line())
    client.say("x" * 400)  # the first is in flight, stuck
    await socket.sending.wait()
    client.say("y" * 400)
    client.say("z" * 400)  # 800 bytes and more wait: fine
    assert not client.closed
    client.say("w" * 400)  # past 1000
    assert client.closed
    assert client.dropped
    assert socket.aborted
    assert await reading is None
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending


async def test_lines_are_cut_cleaned_and_held_back_when_many_wait() -> None:
    socket = Stuck()
    client = WebClient(socket, max_line=10, max_output=10_000)
    receiving = asyncio.create_task(client.receive())
    for text in ["look", "x" * 11, "a\ufffd", "one\ntwo"]:
        socket.incoming.put_nowait(json.dumps({"type": "line", "text": text}))
    assert await client.read_line() == "look"
    assert await client.read_line() == TooLong(11)
    assert await client.read_line() is NOT_TEXT
    assert await client.read_line() == "one"
    assert await client.read_line() == "two"
    for number in range(30):  # more than QUEUED_LINES wait: the rest stay unread
        socket.incoming.put_nowait(json.dumps({"type": "line", "text": str(number)}))
    got = [await client.read_line() for _ in range(30)]
    assert got == [str(n) for n in range(30)]
    client.close()
    assert await client.read_line() is None
    receiving.cancel()  # (a real websocket's recv ends when send_all closes it)
    with pytest.raises(asyncio.CancelledError):
        await receiving
