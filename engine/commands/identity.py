"""Who you are and how you look: @my-profile, @set-profile, @my-description, @set-description."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.events import EventKind

COMMANDS: list[Command] = []


def _text(args: str) -> str:
    """Accept both ``@set-profile text`` and Miniworld's ``@set-profile -> text``."""
    return args[2:].strip() if args.startswith("->") else args.strip()


@command(
    COMMANDS,
    "@my-profile",
    category="self",
    syntax="@my-profile",
    help="Show your profile: who you are.",
    example="@my-profile",
)
def my_profile(ctx: CommandContext, call: Invocation) -> Result:
    me = ctx.caller
    interval = (
        f"\nYou think every {me.think_interval:g} seconds."
        if me.type == "agent" and me.think_interval
        else ""
    )
    return done(f"Your profile: {me.profile or '(empty)'}{interval}")


@command(
    COMMANDS,
    "@set-profile",
    category="self",
    syntax="@set-profile <text>",
    help="Replace your profile (who you are, how you behave).",
    example="@set-profile A retired sailor who collects knots.",
    args=(Arg("text", ArgKind.TEXT),),
)
def set_profile(ctx: CommandContext, call: Invocation) -> Result:
    text = _text(call.args)
    if not text:
        return failed(
            "Your profile cannot be empty.",
            "Try: @set-profile A patient gardener who speaks little.",
        )
    old, ctx.caller.profile = ctx.caller.profile, text
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} pauses in deep contemplation.")
    return done(f"Your profile was: {old or '(empty)'}\nIt is now: {text}")


@command(
    COMMANDS,
    "@my-description",
    category="self",
    syntax="@my-description",
    help="Show how others see you.",
    example="@my-description",
)
def my_description(ctx: CommandContext, call: Invocation) -> Result:
    return done(f"Others see: {ctx.caller.description or '(nothing special)'}")


@command(
    COMMANDS,
    "@set-description",
    category="self",
    syntax="@set-description <text>",
    help="Change how others see you when they examine you.",
    example="@set-description A tall figure in a grey coat.",
    args=(Arg("text", ArgKind.TEXT),),
)
def set_description(ctx: CommandContext, call: Invocation) -> Result:
    text = _text(call.args)
    if not text:
        return failed(
            "Your description cannot be empty.",
            "Try: @set-description A tall figure in a grey coat.",
        )
    ctx.caller.description = text
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} adjusts their appearance.")
    return done(f"Others now see: {text}")
