"""The limits hold and nothing wedges: long lines, floods, too many connections, idle
and slow clients, bad telnet and binary garbage, a client leaving mid-command, the
world stopping."""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path

import pytest
from telnet_client import Client, Opener, eventually, plain, serving

from engine.commands.result import Result
from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import TelnetConfig, load_config


def _said(sim: Simulation, who: str) -> list[str]:
    return [m.text for m in sim.minds[who].tail]


async def test_a_line_over_the_limit_is_refused_whole_and_nothing_of_it_runs(
    connect: Opener, sim: Simulation
) -> None:
    client = await connect()
    await client.login("Pat")
    heard_before = len(_said(sim, "ada"))
    memories_before = len(_said(sim, "pat"))
    text = plain(await client.command("say " + "x" * 5000, "Pat> "))
    assert (
        "That line is 5,004 characters long; a line may be at most 4,000. It was not run." in text
    )
    assert len(_said(sim, "ada")) == heard_before  # nobody heard a word of it
    assert len(_said(sim, "pat")) == memories_before
    text = plain(await client.command("say " + "y" * 3990, "Pat> "))  # 3,994: within it
    assert 'You say, "yyy' in text.replace("\r\n", "")


async def test_a_long_line_at_the_name_prompt_is_no_name(connect: Opener) -> None:
    client = await connect()
    await client.until("Name: ")
    client.send("P" * 10_000)
    assert "That was not a name or a password." in await client.until("Name: ")
    client.send("Pat")
    await client.until("Password: ")
    client.send("pat-password")
    await client.until("Pat> ")


async def test_a_speedwalk_faster_than_the_rate_runs_whole_in_order(
    connect: Opener, sim: Simulation
) -> None:
    """Issue 33, defect 8: a client's speedwalk of 8 moves ran 5 (the rest dropped)."""
    client = await connect()
    await client.login("Pip")
    walk = ["north", "south"] * 4  # eight moves at once, past 5 a second
    client.writer.write("".join(f"{move}\r\n" for move in walk))
    await client.until_count("Pip> ", 9)  # one after the login, one after each move
    text = plain(client.seen)
    assert text.count("You go north to The Yard.") == 4
    assert text.count("You go south to The Hall.") == 4
    assert "Slow down" not in text
    assert sim.character("Pip").location == "hall"


async def test_past_the_queue_lines_are_dropped_with_one_notice(sim: Simulation) -> None:
    config = TelnetConfig(commands_per_s=2, queued_lines=3)
    async with serving(sim, config=config) as server:
        client = await Client.open(server.port)
        await client.login("Pip")
        before = len(_said(sim, "ada"))
        client.writer.write("".join(f"say flood {n}\r\n" for n in range(12)))
        await client.until("Slow down: 3 lines already wait their turn")
        await client.command("say after the flood", "Pip> ")
        await eventually(lambda: _said(sim, "ada")[-1] == 'Pip says, "after the flood"')
        said = _said(sim, "ada")[before:-1]
        ran = [int(line.removeprefix('Pip says, "flood ').rstrip('"')) for line in said]
        assert ran == sorted(ran)  # in order, none twice
        assert 3 <= len(ran) < 12  # the queue's worth ran; the rest were dropped
        assert plain(client.seen).count("Slow down") == 1
        client.close()


async def test_one_player_past_max_connections_is_told_and_an_admin_still_comes_in(
    sim: Simulation,
) -> None:
    """Issue 45: ``max_connections`` counts players; one place more is kept for an admin,
    and connections logging in count apart (``waiting_room``)."""
    async with serving(sim, config=TelnetConfig(max_connections=1)) as server:
        pip = await Client.open(server.port)
        await pip.login("Pip")
        bea = await Client.open(server.port)
        await bea.until("Name: ")
        bea.send("Bea")
        await bea.until("Password: ")
        bea.send("bea-password")
        assert "The world is full (1 players); try again later." in plain(await bea.closed())
        pat = await Client.open(server.port)
        await pat.login("Pat")  # the admin's place
        assert sorted(server.sessions) == ["pat", "pip"]
        pip.close()
        pat.close()
        await eventually(lambda: not server.sessions)
        again = await Client.open(server.port)
        await again.login("Bea")
        again.close()


async def test_an_idle_connection_is_closed_and_its_character_stays(sim: Simulation) -> None:
    config = TelnetConfig(idle_minutes=1 / 60)  # one second
    async with serving(sim, config=config) as server:
        client = await Client.open(server.port)
        await client.login("Pip")
        text = plain(await client.closed())
        assert "Nothing came from you for 0.0166667 minutes" in text
        assert "Your character stays where it is." in text
        await eventually(lambda: not server.sessions)
        assert sim.character("Pip").location == "hall"


async def test_logging_in_too_slowly_closes_the_connection(sim: Simulation) -> None:
    async with serving(sim, config=TelnetConfig(login_seconds=0.5)) as server:
        client = await Client.open(server.port)
        assert "Logging in took too long; goodbye." in await client.closed()


def test_login_seconds_default_to_30_and_are_at_most_60(tmp_path: Path) -> None:
    """Issue 45: a connection that has not logged in holds a slot, so the time it may take
    is short; an older vault's ``login_seconds: 120`` is read as 60."""
    assert TelnetConfig().login_seconds == 30
    assert TelnetConfig(login_seconds=120).login_seconds == 60
    path = tmp_path / "config" / "telnet.md"
    path.parent.mkdir()
    path.write_text("---\nlogin_seconds: 120\n---\n# Telnet\n")
    assert load_config(tmp_path).login_seconds == 60


