"""Running the world (admins): @save, @impersonate."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import pick_one
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.world.model import Role

COMMANDS: list[Command] = []


@command(
    COMMANDS,
    "@save",
    category="admin",
    role=Role.ADMIN,
    syntax="@save",
    help="Save the world and everyone's state to the vault now.",
    example="@save",
)
def save(ctx: CommandContext, call: Invocation) -> Result:
    ctx.save()
    return done("The world is saved.")


@command(
    COMMANDS,
    "@impersonate",
    aliases=("@imp",),
    category="admin",
    role=Role.ADMIN,
    syntax="@impersonate <agent>",
    help="Show the exact prompt an agent would get if it thought now, with the scores of "
    "what it brings to mind (relevance, recency, combined, class).",
    example="@impersonate Eliza",
    args=(Arg("agent", ArgKind.CHARACTER),),
)
def impersonate(ctx: CommandContext, call: Invocation) -> Result:
    if not call.args:
        return failed("Impersonate whom?", "Try 'who' to list the agents.")
    agent = pick_one(ctx.world.find_characters(call.args), call.args, "character", "Try 'who'.")
    if isinstance(agent, Result):
        return agent
    if agent.type != "agent":
        return failed(f"{agent.name} is a player and has no prompt.", "Pick an agent from 'who'.")
    prompt = ctx.prompt_for(agent, scores=True)
    if prompt is None:
        return done(
            f"{agent.name} has no prompt yet: agents start thinking once an LLM is connected."
        )
    note = "(What it brings to mind shows its scores in [brackets]; the model is sent none.)"
    return done(f"{note}\n{prompt}")
