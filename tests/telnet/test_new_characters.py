"""``--open``: a name that is nobody's may become a new player character, made at the
start room and kept in the vault like anything built in the world."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from helpers import mudsim
from telnet_client import Opener, password_hash, plain

from engine.sim.simulation import Simulation
from engine.telnet.settings import ServeOptions
from engine.vault.accounts import Account, AccountStore
from engine.world.model import Role


@pytest.fixture
def serve_options() -> ServeOptions:
    return ServeOptions(port=0, open=True)


async def test_with_open_a_new_name_makes_a_new_player_character(
    connect: Opener, sim: Simulation
) -> None:
    client = await connect()
    await client.until("Name: ")
    client.send("me")  # a reserved word
    await client.until("reads as something else")
    client.send("NUL")  # a device on Windows: agents/NUL/ would break the vault there
    await client.until("'NUL' is a device name on Windows and cannot name a folder")
    client.send("Wren")
    await client.until("Make a new character called Wren? (yes/no) ")
    client.send("yes")
    await client.until("Password: ")
    client.send("wren-password")
    await client.until("The same again: ")
    client.send("wren-password")
    text = plain(await client.until("Wren> "))
    assert "The Hall" in text  # the start room
    wren = sim.character("Wren")
    assert (wren.type, wren.role.value, wren.location) == ("player", "player", "hall")
    assert "\n- Wren\n" in (sim.vault.root / "world" / "world.yaml").read_text("utf-8")
    assert (sim.vault.root / "agents" / "Wren" / "agent.md").is_file()
    await client.command("say Hello, I am new here.", "Wren> ")
    assert sim.minds[wren.id].tail[-1].text == 'You say, "Hello, I am new here."'
    again = await connect()
    await again.login("Wren", "wren-password")


async def test_with_open_an_agents_name_is_not_a_new_character(connect: Opener) -> None:
    client = await connect()
    await client.until("Name: ")
    client.send("Ada")
    await client.until("Password: ")  # asked, as for any name that is somebody's
    client.send("anything-at-all")
    await client.until("Wrong name or password.")


@pytest.mark.replay
async def test_a_run_that_made_a_character_at_login_replays_exactly(
    connect: Opener, sim: Simulation, world_file: Path, tmp_path: Path
) -> None:
    sim.begin_record("serve", world_file, {"models": {}, "local": False, "seed": None})
    client = await connect()
    await client.until("Name: ")
    for line in ("Wren", "yes", "wren-password", "wren-password"):
        client.send(line)
    await client.until("Wren> ")
    await client.command("say I am new here.", "Wren> ")
    await client.command("go north", "Wren> ")
    await sim.checkpoint()
    sim.end_record("stopped")
    (run,) = (sim.vault.root / "runs").iterdir()
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    (join,) = [e for e in events if e["kind"] == "join"]
    assert join["character"]["name"] == "Wren"
    assert "wren-password" not in (run / "events.jsonl").read_text()
    assert not list(run.rglob("accounts.md"))  # password hashes stay out of the record
    end = json.loads((run / "end.json").read_text())
    assert "config/accounts.md" not in end
    end["config/accounts.md"] = "0" * 64  # as a record made before they were left out
    (run / "end.json").write_text(json.dumps(end))
    done = await asyncio.to_thread(mudsim, "replay", run, "--vault", tmp_path / "again")
    assert done.returncode == 0, done.stderr
    assert "byte-identical" in done.stdout
    replayed = (tmp_path / "again" / "world" / "world.yaml").read_text("utf-8")
    assert "\n- Wren\n" in replayed
    # a join this mudsim cannot make (a field from elsewhere) is one line, exit 2
    lines = (run / "events.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["kind"] == "join")
    odd = json.loads(lines[at])
    odd["character"]["wings"] = 2
    lines[at] = json.dumps(odd)
    (run / "events.jsonl").write_text("\n".join(lines) + "\n")
    bad = await asyncio.to_thread(mudsim, "replay", run, "--vault", tmp_path / "third")
    assert bad.returncode == 2
    assert "(join) does not name a character this mudsim can make" in bad.stderr
    assert "Traceback" not in bad.stderr


@pytest.mark.replay
async def test_a_run_in_which_an_account_changed_a_characters_role_replays_exactly(
    connect: Opener, sim: Simulation, world_file: Path, tmp_path: Path
) -> None:
    store = AccountStore(sim.vault.root)
    store.remove("Pip")
    store.add(Account("Pip", Role.BUILDER, password_hash("Pip")))
    sim.begin_record("serve", world_file, {"models": {}, "local": False, "seed": None})
    client = await connect()
    await client.login("Pip")
    await client.command("@dig The Pantry", "Pip> ")  # what the builder's role allows
    await sim.checkpoint()
    sim.end_record("stopped")
    (run,) = (sim.vault.root / "runs").iterdir()
    done = await asyncio.to_thread(mudsim, "replay", run, "--vault", tmp_path / "again")
    assert done.returncode == 0, done.stderr
    assert "role: builder" in (tmp_path / "again" / "agents" / "Pip" / "agent.md").read_text()
    assert "The Pantry" in (tmp_path / "again" / "world" / "world.yaml").read_text()


async def test_with_open_a_name_beyond_ascii_makes_a_character_and_is_one_name(
    connect: Opener, sim: Simulation
) -> None:
    """Zoë may be a name; its folder is agents/Zoe; Zoe, or Ｚｏｅ typed full width, is
    the same name (so nobody else can take it to pass for her), and Zое with Cyrillic
    letters is refused."""
    client = await connect()
    await client.until("Name: ")
    client.send("Zое")  # Cyrillic о and е
    await client.until("mixes letters of different scripts (Cyrillic and Latin)")
    client.send("Zoe\u0308")  # decomposed: taken in NFKC
    await client.until("Make a new character called Zoe\u0308? (yes/no) ")
    for line in ("yes", "zoe-password", "zoe-password"):
        client.send(line)
    await client.until("Zoë> ")
    zoe = sim.character("Zoë")
    assert (zoe.name, zoe.type, zoe.location) == ("Zoë", "player", "hall")
    assert (sim.vault.root / "agents" / "Zoe" / "agent.md").is_file()
    assert [a.name for a in AccountStore(sim.vault.root).load()].count("Zoë") == 1
    for typed in ("Zoe", "Ｚｏｅ", "ZOË"):  # her name, so her password
        again = await connect()
        await again.until("Name: ")
        again.send(typed)
        await again.until("Password: ")
        again.send("zoe-password")
        await again.until("Zoë> ")
        again.close()
