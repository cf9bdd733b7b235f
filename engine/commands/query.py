"""Finding out about the world: who, where, rooms, help, commands."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import join_names
from engine.commands.registry import CATEGORIES, Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed

COMMANDS: list[Command] = []


@command(
    COMMANDS,
    "who",
    category="query",
    syntax="who",
    help="List every character and where they are.",
    example="who",
)
def who(ctx: CommandContext, call: Invocation) -> Result:
    rooms = ctx.world.rooms
    lines = [
        f"- {c.name} [{c.type}] in {rooms[c.location].name}" for c in ctx.world.characters.values()
    ]
    return done("\n".join([f"Characters in {ctx.world.name}:", *lines]))


@command(
    COMMANDS,
    "where",
    category="query",
    syntax="where",
    help="Say which room you are in.",
    example="where",
)
def where(ctx: CommandContext, call: Invocation) -> Result:
    room = ctx.world.rooms[ctx.caller.location]
    return done(f"You are in {room.name} (#{room.id}).")


@command(
    COMMANDS,
    "rooms",
    category="query",
    syntax="rooms",
    help="List every room and who is in it.",
    example="rooms",
)
def rooms(ctx: CommandContext, call: Invocation) -> Result:
    lines = [
        f"- {room.name} (#{room.id}): {join_names([c.name for c in ctx.world.characters_in(room.id)], empty='empty')}"
        for room in ctx.world.rooms.values()
    ]
    return done("\n".join(["Rooms:", *lines]))


@command(
    COMMANDS,
    "help",
    aliases=("?",),
    category="query",
    syntax="help [command|category]",
    help="Show the command categories, one category's commands, or one command in full.",
    example="help go",
    args=(Arg("topic", ArgKind.TOPIC, optional=True),),
)
def help_(ctx: CommandContext, call: Invocation) -> Result:
    registry, role = ctx.registry, ctx.caller.role
    topic = call.args.lower().strip()
    if not topic:
        lines = ["Categories (help <category> lists its commands):"]
        lines += [
            f"- {name}: {about}"
            for name, about in CATEGORIES.items()
            if any(c.category == name for c in registry.allowed(role))
        ]
        lines.append("Type 'commands' for every command, 'help <command>' for one in full.")
        return done("\n".join(lines))
    if topic in CATEGORIES:
        found = [c for c in registry.allowed(role) if c.category == topic]
        if not found:
            return failed(
                f"You have no {topic} commands.", "Type 'help' for the categories you do have."
            )
        return done(
            "\n".join(
                [f"{topic} ({CATEGORIES[topic]}):", *(f"- {c.syntax}: {c.help}" for c in found)]
            )
        )
    target = registry.get(topic)
    if target is None:
        return failed(
            f"There is no command or category called '{topic}'.", "Type 'help' for the categories."
        )
    lines = [target.syntax, target.help, f"Example: {target.example}"]
    if target.aliases:
        lines.append(f"Aliases: {', '.join(target.aliases)}")
    lines.append(
        f"Category: {target.category}"
        + (f"; needs the {target.role.value} role" if target.role.rank else "")
    )
    return done("\n".join(lines))


@command(
    COMMANDS,
    "commands",
    category="query",
    syntax="commands",
    help="List every command you can use, by category.",
    example="commands",
)
def commands(ctx: CommandContext, call: Invocation) -> Result:
    allowed = ctx.registry.allowed(ctx.caller.role)
    lines: list[str] = []
    for category in CATEGORIES:
        keys = [c.key for c in allowed if c.category == category]
        if keys:
            lines.append(f"{category}: {', '.join(keys)}")
    return done("\n".join(lines))


@command(
    COMMANDS,
    "@llm-status",
    category="query",
    syntax="@llm-status",
    help="Show the language model in use: endpoints, model, queue, in flight, calls, failures, last error.",
    example="@llm-status",
    reads_unrecorded=True,  # the live queue: a replay shows what the run showed
)
def llm_status(ctx: CommandContext, call: Invocation) -> Result:
    status = ctx.llm_status()
    if status is None:
        return done(
            "No language model is connected in this session: agents think only under "
            "'mudsim run' (or 'mudsim play' with an LLM)."
        )
    return done(status)
