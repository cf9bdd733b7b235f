"""An open server's house rules (issue 33): players who leave are asleep where they
were, admins boot and ban, a removed account is thrown out and comes back a plain
player, and commands that spend model calls need a role."""

from __future__ import annotations

import stat

import pytest
from helpers import run
from telnet_client import Client, Opener, eventually, plain, serving

from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import TelnetConfig
from engine.vault.accounts import AccountStore
from engine.vault.bans import BanStore


def flat(text: str) -> str:
    """The text without colours, its lines wrapped at the client's width joined again."""
    return " ".join(plain(text).split())


async def test_a_player_who_leaves_is_asleep_where_they_were_and_wakes_there(
    connect: Opener, sim: Simulation
) -> None:
    """Issue 33, defect 8: "Also here: Eliza and Wren" after Wren quit."""
    pat, pip = await connect(), await connect()
    await pat.login("Pat")
    assert "Pip (asleep)" in flat(await pat.command("look", "Pat> "))  # not connected yet
    await pip.login("Pip")
    await pat.until("(Pip has connected and wakes up.)")
    look = flat(await pat.command("look", "Pat> "))
    assert "Pip" in look
    assert "Pip (asleep)" not in look
    await pip.command("quit", "asleep.")
    await pat.until("(Pip has disconnected and falls asleep.)")
    assert "Also here: Ada and Pip (asleep)." in flat(await pat.command("look", "Pat> "))
    again = await connect()
    text = flat(await again.login("Pip"))
    assert "The Hall" in text  # back where they were
    assert "Pip (asleep)" not in flat(await pat.command("look", "Pat> "))


async def test_an_admin_boots_a_player_who_may_come_back(
    connect: Opener, sim: Simulation, server: MudServer
) -> None:
    pat, pip = await connect(), await connect()
    await pat.login("Pat")
    await pip.login("Pip")
    text = flat(await pat.command("@boot Pip spamming the hall", "Pat> "))
    assert "Pip's connection is closed (spamming the hall)." in text
    assert "An admin has closed your connection (spamming the hall)." in flat(await pip.closed())
    text = flat(await pat.command("@boot Pip", "Pat> "))
    assert "Nobody called Pip is connected." in text
    assert "You cannot boot yourself." in flat(await pat.command("@boot Pat", "Pat> "))
    back = await connect()
    await back.login("Pip")
    assert "'@boot' needs the admin role" in flat(await back.command("@boot Pat", "Pip> "))
    assert "Pip" in server.connected_names()


def test_boot_and_ban_outside_a_served_world_say_so(sim: Simulation) -> None:
    result = run(sim, "Pat", "@boot Pip")
    assert not result.ok
    assert "this world is not being served" in result.text


async def test_a_banned_name_is_thrown_out_kept_out_and_let_back_by_unban(
    connect: Opener, sim: Simulation
) -> None:
    pat, pip = await connect(), await connect()
    await pat.login("Pat")
    await pip.login("Pip")
    text = flat(await pat.command("@ban Pip 2h flooding", "Pat> "))
    assert "Banned: Pip, until " in text
    assert "(flooding). They were connected; their connection is closed." in text
    assert "You are banned from this world (flooding)." in flat(await pip.closed())
    again = await connect()
    await again.until("Name: ")
    again.send("Pip")
    await again.until("Password: ")
    again.send("pip-password")
    assert "Pip is banned from this world until " in flat(await again.closed())
    assert "- Pip, until " in flat(await pat.command("@ban", "Pat> "))
    bans = BanStore(sim.vault.root).path
    assert stat.S_IMODE(bans.stat().st_mode) == 0o600
    assert "The ban of Pip is lifted." in flat(await pat.command("@unban Pip", "Pat> "))
    assert "Pip is not banned." in flat(await pat.command("@unban Pip", "Pat> "))
    back = await connect()
    await back.login("Pip")


async def test_a_banned_address_is_closed_and_refused_another_is_not(sim: Simulation) -> None:
    async with serving(sim) as server:
        pat = await Client.open(server.port, source="127.0.0.2")
        pip = await Client.open(server.port, source="127.0.0.3")
        await pat.login("Pat")
        await pip.login("Pip")
        text = flat(await pat.command("@ban 127.0.0.3", "Pat> "))
        assert "Banned: 127.0.0.3/32, until lifted. 1 connection from it closed." in text
        assert "You are banned from this world." in flat(await pip.closed())
        refused = await Client.open(server.port, source="127.0.0.3")
        assert "Your address is banned from this world." in flat(await refused.closed())
        other = await Client.open(server.port, source="127.0.0.4")
        await other.login("Bea")
        await pat.command("@unban 127.0.0.3", "Pat> ")
        back = await Client.open(server.port, source="127.0.0.3")
        await back.login("Pip")
        for client in (pat, other, back):
            client.close()


