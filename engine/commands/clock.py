"""The world clock: ``time`` (anyone) and ``@time`` / ``@time set <when>`` (admins)."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.clock import EXAMPLE, SET_HINT, ClockError, WorldClock
from engine.world.model import Role

COMMANDS: list[Command] = []


def _shown(clock: WorldClock) -> str:
    minutes = clock.minutes_per_round
    per_round = f"{minutes} minute{'s' if minutes != 1 else ''} a round"
    return f"{clock.describe()}\nWorld clock: {clock.reading()} ({per_round})."


@command(
    COMMANDS,
    "time",
    category="query",
    syntax="time",
    help="Say what time and day it is in the world (simulation time, not your wall clock).",
    example="time",
)
def time(ctx: CommandContext, call: Invocation) -> Result:
    return done(_shown(ctx.world.clock))


@command(
    COMMANDS,
    "@time",
    category="admin",
    role=Role.ADMIN,
    syntax="@time [set <YYYY-MM-DDTHH:MM>]",
    help="Show the world clock, or move it (a new round begins there; saved at once).",
    example=f"@time set {EXAMPLE}",
    args=(Arg("when", ArgKind.TEXT, optional=True),),
)
def set_time(ctx: CommandContext, call: Invocation) -> Result:
    words = call.args.split(maxsplit=1)
    clock = ctx.world.clock
    if not words:
        return done(_shown(clock))
    if words[0].lower() != "set":
        return failed(
            "@time shows the clock, or moves it with 'set'.",
            f"Type '@time' to see it, or '@time set {EXAMPLE}' to move it.",
        )
    if len(words) == 1:
        return failed("Set the clock to when?", SET_HINT)
    before = clock.reading()
    try:
        clock.set(words[1])
    except ClockError as exc:
        return failed(f"The clock was not moved: {exc}.", SET_HINT)
    return done(f"The clock is moved from {before} to {clock.reading()}.\n{clock.describe()}")
