"""Making the world (builders): @dig, @exit, @teleport."""

from __future__ import annotations

import re

from engine.commands.context import CommandContext
from engine.commands.helpers import describe_room, pick_one, split_arrow, strip_prefix
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.events import EventKind
from engine.world.matching import strip_article
from engine.world.model import COMPASS, Role, Room
from engine.world.world import LinkConflict

COMMANDS: list[Command] = []


def exit_name_for(room_name: str) -> str:
    """``"The Old Cellar"`` -> ``"old cellar"``: how an exit to that room is called."""
    name = " ".join(re.sub(r"[^\w\s-]", "", strip_article(room_name)).split())
    return name if any(ch.isalnum() for ch in name) else ""


def _link(ctx: CommandContext, exit_name: str, target: Room) -> Result | str | None:
    here = ctx.world.rooms[ctx.caller.location]
    if exit_name in here.exits:
        return failed(
            f"{here.name} already has an exit called '{exit_name}'.",
            "Pick another name: @exit <name> -> <room>",
        )
    try:
        return ctx.world.link(here.id, exit_name, target.id)
    except LinkConflict as exc:
        return failed(
            f"Cannot link both ways: {exc}.", "Give the exit another name: @exit <name> -> <room>"
        )


@command(
    COMMANDS,
    "@dig",
    category="building",
    role=Role.BUILDER,
    syntax="@dig <room name> [-> description]",
    help="Make a new room joined to this one both ways.",
    example="@dig The Cellar -> Damp steps lead down into the dark.",
    args=(Arg("name", ArgKind.TEXT), Arg("description", ArgKind.TEXT, optional=True)),
)
def dig(ctx: CommandContext, call: Invocation) -> Result:
    name, description = split_arrow(call.args) or (call.args.strip(), "")
    exit_name = exit_name_for(name)
    if not exit_name:
        return failed("The new room needs a name with letters in it.", "Try: @dig The Cellar")
    here = ctx.world.rooms[ctx.caller.location]
    if exit_name in here.exits:
        return failed(
            f"{here.name} already has an exit called '{exit_name}'.",
            "Pick another name for the room.",
        )
    room = ctx.world.add_room(
        Room(ctx.world.new_room_id(), name, description or "A newly made room.")
    )
    here.exits[exit_name] = room.id
    back = COMPASS.get(exit_name, "out")  # never the generated id (room-7) of where we stood
    room.exits[back] = here.id
    ctx.emit(EventKind.BUILDING, f"{ctx.caller.name} digs a new room: {name}.")
    return done(
        f"You dig {name} (#{room.id}). The exit '{exit_name}' leads there; '{back}' leads back."
    )


@command(
    COMMANDS,
    "@exit",
    category="building",
    role=Role.BUILDER,
    syntax="@exit [<name> ->] <room>",
    help="Join this room to another one both ways (the exit is named after the room unless you name it).",
    example="@exit trapdoor -> The Cellar",
    args=(Arg("name", ArgKind.TEXT, optional=True), Arg("room", ArgKind.ROOM)),
)
def exit_(ctx: CommandContext, call: Invocation) -> Result:
    named, query = split_arrow(call.args) or ("", strip_prefix(call.args, "to"))
    if not query:
        return failed(
            "Make an exit to which room?", "Try: @exit The Library, or @exit door -> The Library"
        )
    target = pick_one(ctx.world.find_rooms(query), query, "room", "Try 'rooms' to list them.")
    if isinstance(target, Result):
        return target
    if target.id == ctx.caller.location:
        return failed(
            "An exit cannot lead to the room it is in.", "Try 'rooms' to pick another room."
        )
    exit_name = " ".join(named.lower().split()) or exit_name_for(target.name) or target.id
    linked = _link(ctx, exit_name, target)
    if isinstance(linked, Result):
        return linked
    ctx.emit(
        EventKind.BUILDING,
        f"{ctx.caller.name} makes an exit '{exit_name}' leading to {target.name}.",
    )
    back = f" From there, '{linked}' leads back." if linked else ""
    return done(f"The exit '{exit_name}' now leads to {target.name}.{back}")


@command(
    COMMANDS,
    "@teleport",
    aliases=("@tp",),
    category="building",
    role=Role.BUILDER,
    syntax="@teleport <room|#id|character>",
    help="Go straight to a room, or to a character's room.",
    example="@teleport The Library",
    args=(Arg("destination", ArgKind.ROOM),),
)
def teleport(ctx: CommandContext, call: Invocation) -> Result:
    world, me, query = ctx.world, ctx.caller, call.args
    if not query:
        return failed("Teleport where?", "Try 'rooms' to list them.")
    rooms = world.find_rooms(query)
    if not rooms:
        rooms = list(
            {
                id(r): r for r in (world.rooms[c.location] for c in world.find_characters(query))
            }.values()
        )
    target = pick_one(rooms, query, "room or character", "Try 'rooms' or 'who'.")
    if isinstance(target, Result):
        return target
    if target.id == me.location:
        return failed(f"You are already in {target.name}.")
    ctx.emit(EventKind.MOVEMENT, f"{me.name} vanishes in a swirl of light.")
    world.move(me, target.id)
    ctx.emit(EventKind.MOVEMENT, f"{me.name} appears in a swirl of light.")
    return done(describe_room(world, target, me))
