"""Small shared pieces for command handlers: describing rooms, picking one match."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from rapidfuzz.distance import OSA

from engine.commands.registry import PROSE_WORDS, correction_limit
from engine.commands.result import Result, failed
from engine.world import matching
from engine.world.model import ABBREVIATIONS, Character, Role, Room
from engine.world.world import World

if TYPE_CHECKING:
    from engine.commands.context import CommandContext

T = TypeVar("T")


def join_names(names: Sequence[str], *, empty: str = "nobody") -> str:
    """``["A"]`` -> ``A``; ``["A", "B", "C"]`` -> ``A, B and C``."""
    if not names:
        return empty
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def counted(number: int, one: str, many: str) -> str:
    """``1 turn``, ``0 turns``, ``2 summaries``."""
    return f"{number} {one if number == 1 else many}"


def describe_room(world: World, room: Room, viewer: Character) -> str:
    """What ``look`` shows: name, description, exits, objects and who else is here."""
    exits = [f"{name} ({world.rooms[to].name})" for name, to in room.exits.items()]
    lines = [room.name]
    if room.description:
        lines.append(room.description)
    lines.append(f"Exits: {', '.join(exits)}." if exits else "There is no way out.")
    things = [t.name for t in world.things_in(room.id)]
    if things:
        lines.append(f"You see {join_names(things)}.")
    others = [world.seen_name(c) for c in world.characters_in(room.id, besides=viewer)]
    lines.append(f"Also here: {join_names(others)}." if others else "Nobody else is here.")
    return "\n".join(lines)


def find_exits(world: World, room: Room, query: str) -> list[str]:
    """Exit names of ``room`` that ``query`` means: by exit name (``n`` is ``north``),
    then by the name of the room an exit leads to."""
    wanted = " ".join(query.lower().split())
    wanted = ABBREVIATIONS.get(wanted, wanted)
    if wanted in room.exits:
        return [wanted]
    by_name = matching.match(wanted, (([name], name) for name in room.exits))
    if by_name:
        return by_name
    rooms = world.rooms
    return matching.match(
        wanted,
        (([rooms[to].name, to, *rooms[to].aliases], name) for name, to in room.exits.items()),
    )


def nearest_exits(world: World, room: Room, query: str) -> dict[str, str]:
    """The exits of ``room`` a mistyped ``query`` means, corrected as verbs are: the
    exits whose name, or the name or an alias of the room they lead to, is nearest to
    it within ``correction_limit`` edits (``gardn`` -> ``garden``); each exit with the
    name it was taken for. More than one is an ambiguity to report, never a guess."""
    wanted = matching.strip_article(query)
    if not wanted or wanted in PROSE_WORDS:
        return {}
    limit = correction_limit(wanted)
    nearest: dict[str, str] = {}
    for exit_name, to in room.exits.items():
        target = world.rooms[to]
        for name in (exit_name, target.name, *target.aliases):
            distance = OSA.distance(wanted, matching.strip_article(name), score_cutoff=limit)
            if distance > limit:
                continue
            if distance < limit:  # nearer than all so far: only this distance counts now
                nearest.clear()
                limit = distance
            nearest.setdefault(exit_name, name)
    return nearest


def pick_one(found: Sequence[T], query: str, what: str, hint: str) -> T | Result:
    """The single match, or a failure that says none or lists the candidates."""
    if len(found) == 1:
        return found[0]
    if not found:
        return failed(f"You don't see any {what} called '{query}'.", hint)
    names = join_names([getattr(item, "name", str(item)) for item in found], empty="")
    return failed(f"Which do you mean: {names}?", "Say it more fully, or use its #id.")


def strip_prefix(text: str, word: str) -> str:
    """``strip_prefix("to the hall", "to")`` -> ``"the hall"``."""
    head, _, rest = text.partition(" ")
    return rest.strip() if head.lower() == word and rest.strip() else text


def split_arrow(args: str) -> tuple[str, str] | None:
    """``"Title -> text"`` -> ``("Title", "text")``; None when there is no ``->``."""
    left, arrow, right = args.partition("->")
    return (left.strip(), right.strip()) if arrow else None


def memory_owner(
    ctx: CommandContext, words: list[str], verb: str, usage: str
) -> Character | Result:
    """The caller, or (builders) the character the words name: whose memory a memory
    command (``@knowledge``, ``@handbook``) is about."""
    if not words:
        return ctx.caller
    name = " ".join(words)
    found = pick_one(ctx.world.find_characters(name), name, "character", "Try 'who'.")
    if isinstance(found, Result):
        return found
    if found is not ctx.caller and not ctx.caller.role.allows(Role.BUILDER):
        return failed(f"Only builders may {verb} another character's memory.", usage)
    return found
