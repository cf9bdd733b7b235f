"""What one agent perceived, read back from its journal (pure, no I/O).

The probe asks only about what a memory's *text* says, since the text is all the
prompt shows (a record's ``location`` and ``occupants`` never reach the model). So
every fact here carries the seqs of the memories whose texts hold it, and the
structured fields are used only to check and anchor what the texts say:

- **where the agent is**: a successful move's result (``You go north to The Yard.``)
  or a room description (``look``, ``@teleport``: its first line is the room's name)
  that agrees with the record's ``location``; lost as soon as ``location`` changes
  without such a memory;
- **speech heard**: an observation with a ``speaker`` whose text is
  ``<speaker> says, "<quote>"`` (``engine.commands.social.say``);
- **comings and goings** (``engine.commands.movement`` and ``building``):
  ``<name> leaves <exit> to <room>.`` (``leaves for <room>.`` by an exit that is no
  compass direction), ``<name> arrives from <room>.``,
  ``<name> vanishes in a swirl of light.``, ``<name> appears in a swirl of light.``;
- **sightings** of a person: leaving to a named room puts them there; vanishing (or
  leaving to a room the world does not know) puts them nowhere known; anything else
  they are seen doing, or a room description's ``Also here:`` line naming them, puts
  them where the agent is; a room description that does not name someone last seen
  in that room puts them nowhere known (they left unseen).

Names are the world's: an actor is the longest world character name the text starts
with, a room a world room's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from engine.memory.record import MemoryKind, MemoryRecord
from engine.world.world import World

MoveKind = Literal["leave", "arrive", "vanish", "appear"]
_TAKING = re.compile(r"^\(Taking '.*' as '.*'\.\)$")
_ALSO_HERE = "Also here: "
_NOBODY = "Nobody else is here."
_LIST_SPLIT = re.compile(r", | and ")
_Sight = Callable[[str, int, "str | None", tuple[int, ...]], None]
"""Records that a person was (or was no longer known to be) somewhere."""


@dataclass(frozen=True, slots=True)
class Here:
    """Where the agent knows it is: the room's id and name, and the memory that says so."""

    room_id: str
    name: str
    seq: int


@dataclass(frozen=True, slots=True)
class Speech:
    """Something another character was heard saying."""

    seq: int
    speaker: str
    quote: str
    here: Here | None
    location: str | None


@dataclass(frozen=True, slots=True)
class Move:
    """A character seen leaving, arriving, vanishing or appearing. ``room``: the room
    left for (leave) or come from (arrive), when the world knows it by that name."""

    seq: int
    person: str
    kind: MoveKind
    room: str | None
    location: str | None


@dataclass(frozen=True, slots=True)
class Sighting:
    """Where the agent last knew ``person`` to be as of memory ``seq``: a room's name, or
    None (gone where the agent does not know); ``evidence``: the memories that say so."""

    seq: int
    person: str
    room: str | None
    evidence: tuple[int, ...]


@dataclass(slots=True)
class Perception:
    agent: str
    records: Sequence[MemoryRecord]
    count: int
    """M: the agent's memory count (seq counts from 0)."""
    index: dict[int, int] = field(default_factory=dict)
    """Each seq's position in ``records`` (the last one holding it)."""
    here: list[Here | None] = field(default_factory=list)
    """Per record (by index): where the agent knew it was."""
    speeches: list[Speech] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)
    sightings: dict[str, list[Sighting]] = field(default_factory=dict)


def first_line(text: str) -> str:
    """A memory's first line, past a ``(Taking 'x' as 'y'.)`` note, spaces collapsed."""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line and not _TAKING.match(line):
            return line
    return ""


def memory_count(records: Sequence[MemoryRecord]) -> int:
    """M: the journal's length, or one past its highest seq if that is more."""
    return max([len(records), *(r.seq + 1 for r in records)])


def heard_quote(record: MemoryRecord) -> str | None:
    """The words of a speech observation (``Bo says, "..."``), or None."""
    if record.kind is not MemoryKind.OBSERVATION or not record.speaker:
        return None
    prefix = f'{record.speaker} says, "'
    text = record.text
    if not (text.startswith(prefix) and text.endswith('"')) or len(text) <= len(prefix):
        return None
    quote = " ".join(text[len(prefix) : -1].split())
    return quote if any(ch.isalnum() for ch in quote) else None


