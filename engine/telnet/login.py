"""The login dialogue: a name, then ``Password:`` (never echoed), then the room.

    Name: Traveler
    Password: ********          (the client is told WILL ECHO while it is typed)

- An account with a password: the password is checked (scrypt, off the event loop).
  A name with no account, a player character with no account, or a wrong password all
  get the same answer, after the same work ("Wrong name or password."), so a login
  does not tell which names exist; the log says which it was.
- An account whose password is pending (made by ``@account add``, or reset by
  ``@account password``): the login chooses one, typed twice.
- With ``--open``, a name that is nobody's may become a new player character: asked to
  confirm, then to choose a password.

Password checks take turns (``engine.telnet.password_checks``): addresses in turn, one
check at a time per address and per name typed, and past five failures each waits its
slot, 2 s after the last check, doubling (``engine.telnet.admission``), however many
connections ask. The answer comes as soon as the check has run, right or wrong, so
giving up early tells nothing; a check whose client has gone is never run. Three
failures on one connection close it. Every login and every check that fails is logged
(``mudsim.telnet``) with its address, never with what was typed: a name that is not
an account may be someone's password typed at the wrong prompt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from engine.errors import MudsimError
from engine.telnet.client import Client
from engine.telnet.limits import TooLong
from engine.telnet.password_checks import Dropped, PasswordChecks
from engine.vault.accounts import (
    Account,
    AccountStore,
    dummy_hash,
    hash_password,
    name_problem,
    new_name_problem,
    password_problem,
    verify_password,
)
from engine.world.model import Character

TRIES: Final = 3
"""Failed logins one connection may make before it is closed."""
WRONG: Final = "Wrong name or password."
YES: Final = frozenset({"y", "yes"})

log = logging.getLogger("mudsim.telnet")


class Hashing:
    """scrypt off the event loop (it takes tens of milliseconds), two at a time at most
    (each takes 16 MB)."""

    def __init__(self, at_once: int = 2) -> None:
        self._slots = asyncio.Semaphore(at_once)

    async def verify(self, password: str, stored: str) -> bool:
        async with self._slots:
            return await asyncio.to_thread(verify_password, password, stored)

    async def hash(self, password: str) -> str:
        async with self._slots:
            return await asyncio.to_thread(hash_password, password)


@dataclass
class Desk:
    """What the dialogue needs from the server."""

    world_name: str
    accounts: AccountStore
    checks: PasswordChecks
    character_named: Callable[[str], Character | None]
    """The character whose name is exactly this one (letter case aside), or None."""
    name_free: Callable[[str], str | None]
    """Why a new character may not take this name (its folder is taken), or None."""
    name_banned: Callable[[str], str | None]
    """What a login as this name is told when it is banned (``@ban``), or None."""
    open: bool = False
    hashing: Hashing = field(default_factory=Hashing)


@dataclass(frozen=True)
class LoggedIn:
    account: Account
    character: Character | None
    """None: the account's character does not exist yet (it is made at the start room)."""


async def log_in(conn: Client, desk: Desk) -> LoggedIn | None:
    """Run the dialogue; who logged in, or None (they left, or failed too often)."""
    welcome = f"Welcome to {desk.world_name}, a mudsim world. Log in with your character's name."
    if desk.open:
        welcome += " A new name makes a new character."
    conn.say(welcome + " (quit leaves.)")
    failures = 0
    while failures < TRIES:
        name = await _ask(conn, "Name: ")
        if name is None or name.lower() in ("quit", "exit"):
            return None
        problem = name_problem(name)
        if problem is not None:
            conn.notice(problem)
            continue
        try:
            outcome = await _attempt(conn, desk, name)
        except MudsimError as exc:  # the accounts file is unreadable: nobody gets in
            log.error("a login from %s failed: %s", conn.address, exc)
            conn.notice(f"Logging in is not possible now: {exc}")
            return None
        if isinstance(outcome, LoggedIn):
            banned = desk.name_banned(outcome.account.name)
            if banned is not None:
                log.warning("%s, banned, was turned away (from %s)", outcome.account.name,
                            conn.address)  # fmt: skip
                conn.notice(banned)
                return None
            return outcome
        if outcome is None:
            return outcome
        failures += 1
    conn.notice("Too many failed logins; goodbye.")
    return None


