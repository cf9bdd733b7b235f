"""Accounts (admins): who may log in over telnet.

    @account                          list every account
    @account add Wren [builder]       Wren may log in (as a player unless a role is
                                      given); the first login chooses the password
    @account password Wren            Wren's next login chooses a new password
    @account remove Wren              Wren may no longer log in (and is thrown out)

A character's role is its account's: each login gives the character the account's role
(``player`` when none is given), so an account removed and added again is a plain
player, whatever role it had before.

A password never passes through a command: it would be remembered in the caller's
journal and kept in the run's record. An account made or reset here has none until the
next login as that name chooses it (typed twice, never echoed); until then anyone who
knows the name can claim it, so say so to whoever it is for at once. From a shell,
``mudsim account add --password`` sets one straight away, and ``mudsim account passwd``
changes one; a player changes their own with ``@password`` (``engine.telnet.own_password``:
the session's own command, which asks for it unseen).
"""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.vault.accounts import Account, name_problem, new_name_problem
from engine.world.folder_names import safe_name
from engine.world.model import Character, Role

COMMANDS: list[Command] = []
ROLES = {role.value: role for role in Role}
USAGE = "Try: @account add <name> [player|builder|admin], @account password <name>, " \
        "@account remove <name>, or @account to list them."  # fmt: skip


@command(
    COMMANDS,
    "@account",
    aliases=("@accounts",),
    category="admin",
    role=Role.ADMIN,
    syntax="@account [add <name> [role] | password <name> | remove <name>]",
    help="List who may log in over telnet, or add, reset or remove an account. An account "
    "made or reset here gets its password from the next login as that name.",
    example="@account add Wren builder",
    args=(Arg("action", ArgKind.TEXT, optional=True), Arg("name", ArgKind.TEXT, optional=True)),
    reads_unrecorded=True,  # accounts are never recorded: a replay shows what the run showed
)
def account(ctx: CommandContext, call: Invocation) -> Result:
    action, _, rest = call.args.strip().partition(" ")
    action, rest = action.lower(), rest.strip()
    if action in ("", "list"):
        return _list(ctx)
    if action not in ("add", "password", "remove"):
        return failed(f"'{action}' is not something @account does.", USAGE)
    if not rest:
        return failed(f"@account {action} whom?", USAGE)
    if action == "add":
        return _add(ctx, rest)
    store = ctx.accounts()
    found = store.find(rest)
    if found is None:
        return failed(f"There is no account called {rest}.", "Type @account to list them.")
    if action == "remove":
        if found.name.casefold() == ctx.caller.name.casefold():
            return failed("You cannot remove your own account.", "Ask another admin.")
        store.remove(found.name)
        door = ctx.doorkeeper()
        closed = door is not None and door.disconnect(
            found.name, "Your account was removed; this connection is closed.")  # fmt: skip
        return done(f"{found.name} may no longer log in" +
                    (" (their connection is closed)." if closed else "."))  # fmt: skip
    store.set_password(found.name, "")
    return done(f"{found.name}'s password is cleared: the next login as {found.name} "
                "chooses a new one. Tell them now; until then anyone who knows the name can.")  # fmt: skip


def _list(ctx: CommandContext) -> Result:
    accounts = ctx.accounts().load()
    if not accounts:
        return done("No accounts yet. " + USAGE)
    lines = [f"Accounts ({len(accounts)}):"]
    for a in accounts:
        role = (a.role or Role.PLAYER).value
        password = "chosen at the next login" if a.pending else "set"
        lines.append(f"- {a.name}: {role}; password {password}")
    return done("\n".join(lines))


def _add(ctx: CommandContext, rest: str) -> Result:
    words = rest.split()
    role = ROLES.get(words[-1].lower()) if len(words) > 1 else None
    name = " ".join(words[:-1] if role is not None else words)
    problem = name_problem(name)
    if problem is not None:
        return failed(problem, USAGE)
    store = ctx.accounts()
    if store.find(name) is not None:
        return failed(f"There is already an account called {name}.",
                      f"@account password {name} lets its next login choose a new password.")  # fmt: skip
    character = _named(ctx, name)
    if character is not None and character.type != "player":
        return failed(f"{character.name} is an agent; accounts are for players.")
    if character is None:
        problem = new_name_problem(name) or _folder_taken(ctx, name)
        if problem is not None:
            return failed(problem)
    made = store.add(Account(character.name if character else name, role, ""))
    where = "" if character else " (a new player character, made at the start room)"
    given = f"the {(role or Role.PLAYER).value} role"
    return done(f"{made.name} may log in{where}, with {given}. The first login as {made.name} "
                "chooses the password: tell them now; until then anyone who knows the name can.")  # fmt: skip


def _named(ctx: CommandContext, name: str) -> Character | None:
    wanted = name.casefold()
    return next((c for c in ctx.world.characters.values() if c.name.casefold() == wanted), None)


def _folder_taken(ctx: CommandContext, name: str) -> str | None:
    folder = safe_name(name, what="character name").lower()
    if any(c.folder.lower() == folder for c in ctx.world.characters.values()):
        return f"The name {name} is too like a character's who is here already."
    return None
