"""Thinking, notes and remembering: think, note, @overwrite-note, recall, dream,
@memory-status."""

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
RECALLED = 5
"""What ``recall`` shows at most."""


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
            store.overwrite(title, text, reason=call.reason, sim=ctx.world.clock.reading())
        else:
            store.append(title, text, reason=call.reason, sim=ctx.world.clock.reading())
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
    help="Bring to mind what you know about some words: the best five of your knowledge, "
    "notes, skills and past experiences, with where each came from (no words: your latest note).",
    example="recall ledger",
    args=(Arg("query", ArgKind.MEMORY, optional=True),),
)
def recall(ctx: CommandContext, call: Invocation) -> Result:
    if not call.args:
        notes = ctx.notes().all()
        if not notes:
            return failed("You have no notes yet.", "Write one with: note <title> -> <text>")
        ctx.emit(EventKind.ACTION, f"{ctx.caller.name} pauses to recall something.")
        return done(f"Your latest note ({len(notes)} in all):\n{_show(notes[0])}")
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} pauses to recall something.")
    found = ctx.recall(ctx.caller, call.args, RECALLED)
    if not found:
        return failed(
            f"Nothing you know mentions '{call.args}'.",
            "Try other words, or 'recall' alone for your latest note.",
        )
    lines = [f"{_snippet(text)}  ({origin})" for text, origin in found]
    return done(f"What you recall about '{call.args}':\n" + "\n".join(lines))


def _snippet(text: str) -> str:
    """A recalled line cut at a word within ``_SNIPPET`` characters (it becomes a memory)."""
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[:_SNIPPET].rsplit(" ", 1)[0] + "..."


@command(
    COMMANDS,
    "dream",
    category="memory",
    syntax="dream",
    help="Doze off and dream, of what you lived long ago and lately and what you know; the "
    "dream is kept in your note 'Dreams' (at most one a day of world time).",
    example="dream",
    spends_model_calls=True,
)
def dream(ctx: CommandContext, call: Invocation) -> Result:
    started, said = ctx.dream(ctx.caller)
    if not started:
        return failed(said)
    ctx.emit(EventKind.ACTION, f"{ctx.caller.name} closes their eyes and dozes off.")
    return done(said)


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
    spends_model_calls=True,
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
