"""Playing in a browser, as the page's websocket: logging in (the password asked for in
a password field), commands, what others do arriving as it happens in the TUI's
colours, the room, exits and who is here, quitting, and the world stopping."""

from __future__ import annotations

import asyncio

from helpers import run
from web_page import Opener, texts

from engine.sim.simulation import Simulation
from engine.telnet.server import STOPPING, MudServer
from engine.web.server import WebServer


async def test_log_in_and_play_commands(connect: Opener, sim: Simulation) -> None:
    page = await connect()
    hello = await page.until_type("hello")
    assert hello["world"] == "Fixture"
    assert hello["max_line"] == sim.settings.limits.max_command_chars
    shown = await page.login("Pip")
    assert "You are Pip, in Fixture." in texts(shown)
    room = next(m for m in shown if m["type"] == "gmcp" and m["package"] == "Room.Info")
    assert room["data"]["name"] == "The Hall"
    assert set(room["data"]["exits"]) == {"north", "stair", "down"}
    here = next(m for m in shown if m["type"] == "here")
    assert here == {"type": "here", "room": "hall", "names": ["Ada", "Pat", "Pip"]}
    assert "It gives a warm light." in texts(await page.command("examine lamp", "Pip> "))
    failed = await page.command("@dig The Pantry", "Pip> ")  # a player, not a builder
    refusal = next(m for m in failed if m["type"] == "text")
    assert refusal["text"].startswith("'@dig' needs the builder role; you are a player.")
    assert refusal["classes"] == ["s-bold", "s-red"]  # a failure, red as in the TUI
    moved = await page.command("go north", "Pip> ")
    room = next(m for m in moved if m["type"] == "gmcp" and m["package"] == "Room.Info")
    assert room["data"]["id"] == "yard"
    assert next(m for m in moved if m["type"] == "here")["names"] == ["Bo", "Pip", "Bea"]
    assert sim.character("Pip").location == "yard"


async def test_another_characters_speech_arrives_live_in_the_tuis_colour(
    connect: Opener, sim: Simulation
) -> None:
    page = await connect()
    await page.login("Pip")
    run(sim, "Ada", "say Good morning, Pip.")
    said = (await page.until('Ada says, "Good morning, Pip."', "text"))[-1]
    assert said["style"] == "bold cyan"
    assert said["classes"] == ["s-bold", "s-cyan"]
    await page.until_type("here", room="hall")  # who is here, refreshed as things happen
    await page.command("@color off", "Pip> ")
    run(sim, "Ada", ":waves.")
    waved = (await page.until("Ada waves.", "text"))[-1]
    assert waved["classes"] == []


async def test_a_browser_and_another_browser_see_each_other(connect: Opener) -> None:
    pip, pat = await connect(), await connect()
    await pip.login("Pip")
    await pat.login("Pat")
    await pip.until("(Pat has connected", "text")
    await pat.command("say Hello, Pip.", "Pat> ")
    await pip.until('Pat says, "Hello, Pip."', "text")
    await pat.command("go north", "Pat> ")
    while "Pat" in (await pip.until_type("here", room="hall"))["names"]:
        pass  # an earlier event's list (Pat's speech), until the one after Pat left


async def test_a_wrong_password_is_refused_and_asked_again(connect: Opener) -> None:
    page = await connect()
    await page.until("Name: ", "prompt")
    await page.send("Pip")
    await page.until("Password: ", "prompt")
    await page.send("not-the-password")
    assert "Wrong name or password." in texts(await page.until("Name: ", "prompt"))
    await page.send("Pip")
    await page.until("Password: ", "prompt")
    await page.send("pip-password")
    await page.until("Pip> ", "prompt")


async def test_quit_says_goodbye_and_closes(connect: Opener, mud: MudServer) -> None:
    page = await connect()
    await page.login("Pip")
    await page.send("quit")
    shown = await page.closed()
    assert "Goodbye. Your character stays where it is" in texts(shown)
    assert shown[-1] == {"type": "close", "text": ""}
    assert page.socket.close_code == 1000
    async with asyncio.timeout(20):
        while mud.sessions or mud.connections:  # noqa: ASYNC110 - a condition the test names
            await asyncio.sleep(0.01)


async def test_the_world_stopping_tells_every_page(
    connect: Opener, web: WebServer, mud: MudServer
) -> None:
    pip, waiting = await connect(), await connect()
    await pip.login("Pip")
    await waiting.until("Name: ", "prompt")  # not logged in yet
    await web.close()
    for page in (pip, waiting):
        shown = await page.closed()
        assert shown[-2]["text"] == STOPPING
        assert shown[-1] == {"type": "close", "text": STOPPING}
        assert page.socket.close_code == 1000
    assert not web.clients
    assert not mud.sessions
    assert mud.gate.admit("127.0.0.1") is None  # every connection was let go of


async def test_the_telnet_servers_close_ends_the_pages_too(connect: Opener, mud: MudServer) -> None:
    page = await connect()
    await page.login("Pip")
    await mud.close()
    shown = await page.closed()
    assert shown[-1] == {"type": "close", "text": STOPPING}
