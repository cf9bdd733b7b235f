"""The world's chronicle: @narrative, @narrative-here (anyone), @narrative-clear (admins)."""

from __future__ import annotations

import re
from typing import Final

from engine.commands.context import CommandContext
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.model import Role

COMMANDS: list[Command] = []

DEFAULT_LINES: Final = 10
MAX_LINES: Final = 200
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")


def line_count(words: str, verb: str) -> int | Result:
    """How many lines ``@narrative [n]`` asks for: ``DEFAULT_LINES`` when left out,
    else a whole number from 1 to ``MAX_LINES``; anything else is one failure saying so."""
    hint = f"Try: {verb} 20 (from 1 to {MAX_LINES} lines; {DEFAULT_LINES} when left out)."
    text = words.strip()
    if not text:
        return DEFAULT_LINES
    if not _WHOLE_NUMBER.fullmatch(text):
        shown = text if len(text) <= 40 else text[:40] + "..."
        return failed(f"'{shown}' is not a number of lines.", hint)
    digits = text.lstrip("+-").lstrip("0")
    if text.startswith("-") and digits:
        return failed("A number of lines cannot be negative.", hint)
    if len(digits) > len(str(MAX_LINES)) or int(digits or "0") > MAX_LINES:
        return failed(f"At most {MAX_LINES} lines at a time.", hint)
    if not digits:
        return failed("Ask for at least 1 line.", hint)
    return int(digits)


def _shown(lines: list[str], what: str, count: int) -> Result:
    if not lines:
        return done(f"{what} has nothing yet today (or it was cleared).")
    last = "the last line" if len(lines) == 1 else f"the last {len(lines)} lines"
    more = "" if len(lines) == count else f" (all there is today; you asked for {count})"
    return done("\n".join([f"{what}, {last}{more}:", *lines]))


@command(
    COMMANDS,
    "@narrative",
    category="query",
    syntax="@narrative [n]",
    help=f"Show the last n lines (default {DEFAULT_LINES}, at most {MAX_LINES}) of today's "
    "chronicle of the whole world (vault/chronicle/world.md).",
    example="@narrative 20",
    args=(Arg("n", ArgKind.TEXT, optional=True),),
)
def narrative(ctx: CommandContext, call: Invocation) -> Result:
    count = line_count(call.args, "@narrative")
    if isinstance(count, Result):
        return count
    return _shown(ctx.chronicle(None, count), f"The chronicle of {ctx.world.name}", count)


@command(
    COMMANDS,
    "@narrative-here",
    category="query",
    syntax="@narrative-here [n]",
    help=f"Show the last n lines (default {DEFAULT_LINES}, at most {MAX_LINES}) of today's "
    "chronicle of the room you are in.",
    example="@narrative-here 5",
    args=(Arg("n", ArgKind.TEXT, optional=True),),
)
def narrative_here(ctx: CommandContext, call: Invocation) -> Result:
    count = line_count(call.args, "@narrative-here")
    if isinstance(count, Result):
        return count
    room = ctx.world.rooms[ctx.caller.location]
    return _shown(ctx.chronicle(room.id, count), f"The chronicle of {room.name}", count)


@command(
    COMMANDS,
    "@narrative-clear",
    category="admin",
    role=Role.ADMIN,
    syntax="@narrative-clear",
    help="Clear today's chronicle files (the world's and every room's); earlier days are kept.",
    example="@narrative-clear",
)
def narrative_clear(ctx: CommandContext, call: Invocation) -> Result:
    if call.args.strip():
        return failed(
            "@narrative-clear takes no arguments: it clears all of today's chronicle.",
            "Type '@narrative-clear' alone.",
        )
    cleared = ctx.clear_chronicle()
    if not cleared:
        return done("The chronicle has nothing to clear today.")
    files = [f"{path} ({lines} line{'s' * (lines != 1)})" for path, lines in cleared]
    return done(
        "Cleared the chronicle: " + ", ".join(files) + ". Earlier days (chronicle/days/) are kept."
    )