async def _attempt(conn: Client, desk: Desk, name: str) -> LoggedIn | bool | None:
    """One attempt: who logged in, False for a failure, None when they left."""
    account = desk.accounts.find(name)
    character = desk.character_named(account.name if account else name)
    if account is not None and account.pending and _playable(character):
        return await _choose(conn, desk, account, character, new=False)
    if account is None and character is None and desk.open:
        return await _new_character(conn, desk, name)
    with conn.hidden_input():
        password = await _ask(conn, "Password: ")
    if password is None:
        return None
    stored = account.password if account is not None and not account.pending else dummy_hash()
    try:
        async with desk.checks.turn(conn.address, name, lambda: not conn.gone) as check:
            matches = await desk.hashing.verify(password, stored)
            reason = _refusal(account, character, matches)
            check.failed = reason is not None
            if reason is not None:
                log.warning("failed login from %s: %s", conn.address, reason)
    except Dropped:
        return None
    if reason is not None or account is None:
        conn.notice(WRONG)
        return False
    return LoggedIn(account, character)


def _playable(character: Character | None) -> bool:
    return character is None or character.type == "player"


def _refusal(account: Account | None, character: Character | None, matches: bool) -> str | None:
    """Why a login with a checked password fails (for the log: names only of accounts
    and characters that exist, never the text typed), or None."""
    if account is None:
        if character is None:
            return "the name typed is not an account"
        return f"{character.name} has no account ({character.type})"
    if account.pending:
        return f"{account.name}'s character is an agent"
    if not matches:
        return f"wrong password for {account.name}"
    if not _playable(character):
        return f"{account.name}'s character is an agent"
    return None


async def _new_character(conn: Client, desk: Desk, name: str) -> LoggedIn | bool | None:
    problem = new_name_problem(name) or desk.name_banned(name) or desk.name_free(name)
    if problem is not None:
        conn.notice(problem)
        return False
    answer = await _ask(conn, f"Nobody called {name} lives here yet. Make a new character "
                              f"called {name}? (yes/no) ")  # fmt: skip
    if answer is None:
        return None
    if answer.lower() not in YES:
        conn.say("Then type another name.")
        return False
    return await _choose(conn, desk, Account(name), None, new=True)


async def _choose(conn: Client, desk: Desk, account: Account, character: Character | None,
                  *, new: bool) -> LoggedIn | bool | None:  # fmt: skip
    """Choose ``account``'s password (typed twice); store it (a new account is added)."""
    conn.say(f"Choose a password for {account.name}: at least 8 characters.")
    for _ in range(TRIES):
        with conn.hidden_input():
            first = await _ask(conn, "Password: ")
        if first is None:
            return None
        problem = password_problem(first)
        if problem is not None:
            conn.notice(problem)
            continue
        with conn.hidden_input():
            again = await _ask(conn, "The same again: ")
        if again is None:
            return None
        if again != first:
            conn.notice("The two did not match; once more.")
            continue
        hashed = await desk.hashing.hash(first)
        try:
            if new:
                account = desk.accounts.add(Account(account.name, None, hashed))
            else:
                account = desk.accounts.set_password(account.name, hashed, only_if_pending=True)
        except MudsimError as exc:
            log.warning("a login from %s could not keep %s's password: %s", conn.address,
                        account.name, exc)  # fmt: skip
            conn.notice(f"That did not work: {exc}.")
            return False
        log.info("%s %r chose its password from %s", "new account" if new else "account",
                 account.name, conn.address)  # fmt: skip
        return LoggedIn(account, character)
    conn.notice("No password was chosen.")
    return False


async def _ask(conn: Client, prompt: str) -> str | None:
    """One answer (stripped); None when the client left. A line that is too long or
    not text is an empty answer."""
    conn.prompt(prompt)
    line = await conn.read_line()
    if line is None:
        return None
    if isinstance(line, TooLong) or not isinstance(line, str):
        conn.notice("That was not a name or a password.")
        return ""
    return line.strip()