async def test_a_ban_that_would_lock_its_admin_out_or_names_nobody_bans_nothing(
    sim: Simulation,
) -> None:
    """Issue 45: "@ban 127.0.0.0/24" from 127.0.0.2 threw the admin out for good, and
    "@ban Malory" (a typo) answered "Banned"."""
    async with serving(sim) as server:
        pat = await Client.open(server.port, source="127.0.0.2")
        pip = await Client.open(server.port, source="127.0.0.3")
        await pat.login("Pat")
        await pip.login("Pip")
        text = flat(await pat.command("@ban 127.0.0.0/24", "Pat> "))
        assert "127.0.0.0/24 holds your own address (127.0.0.2)" in text
        assert "Nothing was banned." in text
        text = flat(await pat.command("@ban Malory 2h spam", "Pat> "))
        assert "No account or character is called Malory: nothing was banned." in text
        assert BanStore(sim.vault.root).active() == []
        assert "Pip" in flat(await pat.command("who", "Pat> "))  # nobody was thrown out
        text = flat(await pat.command("@ban Malory 2h spam --force", "Pat> "))
        assert "Banned: Malory, until " in text
        text = flat(await pat.command("@ban 127.0.0.3", "Pat> "))
        assert "Banned: 127.0.0.3/32" in text
        assert "You are banned from this world." in flat(await pip.closed())
        assert [b.target for b in BanStore(sim.vault.root).active()] == ["Malory", "127.0.0.3/32"]
        pat.close()


async def test_a_removed_account_is_thrown_out_and_comes_back_a_plain_player(
    connect: Opener, sim: Simulation
) -> None:
    """Issue 33, defect 5: Mallory stayed connected and building, and re-adding her
    account gave her back the builder role written into her character."""
    pat, bea = await connect(), await connect()
    await pat.login("Pat")
    await bea.login("Bea")  # a builder by her account
    assert "You dig" in flat(await bea.command("@dig The Shed", "Bea> "))
    text = flat(await pat.command("@account remove Bea", "Pat> "))
    assert "Bea may no longer log in (their connection is closed)." in text
    assert "Your account was removed; this connection is closed." in flat(await bea.closed())
    await pat.command("@account add Bea", "Pat> ")
    assert AccountStore(sim.vault.root).find("Bea") is not None
    again = await connect()
    await again.until("Name: ")
    again.send("Bea")
    await again.until("Password: ")
    again.send("a-new-password")
    await again.until("The same again: ")
    again.send("a-new-password")
    await again.until("Bea> ")
    text = flat(await again.command("@dig The Attic", "Bea> "))
    assert "'@dig' needs the builder role; you are a player." in text
    assert sim.character("Bea").role.value == "player"


async def test_commands_that_spend_model_calls_need_the_role_or_fit_a_budget(
    sim: Simulation,
) -> None:
    """Issue 33, defect 4: twelve @consolidate over telnet made twelve model calls."""
    async with serving(sim, config=TelnetConfig(model_calls_per_hour=1)) as server:
        pip = await Client.open(server.port)
        await pip.login("Pip")
        first = flat(await pip.command("@consolidate", "Pip> "))
        assert "starts work for the world's model" not in first  # the hour's one
        for line in ("@consolidate", "dream", "@compact-memories"):
            text = flat(await pip.command(line, "Pip> "))
            assert (f"{line} starts work for the world's model, which needs the builder role "
                    "here; a player may run 1 of them an hour. It was not run.") in text  # fmt: skip
        bea = await Client.open(server.port, source="127.0.0.2")
        await bea.login("Bea")
        for _ in range(3):  # a builder runs them freely
            text = flat(await bea.command("@consolidate", "Bea> "))
            assert "starts work for the world's model" not in text
        commands = [m.command for m in sim.minds["pip"].tail if m.command]
        assert commands.count("@consolidate") == 1  # the refused ones never ran
        for client in (pip, bea):
            client.close()


async def test_by_default_a_player_runs_none_of_them(connect: Opener) -> None:
    pip = await connect()
    await pip.login("Pip")
    text = flat(await pip.command("dream", "Pip> "))
    assert "dream starts work for the world's model, which needs the builder role here. It " \
           "was not run." in text  # fmt: skip
    await eventually(lambda: "Pip> " in pip.seen)


async def test_a_broken_bans_file_keeps_nobody_out_and_says_so(
    connect: Opener, sim: Simulation, caplog: pytest.LogCaptureFixture
) -> None:
    path = BanStore(sim.vault.root).path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nbans: [\n---\n")
    pip = await connect()
    await pip.login("Pip")
    assert any("the bans could not be read" in r.getMessage() for r in caplog.records)
    pat = await connect()
    await pat.login("Pat")
    text = flat(await pat.command("@ban Pip", "Pat> "))
    assert "bans.md has invalid front matter" in text
    assert not pip.writer.connection_closed
