"""Talking and being seen: look, say, emote, examine."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import describe_room, pick_one
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.events import EventKind
from engine.world.model import Character, Room, Thing

COMMANDS: list[Command] = []


@command(
    COMMANDS,
    "look",
    aliases=("l",),
    category="social",
    syntax="look [thing]",
    help="Look around the room, or at something or someone in it.",
    example="look",
    args=(Arg("target", ArgKind.THING, optional=True),),
)
def look(ctx: CommandContext, call: Invocation) -> Result:
    if call.args:
        return examine(ctx, call)
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} looks around.")
    return done(describe_room(ctx.world, ctx.world.rooms[ctx.caller.location], ctx.caller))


@command(
    COMMANDS,
    "say",
    category="social",
    syntax="say <text>",
    help='Say something to everyone in the room. A line starting with " is a say.',
    example="say Hello! What brings you here?",
    args=(Arg("text", ArgKind.TEXT),),
)
def say(ctx: CommandContext, call: Invocation) -> Result:
    text = call.args
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    if not text:
        return failed("Say what?", "Try: say Hello there.")
    ctx.emit(EventKind.SPEECH, f'{ctx.caller.name} says, "{text}"')
    alone = not ctx.world.characters_in(ctx.caller.location, besides=ctx.caller)
    return done(f'You say, "{text}"' + (" (Nobody else is here to hear you.)" if alone else ""))


@command(
    COMMANDS,
    "emote",
    category="social",
    syntax="emote <action>",
    help="Act something out: 'emote waves' shows '<you> waves'. A line starting with : is an emote.",
    example="emote smiles warmly.",
    args=(Arg("action", ArgKind.TEXT),),
)
def emote(ctx: CommandContext, call: Invocation) -> Result:
    if not call.args:
        return failed("Emote what?", "Try: emote waves.")
    action = call.args.rstrip()
    stop = "" if action.endswith((".", "!", "?", "…", '"', "'", ")")) else "."
    text = f"{ctx.caller.name} {action}{stop}"  # "Cy smiles" is a sentence: it ends
    ctx.emit(EventKind.EMOTE, text)
    return done(text)


@command(
    COMMANDS,
    "examine",
    aliases=("ex",),
    category="social",
    syntax="examine <thing|character>",
    help="Look closely at an object or a character in this room ('here' and 'me' work too).",
    example="examine bench",
    args=(Arg("target", ArgKind.THING),),
)
def examine(ctx: CommandContext, call: Invocation) -> Result:
    query = call.args
    if not query:
        return failed("Examine what?", "Try 'look' to see what is here, then 'examine <thing>'.")
    me, room = ctx.caller, ctx.world.rooms[ctx.caller.location]
    target: Thing | Character | Room | Result
    if query.lower() in ("me", "myself", "self"):
        target = me
    elif query.lower() in ("here", "room"):
        target = room
    else:
        target = pick_one(
            ctx.world.find_here(room.id, query),
            query,
            "thing or character here",
            "Try 'look' to see what is here.",
        )
    if isinstance(target, Result):
        return target
    if isinstance(target, Room):
        return done(describe_room(ctx.world, target, me))
    if target is not me:
        ctx.emit(EventKind.ACTION, f"{me.name} examines {target.name}.")
    about = target.description or "You see nothing special."
    if isinstance(target, Character):
        kind = "You" if target is me else target.name
        return done(f"{kind} ({target.type}): {about}")
    return done(f"{target.name}: {about}")
