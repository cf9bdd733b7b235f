"""``@password`` from the page: each of its three questions is asked in a password
field (a ``prompt`` message with ``hidden``), and the next prompt is a plain one."""

from __future__ import annotations

from web_page import Opener, texts

from engine.sim.simulation import Simulation
from engine.vault.accounts import AccountStore, verify_password

NEW = "a brand new secret"


async def test_a_player_changes_their_password_in_password_fields(
    connect: Opener, sim: Simulation
) -> None:
    page = await connect()
    await page.login("Pip")
    await page.send("@password")
    for prompt, answer in [("Your password now: ", "pip-password"), ("New password: ", NEW),
                           ("The same again: ", NEW)]:  # fmt: skip
        asked = await page.until(prompt, "prompt")
        assert asked[-1]["hidden"] is True
        await page.send(answer)
    shown = await page.until("Pip> ", "prompt")
    assert "Your password is changed" in texts(shown)
    assert shown[-1]["hidden"] is False
    account = AccountStore(sim.vault.root).find("Pip")
    assert account is not None
    assert verify_password(NEW, account.password)