class _Names:
    """The world's names: characters (longest first, so ``Bob`` wins over ``Bo``) and
    rooms (by id and by name)."""

    def __init__(self, world: World) -> None:
        self.people = sorted({c.name for c in world.characters.values()}, key=lambda n: -len(n))
        self.room_names = {r.name for r in world.rooms.values()}
        self.room_by_id = {r.id: r.name for r in world.rooms.values()}
        self.rooms_longest = sorted(self.room_names, key=lambda n: -len(n))

    def actor(self, text: str) -> str | None:
        return next((n for n in self.people if text.startswith(n + " ")), None)

    def move(self, record: MemoryRecord) -> Move | None:
        text = " ".join(record.text.split())
        who = self.actor(text)
        if who is None:
            return None
        rest = text[len(who) + 1 :]
        kind: MoveKind
        room: str | None = None
        if rest == "vanishes in a swirl of light.":
            kind = "vanish"
        elif rest == "appears in a swirl of light.":
            kind = "appear"
        elif rest.startswith("arrives from ") and rest.endswith("."):
            kind = "arrive"
            origin = rest[len("arrives from ") : -1]
            room = origin if origin in self.room_names else None
        elif rest.startswith("leaves ") and rest.endswith("."):
            kind = "leave"
            room = next((r for r in self.rooms_longest
                         if rest.endswith((f" to {r}.", f" for {r}."))), None)  # fmt: skip
        else:
            return None
        return Move(record.seq, who, kind, room, record.location)


def _revealed(record: MemoryRecord, names: _Names) -> Here | None:
    """Where a successful result of the agent's own says it now is, if it says so."""
    if record.kind is not MemoryKind.RESULT or record.failed or record.location is None:
        return None
    name = names.room_by_id.get(record.location)
    if name is None:
        return None
    line = first_line(record.text)
    if line == name or (line.startswith("You go ") and line.endswith(f" to {name}.")):
        return Here(record.location, name, record.seq)
    return None


def _listed(record: MemoryRecord, names: _Names) -> list[str] | None:
    """Who a room description's ``Also here:`` line names (``[]``: nobody), or None
    when the text is no room description."""
    for line in record.text.splitlines():
        line = " ".join(line.split())
        if line == _NOBODY:
            return []
        if line.startswith(_ALSO_HERE) and line.endswith("."):
            parts = _LIST_SPLIT.split(line[len(_ALSO_HERE) : -1])
            return [p for p in parts if p in names.people]
    return None


def perceive(agent: str, records: Sequence[MemoryRecord], world: World) -> Perception:
    """Read ``agent``'s journal (oldest first) against ``world``'s names."""
    names = _Names(world)
    seen = Perception(agent, records, memory_count(records))
    known: Here | None = None

    def sight(person: str, seq: int, room: str | None, evidence: tuple[int, ...]) -> None:
        if person != agent:
            ev = tuple(sorted(set(evidence)))
            seen.sightings.setdefault(person, []).append(Sighting(seq, person, room, ev))

    for position, record in enumerate(records):
        seen.index[record.seq] = position
        revealed = _revealed(record, names)
        if revealed is not None:
            known = revealed
        elif known is not None and record.location not in (None, known.room_id):
            known = None
        seen.here.append(known)
        if record.kind is MemoryKind.OBSERVATION:
            _observe(seen, record, known, names, sight)
        elif record.kind is MemoryKind.RESULT and known is not None and not record.failed:
            listed = _listed(record, names)
            if listed is not None:
                for person in listed:
                    sight(person, record.seq, known.name, (known.seq, record.seq))
                for person, trail in list(seen.sightings.items()):
                    if trail[-1].room == known.name and person not in listed:
                        sight(person, record.seq, None, (record.seq,))
    return seen


def _observe(
    seen: Perception, record: MemoryRecord, known: Here | None, names: _Names, sight: _Sight
) -> None:
    quote = heard_quote(record)
    if quote is not None and record.speaker is not None and record.speaker != seen.agent:
        seen.speeches.append(Speech(record.seq, record.speaker, quote, known, record.location))
    move = names.move(record)
    if move is not None:
        seen.moves.append(move)
        if move.kind in ("leave", "vanish"):
            sight(move.person, record.seq, move.room, (record.seq,))
            return
    actor = record.speaker if record.speaker in names.people else None
    actor = actor or names.actor(" ".join(record.text.split()))
    if actor is None:
        return
    if known is None:
        sight(actor, record.seq, None, (record.seq,))
    else:
        sight(actor, record.seq, known.name, (known.seq, record.seq))
