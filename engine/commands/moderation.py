"""Moderation of the served world (admins): who is thrown out, who may not come back.

    @boot Mallory spamming the square      close Mallory's connection, saying why
    @ban Mallory 2h spamming               Mallory may not log in for two hours (and is
                                           thrown out now)
    @ban 203.0.113.0/24                    nobody from that network may connect
    @ban Malory --force                    ban a name no account or character has (yet)
    @ban                                   list the bans
    @unban Mallory                         lift the ban

A ban's target is a name or an address (or a network); its length is ``30m``, ``2h``,
``7d``, ``1w`` or ``forever`` (the default). A name that is no account and no character
(a typo) is refused unless ``--force`` says it is meant; a network that holds the
banning admin's own address is refused (it would throw them out, with no way back in to
``@unban`` it: ``mudsim ban`` edits the bans offline). Every action is logged with who did it
(``logs/telnet.log`` and ``logs/mudsim.log``), and a ban is kept in ``config/bans.md``.
"""

from __future__ import annotations

import logging

from engine import wallclock
from engine.commands.context import CommandContext
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.vault.bans import FOREVER_WORDS, Ban, address_target, parse_duration
from engine.world.model import Role

COMMANDS: list[Command] = []
NOT_SERVED = "Nobody is connected: this world is not being served (mudsim serve)."

log = logging.getLogger("mudsim.telnet")


@command(
    COMMANDS,
    "@boot",
    aliases=("@kick",),
    category="admin",
    role=Role.ADMIN,
    syntax="@boot <name> [reason]",
    help="Close the connection of a player who is logged in, telling them why; their "
    "character stays, asleep. They may log in again (@ban keeps them out).",
    example="@boot Mallory spamming the square",
    args=(Arg("name", ArgKind.TEXT), Arg("reason", ArgKind.TEXT, optional=True)),
)
def boot(ctx: CommandContext, call: Invocation) -> Result:
    door = ctx.doorkeeper()
    if door is None:
        return failed(NOT_SERVED)
    name, reason = _split_name(call.args, door.connected_names())
    if not name:
        return failed("@boot whom?", "Try: @boot <name> [reason]. 'who' lists who is here.")
    if name.casefold() == ctx.caller.name.casefold():
        return failed("You cannot boot yourself.", "Type quit to leave.")
    because = f" ({reason})" if reason else ""
    if not door.disconnect(name, f"An admin has closed your connection{because}."):
        return failed(f"Nobody called {name} is connected.", "'who' lists who is connected.")
    log.warning("%s booted %s%s", ctx.caller.name, name, because)
    return done(f"{name}'s connection is closed{because}.")


@command(
    COMMANDS,
    "@ban",
    category="admin",
    role=Role.ADMIN,
    syntax="@ban [<name|address> [30m|2h|7d|forever] [reason] [--force]]",
    help="Keep a name or an address (or a network, 203.0.113.0/24) out of the served "
    "world, for a while or until @unban; whoever it names is thrown out now. Alone: "
    "list the bans.",
    example="@ban Mallory 2h spamming",
    args=(Arg("target", ArgKind.TEXT, optional=True), Arg("rest", ArgKind.TEXT, optional=True)),
)
def ban(ctx: CommandContext, call: Invocation) -> Result:
    if not call.args.strip():
        bans = ctx.bans().active(wallclock.now())  # the run's clock: a replay lists the same
        if not bans:
            return done("Nobody is banned.")
        return done("\n".join([f"Bans ({len(bans)}):", *(f"- {b.describe()}" for b in bans)]))
    door = ctx.doorkeeper()
    known = [c.name for c in ctx.world.characters.values()] + [
        a.name for a in ctx.accounts().load()
    ]
    force = "--force" in call.args.split()
    target, rest = _split_name(" ".join(w for w in call.args.split() if w != "--force"), known)
    words = rest.split()
    length = None
    if (words and words[0].lower() in FOREVER_WORDS) or (
        words and (length := parse_duration(words[0])) is not None
    ):
        words = words[1:]
    reason = " ".join(words)
    network = address_target(target)
    if network is None and target.casefold() == ctx.caller.name.casefold():
        return failed("You cannot ban yourself.")
    if network is not None and network.num_addresses > 2**24:
        return failed(f"{target} is too wide a network to ban (at most a /8 or a /104).")
    if network is None and not force and target.casefold() not in {k.casefold() for k in known}:
        return failed(f"No account or character is called {target}: nothing was banned.",
                      f"Check the name ('who', 'mudsim account list'), or @ban {target} "
                      "--force to ban it anyway; @ban <address> bans an address.")  # fmt: skip
    mine = door.addresses_of(ctx.caller.name) if door is not None else []
    if network is not None and any(Ban(str(network), None).covers_address(a) for a in mine):
        return failed(f"{network} holds your own address ({mine[0]}): you would be thrown "
                      "out and could not @unban it. Nothing was banned.",
                      "Ban a narrower network, or the other address itself.")  # fmt: skip
    now = wallclock.now()  # recorded: a replay bans until the same moment
    until = now + length if length is not None else None
    made = Ban(target if network is None else str(network), until, reason, ctx.caller.name)
    ctx.bans().add(made, now)
    log.warning("%s banned %s", ctx.caller.name, made.describe())
    thrown = ""
    if door is not None:
        message = "You are banned from this world" + (f" ({reason})." if reason else ".")
        if network is None:
            thrown = " They were connected; their connection is closed." if door.disconnect(
                target, message) else ""  # fmt: skip
        else:
            count = door.disconnect_address(str(network), message)
            thrown = (
                f" {count} connection{'s' if count != 1 else ''} from it closed." if count else ""
            )
    return done(f"Banned: {made.describe()}.{thrown}")


@command(
    COMMANDS,
    "@unban",
    category="admin",
    role=Role.ADMIN,
    syntax="@unban <name|address>",
    help="Lift a ban made with @ban.",
    example="@unban Mallory",
    args=(Arg("target", ArgKind.TEXT),),
)
def unban(ctx: CommandContext, call: Invocation) -> Result:
    target = call.args.strip()
    if not target:
        return failed("@unban whom?", "@ban lists the bans.")
    network = address_target(target)
    lifted = ctx.bans().remove(str(network) if network is not None else target, wallclock.now())
    if lifted is None:
        return failed(f"{target} is not banned.", "@ban lists the bans.")
    log.warning("%s lifted the ban of %s", ctx.caller.name, lifted.describe())
    return done(f"The ban of {lifted.target} is lifted.")


def _split_name(args: str, names: list[str]) -> tuple[str, str]:
    """``Mary Ann 2h spam`` -> (``Mary Ann``, ``2h spam``) when ``Mary Ann`` is one of
    ``names`` (the longest that fits, letter case aside); else the first word and the rest."""
    text = " ".join(args.split())
    for name in sorted(names, key=len, reverse=True):
        if text.casefold() == name.casefold() or text.casefold().startswith(name.casefold() + " "):
            return text[: len(name)], text[len(name) :].strip()
    first, _, rest = text.partition(" ")
    return first, rest.strip()
