"""``@password``: a logged-in player changes their own password, over telnet or the page.

    Pat> @password
    Your password now:              (none of the three is shown: WILL ECHO, or the
    New password:                    page's password field)
    The same again:
    Your password is changed: the next login asks for the new one.

It is the session's own command (``engine.telnet.session``, as ``@color`` and ``quit``
are), never the world's: a command's line is kept in the character's journal and the
run's record, and runs synchronously, with no way to ask for more input. So the line
``@password`` never reaches the parser, and the session reads the three answers itself,
from its own queue of lines, each in ``hidden_input``. No password passes through a
command, a journal, the record or a log.

The password now is checked as a login's is: when its turn comes, counted by the
throttle for the account's name and the address (``engine.telnet.password_checks``),
and a wrong one is logged without what was typed. The new one follows the login's rule
(``password_problem``: at least 8 characters) and is typed twice. An account whose
password an admin cleared (``@account password``) has none to ask for: it chooses one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from engine.errors import MudsimError
from engine.telnet.client import Client
from engine.telnet.login import Desk
from engine.telnet.password_checks import Dropped
from engine.vault.accounts import Account, password_problem

Ask = Callable[[str], Awaitable[str | None]]
"""Prompt with the text, then the next line typed (stripped; "" for one that is not
text), or None once the client has gone."""
UNCHANGED = "nothing was changed."

log = logging.getLogger("mudsim.telnet")


async def change_own_password(conn: Client, desk: Desk, name: str, ask: Ask) -> None:
    """The dialogue for the account called ``name`` (the session's character)."""
    try:
        account = desk.accounts.find(name)
    except MudsimError as exc:
        conn.notice(f"The accounts cannot be read now ({exc}); {UNCHANGED}")
        return
    if account is None:
        conn.notice(f"{name} has no account now; {UNCHANGED}")
        return
    if account.pending:
        conn.say("You have no password now (an admin cleared it): choose one.")
    elif not await _old_password_right(conn, desk, account, ask):
        return
    new = await _hidden(conn, ask, "New password: ")
    if new is None:
        return
    problem = password_problem(new)
    if problem is not None:
        conn.notice(f"{problem} Your password is as it was: {UNCHANGED}")
        return
    again = await _hidden(conn, ask, "The same again: ")
    if again is None:
        return
    if again != new:
        conn.notice(f"The two did not match; {UNCHANGED}")
        return
    hashed = await desk.hashing.hash(new)
    try:
        desk.accounts.set_password(account.name, hashed)
    except MudsimError as exc:
        log.warning("%s's password could not be changed (from %s): %s", account.name,
                    conn.address, exc)  # fmt: skip
        conn.notice(f"That did not work ({exc}); {UNCHANGED}")
        return
    log.info("%s changed its password (@password, from %s)", account.name, conn.address)
    conn.say("Your password is changed: the next login asks for the new one.")


async def _old_password_right(conn: Client, desk: Desk, account: Account, ask: Ask) -> bool:
    """Ask for the password now and check it in turn (a failure counted and logged)."""
    old = await _hidden(conn, ask, "Your password now: ")
    if old is None:
        return False
    try:
        async with desk.checks.turn(conn.address, account.name, lambda: not conn.gone) as check:
            right = await desk.hashing.verify(old, account.password)
            check.failed = not right
    except Dropped:
        return False
    if not right:
        log.warning("failed @password from %s: wrong password for %s", conn.address,
                    account.name)  # fmt: skip
        conn.notice(f"That is not your password; {UNCHANGED}")
    return right


async def _hidden(conn: Client, ask: Ask, prompt: str) -> str | None:
    with conn.hidden_input():
        return await ask(prompt)