async def test_bad_telnet_and_binary_garbage_never_reach_the_parser(
    connect: Opener, sim: Simulation, server: MudServer
) -> None:
    client = await connect()
    await client.login("Pat")
    before = len(_said(sim, "pat"))
    raw = client.writer.send_iac  # bytes as they are: nothing escaped
    raw(b"\xff\xfa\xc9Core.Hello {not json\xff\xf0")  # GMCP with broken JSON
    raw(b"\xff\xfb\x01")  # WILL ECHO, which a client may not send
    raw(b"\xff\xfa\x1f\x00")  # NAWS cut short ...
    raw(b"\xff\xf0")  # ... and ended
    raw(b"\x00\x01\x02\x1b\x07\r\n")  # control characters only: nothing to run
    raw(b"caf\xc3\x28 au lait\r\n")  # not UTF-8
    raw(b"\x1b[A\x1b[Blook\r\n")  # arrow keys before a command: taken out
    text = plain(await client.until("not text in the encoding this connection uses"))
    assert "It was not run" not in text
    await client.until("Exits:")  # the look ran
    await client.command("say still here", 'You say, "still here"')
    commands = [m.command for m in sim.minds["pat"].tail[before:]]
    assert commands == ["look", "say still here"]
    other = await connect()  # the server serves on
    await other.login("Pip")


async def test_a_raw_socket_spraying_bytes_cannot_stop_the_server(
    connect: Opener, server: MudServer
) -> None:
    _reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    noise = random.Random(7).randbytes(65_536)
    writer.write(noise + b"\xff\xfa" + noise[:1000])  # and a subnegotiation never ended
    await writer.drain()
    player = await connect()
    await player.login("Pip")
    await player.command("look", "Pip> ")
    writer.close()


async def test_a_line_received_whole_runs_even_if_the_client_leaves_right_after(
    connect: Opener, sim: Simulation, server: MudServer
) -> None:
    client = await connect()
    await client.login("Pip")
    client.writer.write("say Goodbye, all.\r\nsay and a half line")
    client.close()
    await eventually(lambda: 'Pip says, "Goodbye, all."' in _said(sim, "ada"))
    await eventually(lambda: not server.sessions)
    assert not any("half line" in text for text in _said(sim, "ada"))
    assert _said(sim, "pip")[-1] == 'You say, "Goodbye, all."'  # committed whole
    again = await connect()
    await again.login("Pip")


async def test_a_client_that_reads_too_slowly_is_closed_not_waited_for(
    sim: Simulation,
) -> None:
    async with serving(sim, config=TelnetConfig(max_output_kb=64)) as server:
        slow, fine = await Client.open(server.port), await Client.open(server.port)
        await slow.login("Pip")
        await fine.login("Pat")
        slow.writer.transport.pause_reading()
        session = server.sessions["pip"]
        for _ in range(20_000):  # 20 MB, far past what the sockets hold
            session.conn.say("x" * 1000)
            if session.conn.closed:
                break
        assert session.conn.closed
        await eventually(lambda: "pip" not in server.sessions)
        await fine.command("look", "Pat> ")
        slow.close()


async def test_stopping_tells_every_client_then_closes(sim: Simulation) -> None:
    async with serving(sim) as server:
        playing, arriving = await Client.open(server.port), await Client.open(server.port)
        await playing.login("Pat")
        await arriving.until("Name: ")
        await server.close()
        for client in (playing, arriving):
            assert "The world is stopping now; it is being saved. Goodbye." in await client.closed()
        assert not server.sessions
        assert not server.supervisor.tasks
        with pytest.raises(OSError, match=r"Connect call failed|refused"):
            await Client.open(server.port)


async def test_an_unreadable_accounts_file_lets_nobody_in_and_says_why(
    connect: Opener, sim: Simulation
) -> None:
    (sim.vault.root / "config" / "accounts.md").write_text("---\naccounts: [\n---\n", "utf-8")
    client = await connect()
    await client.until("Name: ")
    client.send("Pat")
    text = plain(await client.closed())
    assert "Logging in is not possible now:" in text
    assert "accounts.md has invalid front matter" in text


async def test_a_command_that_breaks_is_one_line_and_the_session_goes_on(
    connect: Opener, sim: Simulation
) -> None:
    from engine.commands.registry import Command

    def broken(ctx: object, call: object) -> Result:
        raise RuntimeError("a bug in a command")

    sim.registry.add(Command("break", broken, "query", "break", "Breaks.", "break"))
    client = await connect()
    await client.login("Pip")
    text = plain(await client.command("break", "Pip> "))
    assert "That went wrong on the server: RuntimeError: a bug in a command" in text
    assert "You say" in plain(await client.command("say still fine", "Pip> "))


async def test_turned_away_connections_close_quietly_and_are_logged_once(
    sim: Simulation, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 33, defect 6: each turned-away connection printed an asyncio traceback
    (telnetlib3's negotiation timer found the connection gone)."""
    caplog.set_level(logging.INFO, logger="mudsim.telnet")
    errors: list[dict[str, object]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, context: errors.append(context))
    async with serving(sim, config=TelnetConfig(max_per_address=1)) as server:
        first = await Client.open(server.port)
        await first.until("Name: ")
        for _ in range(3):
            refused = await Client.open(server.port)
            assert "Too many connections from your address" in await refused.closed()
        other = await Client.open(server.port, source="127.0.0.2")
        await other.login("Pip")  # the loop has run on for a whole login meanwhile
        for client in (first, other):
            client.close()
    assert errors == []
    turned_away = [r for r in caplog.records if "turned away" in r.getMessage()]
    assert len(turned_away) == 1
