"""Getting around: go (by exit, by a neighbouring room's name, or toward a far room). A
mistyped exit or neighbouring room is corrected as a verb is (``go gardn`` goes to the
garden, saying so), when one exit is nearest."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import (
    describe_room,
    find_exits,
    join_names,
    nearest_exits,
    pick_one,
    strip_prefix,
)
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.events import EventKind
from engine.world.model import COMPASS

COMMANDS: list[Command] = []


@command(
    COMMANDS,
    "go",
    category="movement",
    syntax="go [to] <exit|room>",
    help=(
        "Walk through an exit ('go north', 'go n'), or toward a room by name: a room further "
        "away takes one step along the shortest path and tells you the rest. A mistyped exit "
        "('go gardn') is taken for the nearest one, when one is nearest."
    ),
    example="go north",
    args=(Arg("where", ArgKind.EXIT),),
)
def go(ctx: CommandContext, call: Invocation) -> Result:
    world, me = ctx.world, ctx.caller
    here = world.rooms[me.location]
    where = strip_prefix(call.args, "to")
    exits_hint = f"Exits here: {join_names(list(here.exits), empty='none')}."
    if not where:
        return failed("Go where?", exits_hint)
    exits = find_exits(world, here, where)
    if len(exits) > 1:
        return failed(f"Which way do you mean: {join_names(exits)}?", exits_hint)
    if exits:
        return _step(ctx, exits[0], destination=None)
    rooms = world.find_rooms(where)
    if not rooms:
        nearest = nearest_exits(world, here, where)
        if len(nearest) > 1:
            return failed(f"Which way do you mean: {join_names(sorted(nearest))}?", exits_hint)
        for exit_name, taken_for in nearest.items():
            result = _step(ctx, exit_name, destination=None)
            note = f"(Taking '{where}' as '{taken_for}'.)\n"
            return Result(note + result.text, result.ok, result.hint, result.memory_kind)
    room = pick_one(
        rooms,
        where,
        "exit or room",
        f"{exits_hint} Try 'rooms' to list every room.",
    )
    if isinstance(room, Result):
        return room
    if room.id == here.id:
        return failed(f"You are already in {here.name}.", exits_hint)
    path = world.path(here.id, room.id)
    if path is None:
        return failed(f"There is no way from {here.name} to {room.name}.", exits_hint)
    return _step(ctx, path[0], destination=(room.name, path[1:]))


def _step(ctx: CommandContext, exit_name: str, destination: tuple[str, list[str]] | None) -> Result:
    world, me = ctx.world, ctx.caller
    old = world.rooms[me.location]
    new = world.rooms[old.exits[exit_name]]
    compass = exit_name in COMPASS  # "north" reads as a way; "garden", "stair" do not
    leaves = f"leaves {exit_name} to" if compass else "leaves for"
    ctx.emit(EventKind.MOVEMENT, f"{me.name} {leaves} {new.name}.")
    world.move(me, new.id)
    ctx.emit(EventKind.MOVEMENT, f"{me.name} arrives from {old.name}.")
    way = f"{exit_name} " if compass else ""
    text = f"You go {way}to {new.name}.\n{describe_room(world, new, me)}"
    if destination is not None:
        name, rest = destination
        text += (
            f"\n(Heading for {name}: then {', '.join(rest)}.)"
            if rest
            else f"\n(You have arrived at {name}.)"
        )
    return done(text)
