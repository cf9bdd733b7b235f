"""The knowledge bank: @knowledge (list, undo) and @consolidate."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import memory_owner
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.errors import VaultError
from engine.memory.knowledge import KNOWLEDGE_TYPES, Entry, KnowledgeType

COMMANDS: list[Command] = []
SHOWN = 30
"""Entries ``@knowledge`` lists at most (the newest); ``mudsim knowledge`` shows all."""


def entry_lines(entries: list[Entry]) -> list[str]:
    """``- ltm-3-a1b2c3 (fact, 2 accesses) The well is dry. [tags: well]``"""
    lines = []
    for e in entries:
        uses = f"{e.access_count} access{'es' if e.access_count != 1 else ''}"
        tags = f" [tags: {', '.join(e.tags)}]" if e.tags else ""
        lines.append(f"- {e.id} ({e.type}, {uses}) {' '.join(e.content.split())}{tags}")
    return lines


def _kind(word: str) -> KnowledgeType | None:
    word = word.lower()
    for kind in KNOWLEDGE_TYPES:
        if word in (kind, kind + "s"):
            return kind
    return None


@command(
    COMMANDS,
    "@knowledge",
    category="memory",
    syntax="@knowledge [character] [type] | @knowledge undo [character]",
    help=(
        "What you have learned, entry by entry: mistakes, skills, procedures, facts, "
        "observations, preferences (builders: anyone's). 'undo' puts the bank back as "
        "it was before its last knowledge pass."
    ),
    example="@knowledge mistakes",
    args=(Arg("what", ArgKind.TEXT, optional=True),),
)
def knowledge(ctx: CommandContext, call: Invocation) -> Result:
    words = call.args.split()
    if words and words[0].lower() == "undo":
        return _undo(ctx, words[1:])
    kind = _kind(words[-1]) if words else None
    target = memory_owner(ctx, words[:-1] if kind else words, "look at", "Try: @knowledge")
    if isinstance(target, Result):
        return target
    try:
        bank = ctx.knowledge(target).load()
    except VaultError as exc:
        return failed(str(exc))
    entries = [e for e in bank if kind is None or e.type == kind]
    whose = "Your" if target is ctx.caller else f"{target.name}'s"
    what = f"{kind} entries" if kind else "knowledge bank"
    if not bank:
        hint = "It fills at the end of a run, every few hundred memories, and on @consolidate."
        return done(f"{whose} knowledge bank is empty. {hint}")
    if not entries:
        return done(f"{whose} knowledge bank has no {kind} entries ({len(bank)} in all).")
    shown = entries[-SHOWN:]
    more = f" (the newest {SHOWN}; `mudsim knowledge` shows all)" if len(entries) > SHOWN else ""
    head = f"{whose} {what}: {len(entries)} entr{'ies' if len(entries) != 1 else 'y'}{more}"
    return done("\n".join([head, *entry_lines(shown)]))


def _undo(ctx: CommandContext, words: list[str]) -> Result:
    target = memory_owner(ctx, words, "undo", "Try: @knowledge undo")
    if isinstance(target, Result):
        return target
    try:
        outcome = ctx.undo_knowledge(target)
    except VaultError as exc:
        return failed(str(exc))
    whose = "your" if target is ctx.caller else f"{target.name}'s"
    if outcome is None:
        return failed(f"There is no knowledge pass of {whose} left to undo.")
    return done(
        f"Undid knowledge pass {outcome.pass_id} of {whose} bank: {outcome.restored} "
        f"entr{'ies' if outcome.restored != 1 else 'y'} put back, {outcome.removed} removed; "
        "the handbook is written again from what is left."
    )


@command(
    COMMANDS,
    "@consolidate",
    category="memory",
    syntax="@consolidate [character]",
    help=(
        "Turn what you noted, lived and said since the last pass into knowledge entries "
        "now (builders: anyone's)."
    ),
    example="@consolidate",
    args=(Arg("character", ArgKind.CHARACTER, optional=True),),
    spends_model_calls=True,
)
def consolidate(ctx: CommandContext, call: Invocation) -> Result:
    target = memory_owner(ctx, call.args.split(), "consolidate", "Try: @consolidate")
    return target if isinstance(target, Result) else done(ctx.consolidate(target))
