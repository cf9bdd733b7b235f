"""The one path by which players and agents act: a command line run as a character
(``execute``), its events delivered to the room (``deliver``), and what each character
remembers of it (``remember``).

A command's events reach every other character in the room (observers remember them,
except ambient ones); the caller remembers the command's narrative result, one memory
per command. Functions of a ``Simulation``; its ``execute`` and ``deliver`` call them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.commands import Invocation, ParsedLine, Result, parse_line
from engine.commands.helpers import join_names
from engine.commands.parser import clean
from engine.commands.result import failed
from engine.errors import MudsimError
from engine.memory.record import MemoryKind, utc_now
from engine.sim.command_context import SimContext
from engine.sim.vault_session import save_world_now
from engine.world.events import Event, EventKind
from engine.world.model import ABBREVIATIONS, COMPASS, Character

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation

SAVED_AT_ONCE = frozenset(
    {"@dig", "@exit", "@teleport", "@set-profile", "@set-description", "@time"}
)
"""The commands that change what the vault's world files hold (rooms, exits, where a
builder teleported, a profile, the clock): a success saves the world before anyone
remembers it, so a kill later in the run cannot lose it. The clock's rounds are saved
as they complete (``turn_taken``). Other changes (walking) are saved by the next save
(``@save``, the end of a run or of ``do``); reads (``@my-profile``) save nothing."""


def execute(sim: Simulation, character: Character, line: str) -> Result:
    """Run one command line as ``character``; the result is also its memory. The line is
    cleaned first (``engine.commands.parser.clean``: what parsing would drop anyway), so
    what is recorded and replayed is what ran, and no undecodable byte of a command-line
    argument (a lone surrogate) reaches a tape."""
    line = clean(line)
    sim.recollection.look_again(character)  # a command may write what it brings to mind
    if sim.recorder is not None:
        sim.recorder.command(character.id, line, room=character.location,
                             sim=sim.clock.reading())  # fmt: skip
    result = _execute(sim, character, line)
    if sim.recorder is not None:
        sim.recorder.event("result", actor=character.id, ok=result.ok, text=result.text)
    return result


def _execute(sim: Simulation, character: Character, line: str) -> Result:
    limit = sim.settings.limits.max_command_chars
    if len(line) > limit:  # refused whole: not remembered, not heard by anyone
        return failed(
            f"That line is {len(line):,} characters long; a command may be at most "
            f"{limit:,} (max_command_chars in config/limits.md).",
            "Say it in shorter pieces, or keep long text in a note.",
        )
    parsed = parse_line(line)
    if parsed is None:
        return failed("Type a command, or 'help'.")
    if (
        sim.registry.get(parsed.verb) is None
        and not parsed.args
        and _is_exit(sim, character, parsed.verb)
    ):
        parsed = ParsedLine("go", parsed.verb, parsed.reason, parsed.text)
    direction = _direction(sim, parsed)
    found = sim.registry.resolve(parsed.verb, character.role)
    speaker = None
    if direction is not None:  # `n` where there is no north: never autocorrected
        exits = join_names(sorted(sim.world.rooms[character.location].exits), empty="none")
        result = failed(f"There is no exit {direction} here.", f"Exits here: {exits}.")
    elif found.command is None:
        result = _unresolved(parsed.verb, found.how, found.candidates)
    elif found.how == "forbidden":
        needed = found.command.role.value
        result = failed(
            f"'{found.command.key}' needs the {needed} role; you are a {character.role.value}.",
            "Type 'commands' to see what you can do.",
        )
    else:
        context = SimContext(sim, character)
        call = Invocation(parsed.args, parsed.reason, parsed.verb)
        try:
            # a command that reads what no record holds: a replay shows the recorded
            # result, and a run keeps its hint in its text (the record keeps the text)
            if found.command.reads_unrecorded and sim.recorded_result is not None:
                result = sim.recorded_result(character.id)
            elif found.command.reads_unrecorded:
                result = _whole(found.command.handler(context, call))
            else:
                result = found.command.handler(context, call)
        except MudsimError as exc:
            result = failed(f"That went wrong: {exc}")
        if result.ok and found.command.key in SAVED_AT_ONCE:
            save_world_now(sim)
        for event in context.events:  # held back until the world was saved
            sim.deliver(event)
            if event.kind is EventKind.SPEECH:
                speaker = character.name
        if found.how in ("prefix", "distance"):
            note = f"(Taking '{parsed.verb}' as '{found.command.key}'.)\n"
            result = Result(note + result.text, result.ok, result.hint, result.memory_kind)
    _remember_result(sim, character, parsed.text, parsed.reason, result, speaker)
    return result


def _whole(result: Result) -> Result:
    """``result`` with its hint as the last line of its text (shown and remembered the
    same)."""
    return Result(result.shown, result.ok, None, result.memory_kind)


def _direction(sim: Simulation, parsed: ParsedLine) -> str | None:
    """The compass direction a bare ``north``/``n`` (no command of that name, no such
    exit here, or it would have become ``go``) names, or None."""
    if parsed.args or sim.registry.get(parsed.verb.lower()) is not None:
        return None
    word = parsed.verb.lower()
    word = ABBREVIATIONS.get(word, word)
    return word if word in COMPASS else None


def _is_exit(sim: Simulation, character: Character, word: str) -> bool:
    """A bare exit name or compass abbreviation (``north``, ``n``) means ``go`` there."""
    exits = sim.world.rooms[character.location].exits
    return word in exits or ABBREVIATIONS.get(word) in exits


def _unresolved(verb: str, how: str, candidates: tuple[str, ...]) -> Result:
    if how == "ambiguous":
        return failed(
            f"'{verb}' could mean {join_names(list(candidates))}.", "Type more of the command."
        )
    return failed(
        f"There is no command '{verb}'.", "Type 'help' or 'commands' to see what you can do."
    )


def _remember_result(
    sim: Simulation, character: Character, command: str, reason: str | None, result: Result,
    speaker: str | None,
) -> None:  # fmt: skip
    if result.ok:
        text = result.text
    else:
        text = f"You tried: {command}\nThis failed because: {result.text}"
        text += f"\n{result.hint}" if result.hint else ""
    kind = MemoryKind.THOUGHT if result.memory_kind == "thought" else MemoryKind.RESULT
    remember(
        sim, character, kind, text, command=command, reason=reason, failed=not result.ok,
        speaker=speaker,
    )  # fmt: skip


def remember(
    sim: Simulation, character: Character, kind: MemoryKind, text: str, *,
    command: str | None = None, reason: str | None = None, failed: bool = False,
    speaker: str | None = None,
) -> None:  # fmt: skip
    """``character`` remembers ``text`` where it is, with whoever else is there; its
    compaction and knowledge passes hear of it."""
    others = [c.name for c in sim.world.characters_in(character.location, besides=character)]
    mind = sim.minds[character.id]
    mind.record(
        kind, text, location=character.location, occupants=others, command=command,
        reason=reason, failed=failed, sim=sim.clock.reading(), speaker=speaker,
    )  # fmt: skip
    sim.compactor.poke(mind)
    sim.knowledge.poke(mind)


def deliver(sim: Simulation, event: Event) -> None:
    """Show ``event`` to everyone in its room but its actor; observers remember it.
    It gets the clock's reading (``sim``) if it has none yet."""
    if not event.sim:
        event = event.at(sim.clock.reading())
    if sim.recorder is not None:
        sim.recorder.world_event(event)
    sim.chronicle.record(event)
    if event.remembered:
        present = sim.world.characters_in(event.room_id)
        names = [c.name for c in present]
        at = utc_now()  # one moment for every observer
        actor = sim.world.characters.get(event.actor_id or "")
        speaker = actor.name if actor is not None and event.kind is EventKind.SPEECH else None
        for index, observer in enumerate(present):
            if observer.id != event.actor_id:
                others = names[:index] + names[index + 1 :]
                mind = sim.minds[observer.id]
                mind.record(
                    MemoryKind.OBSERVATION, event.text, location=event.room_id,
                    occupants=others, at=at, sim=event.sim, speaker=speaker,
                )  # fmt: skip
                sim.compactor.poke(mind)
                sim.knowledge.poke(mind)
    for listener in sim.listeners:
        listener(event)
