"""The handbook: @handbook (show, undo) and @skill."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import memory_owner
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.errors import VaultError
from engine.memory.handbook import read_skill_front
from engine.world.model import Character

COMMANDS: list[Command] = []
_WHEN = "It is written after a knowledge pass: at the end of a run, every few hundred memories, and on @consolidate."


@command(
    COMMANDS,
    "@handbook",
    category="memory",
    syntax="@handbook [character] | @handbook undo [character]",
    help=(
        "Your handbook's summary: who you are, your general tips, and where your topics "
        "and skills are (builders: anyone's). 'undo' puts back the handbook as it was "
        "before its last write."
    ),
    example="@handbook",
    args=(Arg("what", ArgKind.TEXT, optional=True),),
)
def handbook(ctx: CommandContext, call: Invocation) -> Result:
    words = call.args.split()
    if words and words[0].lower() == "undo":
        return _undo(ctx, words[1:])
    target = memory_owner(ctx, words, "look at", "Try: @handbook")
    if isinstance(target, Result):
        return target
    store = ctx.handbook(target)
    try:
        text, state = store.summary_text(), store.state()
    except VaultError as exc:
        return failed(str(exc))
    whose_book = _whose(ctx, target)
    if text is None:
        return done(f"{whose_book.capitalize()} handbook is empty. {_WHEN}")
    made = ""
    if state is not None:
        by = "the model" if state.method == "llm" else "the rules"
        made = f" (written by {by} at {state.updated.sim.replace('T', ' ')})"
    skills = store.skills()
    listed = f"\nSkills: {', '.join(skills)} (@skill <name>)" if skills else ""
    return done(f"{whose_book.capitalize()} handbook{made}:\n{text.strip()}{listed}")


def _undo(ctx: CommandContext, words: list[str]) -> Result:
    target = memory_owner(ctx, words, "undo", "Try: @handbook undo")
    if isinstance(target, Result):
        return target
    try:
        outcome = ctx.handbook(target).undo()
    except VaultError as exc:
        return failed(str(exc))
    if outcome is None:
        who = "You have" if target is ctx.caller else f"{target.name} has"
        return failed(f"{who} no handbook write left to undo.")
    return done(
        f"Undid the last write of {_whose(ctx, target)} handbook: "
        f"{len(outcome.restored)} file{'s' if len(outcome.restored) != 1 else ''} put back, "
        f"{len(outcome.removed)} removed."
    )


def _whose(ctx: CommandContext, target: Character) -> str:
    return "your" if target is ctx.caller else f"{target.name}'s"


@command(
    COMMANDS,
    "@skill",
    category="memory",
    syntax="@skill [name]",
    help="One of your skills, step by step (a procedure you used in three or more knowledge "
    "passes); without a name, the list of them.",
    example="@skill bake-bread",
    args=(Arg("name", ArgKind.TEXT, optional=True),),
)
def skill(ctx: CommandContext, call: Invocation) -> Result:
    store = ctx.handbook(ctx.caller)
    names = store.skills()
    wanted = "-".join(call.args.lower().split())
    if not names:
        return done(f"You have no skills yet: a procedure becomes one once you have used it "
                    f"in three knowledge passes. {_WHEN}")  # fmt: skip
    if not wanted:
        return done("Your skills: " + ", ".join(names) + ". Try: @skill <name>")
    found = [n for n in names if n == wanted] or [n for n in names if n.startswith(wanted)]
    found = found or [n for n in names if wanted in n]
    if len(found) != 1:
        some = ", ".join(found or names)
        what = "more than one skill" if found else "no skill"
        return failed(f"You have {what} called '{call.args.strip()}'.", f"Your skills: {some}.")
    try:
        text = store.skill(found[0])
    except VaultError as exc:
        return failed(str(exc))
    problem = read_skill_front(text or "").problem
    note = f"\n(The skill {found[0]}: {problem}.)" if problem else ""
    return done((text or "").strip() + note)
