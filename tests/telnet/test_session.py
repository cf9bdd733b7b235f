"""Playing over telnet: commands and their results, what happens in the room as it
happens, colour, wrapping at the client's width, GMCP for mappers, quit."""

from __future__ import annotations

import re

import pytest
from telnet_client import Opener, eventually, plain

from engine.agents.thinker import Turn
from engine.llm.fake import ScriptedBackend
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer


async def test_commands_run_with_the_parser_and_permissions_of_do(
    connect: Opener, sim: Simulation
) -> None:
    client = await connect()
    await client.login("Pip")
    text = plain(await client.command("examine lamp", "Pip> "))
    assert "It gives a warm light." in text
    text = await client.command("@dig The Pantry", "Pip> ")  # Pip is a player, not a builder
    assert "\x1b[1;31m'@dig' needs the builder role; you are a player.\x1b[0m" in text
    text = plain(await client.command("lok", "Pip> "))  # corrected as do corrects it
    assert "(Taking 'lok' as 'look'.)" in text
    assert sim.minds["pip"].tail[-1].command == "lok"  # remembered like any command


async def test_an_agents_speech_reaches_the_two_players_in_its_room_not_the_third(
    connect: Opener, sim: Simulation
) -> None:
    pat, pip, bea = await connect(), await connect(), await connect()
    await pat.login("Pat")
    await pip.login("Pip")
    await bea.login("Bea")  # in the yard
    thinkers = make_thinkers(sim, {"ada": "fake"})
    scheduler = Scheduler(sim, ScriptedBackend(["say Good morning, both of you."]), thinkers)
    turn = await scheduler.take_turn("ada")
    assert isinstance(turn, Turn)
    assert turn.command == "say Good morning, both of you."
    for client in (pat, pip):
        text = await client.until('Ada says, "Good morning, both of you."')
        assert "\x1b[1;36mAda says" in text  # speech in the TUI's colour
        assert "Ada pauses, deep in thought..." in text
    await bea.command("look", "Bea> ")
    assert "Ada" not in bea.seen


async def test_players_see_each_other_act_and_agents_hear_them(
    connect: Opener, sim: Simulation
) -> None:
    pat, pip = await connect(), await connect()
    await pat.login("Pat")
    await pip.login("Pip")
    assert "(Pip has connected and wakes up.)" in await pat.until(
        "(Pip has connected and wakes up.)"
    )
    await pip.command("say Hello, Ada.", "Pip> ")
    await pat.until('Pip says, "Hello, Ada."')
    assert sim.minds["ada"].tail[-1].text == 'Pip says, "Hello, Ada."'
    backend = ScriptedBackend(["say Hello, Pip."])
    scheduler = Scheduler(sim, backend, make_thinkers(sim, {"ada": "fake"}))
    await scheduler.take_turn("ada")
    assert 'Pip says, "Hello, Ada."' in backend.prompts[-1]  # she heard it, and answers
    await pip.until('Ada says, "Hello, Pip."')
    await pip.command("go north", "Pip> ")
    await pat.until("Pip leaves north")


async def test_who_lists_who_is_connected_besides_every_character(connect: Opener) -> None:
    pat, bea = await connect(), await connect()
    await pat.login("Pat")
    await bea.login("Bea")
    text = plain(await pat.command("who", "Pat> "))
    assert "- Ada [agent] in The Hall" in text
    assert "- Pip [player] in The Hall" in text
    assert "Connected now: Bea (The Yard), Pat (The Hall)." in text


async def test_lines_wrap_at_the_width_the_client_reports(connect: Opener) -> None:
    client = await connect(cols=32)
    await client.login("Pat")
    text = plain(await client.command("help", "Pat> "))
    lines = text.split("\r\n")[:-1]
    assert len(lines) > 5
    assert max(len(line) for line in lines) <= 32
    assert "help <category> lists its" in text.replace("\r\n", " ")
    wide = await connect(cols=200)
    await wide.login("Pip")
    text = plain(await wide.command("help", "Pip> "))
    assert max(len(line) for line in text.split("\r\n")) > 60


async def test_colour_goes_off_on_request_and_for_a_client_without_any(
    connect: Opener, sim: Simulation
) -> None:
    client = await connect()
    await client.login("Pat")
    text = await client.command("fly", "Pat> ")
    assert "\x1b[" in text  # a failure, in red
    await client.command("@color off", "Pat> ")
    text = await client.command("fly", "Pat> ")
    assert "There is no command 'fly'." in text
    assert "\x1b[" not in text
    assert sim.minds["pat"].tail[-1].command == "fly"  # @color itself is no command
    dumb = await connect(term="dumb")
    await dumb.login("Pip")
    assert "\x1b[" not in await dumb.command("fly", "Pip> ")


async def test_gmcp_room_info_on_login_and_after_every_move(
    connect: Opener, server: MudServer
) -> None:
    client = await connect()
    await client.login("Pat")
    await eventually(lambda: "Room.Info" in client.gmcp)
    assert client.gmcp["Room.Info"] == {
        "num": 1, "id": "hall", "name": "The Hall", "area": "Fixture",
        "exits": {"north": 2, "stair": 3, "down": 4},
    }  # fmt: skip
    assert client.gmcp["Char.Status"] == {"name": "Pat", "room": "The Hall", "role": "admin"}
    await client.command("go north", "Pat> ")
    await eventually(lambda: client.gmcp["Room.Info"]["num"] == 2)
    assert client.gmcp["Room.Info"]["exits"] == {"south": 1}
    assert client.gmcp["Char.Status"]["room"] == "The Yard"
    await client.command("@dig The Shed", "Pat> ")  # the room's exits change
    await eventually(lambda: "shed" in client.gmcp["Room.Info"]["exits"])
    assert client.gmcp["Room.Info"]["exits"]["shed"] == 5


async def test_quit_leaves_and_the_character_stays_where_it_is(
    connect: Opener, sim: Simulation, server: MudServer
) -> None:
    client = await connect()
    await client.login("Pip")
    await client.command("go north", "Pip> ")
    client.send("quit")
    assert "Goodbye. Your character stays where it is, asleep." in await client.closed()
    await eventually(lambda: not server.sessions)
    saved = (sim.vault.root / "world" / "world.yaml").read_text(encoding="utf-8")
    assert "#   Pip is in The Yard" in saved  # saved as the player left


@pytest.mark.parametrize("text", ["\x1b[2J\x1b[31mgotcha", "bell\x07 and nul\x00"])
async def test_control_characters_from_the_world_never_reach_a_client(
    connect: Opener, sim: Simulation, text: str
) -> None:
    client = await connect()
    await client.login("Pat")
    sim.execute(sim.character("Ada"), f"say {text}")
    said = await client.until("Ada says")
    said += await client.until("\r\n")
    assert not re.search(r"[\x00-\x08\x0b-\x0c\x0e-\x1a]", said)
    assert "\x1b[2J" not in said
