"""Thinking, notes and remembering: think, note, @overwrite-note, recall, @memory-status."""

from __future__ import annotations

from engine.commands.context import CommandContext
from engine.commands.helpers import pick_one, split_arrow
from engine.commands.registry import Arg, ArgKind, Command, Invocation, command
from engine.commands.result import Result, done, failed
from engine.errors import UnsafeNameError
from engine.vault.notes import Note
from engine.world.events import EventKind
from engine.world.model import Character, Role

COMMANDS: list[Command] = []
_SNIPPET = 160


@command(
    COMMANDS,
    "think",
    category="memory",
    syntax="think <thought>",
    help="Think privately: the thought becomes a memory; others only see you pause.",
    example="think Moss seems to know every book here.",
    args=(Arg("thought", ArgKind.TEXT),),
)
def think(ctx: CommandContext, call: Invocation) -> Result:
    if not call.args:
        return failed("Think what?", "Try: think I should ask Moss about the ledger.")
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} pauses in thought.")
    return Result(f"You think: {call.args}", memory_kind="thought")


def _write_note(ctx: CommandContext, call: Invocation, *, replace: bool) -> Result:
    parts = split_arrow(call.args)
    verb = "@overwrite-note" if replace else "note"
    usage = f"Write it as: {verb} <title> -> <text>"
    if parts is None or not parts[0] or not parts[1]:
        return failed("A note needs a title and some text, with -> between them.", usage)
    title, text = parts
    store = ctx.notes()
    try:
        if replace:
            store.overwrite(title, text, reason=call.reason)
        else:
            store.append(title, text, reason=call.reason)
    except UnsafeNameError:
        return failed(f"'{title}' cannot be a note title: it needs letters or digits.", usage)
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} jots something down.")
    return done(f"You {'rewrite' if replace else 'add to'} your note '{title}'.")


@command(
    COMMANDS,
    "note",
    category="memory",
    syntax="note <title> -> <text>",
    help="Add to a note in your personal wiki (a new note if the title is new).",
    example="note Moss -> Librarian; knows the ledger.",
    args=(Arg("title", ArgKind.TITLE), Arg("text", ArgKind.TEXT)),
)
def note(ctx: CommandContext, call: Invocation) -> Result:
    return _write_note(ctx, call, replace=False)


@command(
    COMMANDS,
    "@overwrite-note",
    category="memory",
    syntax="@overwrite-note <title> -> <text>",
    help="Replace a note's whole text.",
    example="@overwrite-note Plans -> Find the attic key.",
    args=(Arg("title", ArgKind.TITLE), Arg("text", ArgKind.TEXT)),
)
def overwrite_note(ctx: CommandContext, call: Invocation) -> Result:
    return _write_note(ctx, call, replace=True)


@command(
    COMMANDS,
    "recall",
    category="memory",
    syntax="recall [words]",
    help="Search your notes for words (no words: your latest note).",
    example="recall ledger",
    args=(Arg("query", ArgKind.TEXT, optional=True),),
)
def recall(ctx: CommandContext, call: Invocation) -> Result:
    notes = ctx.notes().all()
    if not notes:
        return failed("You have no notes yet.", "Write one with: note <title> -> <text>")
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} pauses to recall something.")
    if not call.args:
        return done(f"Your latest note ({len(notes)} in all):\n{_show(notes[0])}")
    words = [w for w in call.args.lower().split() if w]
    scored = [(sum((n.title + " " + n.body).lower().count(w) for w in words), n) for n in notes]
    found = [n for score, n in sorted(scored, key=lambda pair: -pair[0]) if score > 0]
    if not found:
        return failed(
            f"None of your {len(notes)} notes mention '{call.args}'.",
            "Try other words, or 'recall' alone.",
        )
    shown = "\n".join(_show(n) for n in found[:5])
    return done(f"Notes about '{call.args}' ({len(found)} found):\n{shown}")


def _show(note: Note) -> str:
    body = " ".join(note.body.split())
    return f"- {note.title}: {body[:_SNIPPET]}{'...' if len(body) > _SNIPPET else ''}"


@command(
    COMMANDS,
    "@memory-status",
    category="memory",
    syntax="@memory-status [character]",
    help="How your memory stands: memories, summaries, the next compaction (builders: anyone's).",
    example="@memory-status",
    args=(Arg("character", ArgKind.CHARACTER, optional=True),),
)
def memory_status(ctx: CommandContext, call: Invocation) -> Result:
    target = _target(ctx, call, "look at", "@memory-status")
    return target if isinstance(target, Result) else done(ctx.memory_status(target))


@command(
    COMMANDS,
    "@compact-memories",
    category="memory",
    syntax="@compact-memories [character]",
    help="Summarize your older memories now, all but the newest few (builders: anyone's).",
    example="@compact-memories",
    args=(Arg("character", ArgKind.CHARACTER, optional=True),),
)
def compact_memories(ctx: CommandContext, call: Invocation) -> Result:
    target = _target(ctx, call, "compact", "@compact-memories")
    return target if isinstance(target, Result) else done(ctx.compact_memories(target))


def _target(ctx: CommandContext, call: Invocation, verb: str, bare: str) -> Character | Result:
    """The caller, or (for builders) the character named in the arguments."""
    if not call.args:
        return ctx.caller
    found = pick_one(ctx.world.find_characters(call.args), call.args, "character", "Try 'who'.")
    if isinstance(found, Result):
        return found
    if found is not ctx.caller and not ctx.caller.role.allows(Role.BUILDER):
        return failed(f"Only builders may {verb} another character's memory.", f"Try: {bare}")
    return found
