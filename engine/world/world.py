"""The live world: rooms, objects and characters, who is where, and the room graph.

``World`` owns state and its invariants (every exit and location points at a real
room, ids are unique), and the world clock; it does no I/O and knows nothing of
commands or memory.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import TypeVar

from engine.errors import UnknownCharacterError
from engine.world import matching
from engine.world.clock import WorldClock
from engine.world.model import Character, Room, Thing, way_back

E = TypeVar("E", bound="Room | Thing | Character")


class LinkConflict(ValueError):
    """An automatic way back would reuse an exit name that already leads elsewhere."""


class World:
    def __init__(
        self, name: str, *, next_room_number: int = 1, clock: WorldClock | None = None
    ) -> None:
        self.name = name
        self.clock = clock if clock is not None else WorldClock.starting()
        """Simulation time (the world file's ``clock``, then the vault's ``clock.json``)."""
        self.rooms: dict[str, Room] = {}
        self.things: dict[str, Thing] = {}
        self.characters: dict[str, Character] = {}
        """By id, in world-file order (the first player is the default ``--as``)."""
        self.next_room_number = next_room_number
        self.asleep: set[str] = set()
        """Ids of player characters whose player is not connected (a served world): they
        stay where they were, seen asleep. Not saved; set by the server, on the record."""

    def seen_name(self, character: Character) -> str:
        """How others see ``character`` in a room: ``Wren``, or ``Wren (asleep)``."""
        return f"{character.name} (asleep)" if character.id in self.asleep else character.name

    # -- building -------------------------------------------------------------
    def add_room(self, room: Room) -> Room:
        self._claim_id(room.id)
        self.rooms[room.id] = room
        return room

    def add_thing(self, thing: Thing) -> Thing:
        self._claim_id(thing.id)
        self.things[thing.id] = thing
        return thing

    def add_character(self, character: Character) -> Character:
        self._claim_id(character.id)
        self.characters[character.id] = character
        return character

    def _claim_id(self, entity_id: str) -> None:
        if self.has_id(entity_id):
            raise ValueError(f"the id {entity_id!r} is already used")

    def has_id(self, entity_id: str) -> bool:
        return entity_id in self.rooms or entity_id in self.things or entity_id in self.characters

    def new_room_id(self) -> str:
        """A fresh id for a room made in-world: ``room-1``, ``room-2`` ... never reused."""
        while True:
            candidate = f"room-{self.next_room_number}"
            self.next_room_number += 1
            if not self.has_id(candidate):
                return candidate

    def link(
        self, source: str, exit_name: str, target: str, *, one_way: bool = False
    ) -> str | None:
        """Add exit ``exit_name`` from ``source`` to ``target`` and, unless ``one_way`` or
        ``target`` already has a way back to ``source``, the automatic return exit.

        Returns the return exit's name if one was made. Raises ``LinkConflict`` (changing
        nothing) when the return name is already an exit of ``target`` leading elsewhere.
        """
        back = None if one_way else self.way_back_needed(source, exit_name, target)
        self.rooms[source].exits[exit_name] = target
        if back is not None:
            self.rooms[target].exits[back] = source
        return back

    def way_back_needed(self, source: str, exit_name: str, target: str) -> str | None:
        """The return exit that linking ``source --exit_name--> target`` two-way would add:
        None if ``target`` already leads back to ``source``; ``LinkConflict`` if its name
        is taken by an exit of ``target`` that leads somewhere else."""
        dst = self.rooms[target]
        if source in dst.exits.values():
            return None
        back = way_back(exit_name, source)
        if back in dst.exits:
            raise LinkConflict(
                f"the way back from {dst.name} would be its exit {back!r}, which already "
                f"leads to {self.rooms[dst.exits[back]].name}"
            )
        return back

    # -- who and what is where --------------------------------------------------
    def characters_in(self, room_id: str, *, besides: Character | None = None) -> list[Character]:
        return [c for c in self.characters.values() if c.location == room_id and c is not besides]

    def things_in(self, room_id: str) -> list[Thing]:
        return [t for t in self.things.values() if t.location == room_id]

    def players(self) -> Iterator[Character]:
        return (c for c in self.characters.values() if c.type == "player")

    def move(self, character: Character, room_id: str) -> None:
        if room_id not in self.rooms:
            raise KeyError(room_id)
        character.location = room_id

    # -- finding things by what a user typed ------------------------------------
    def find_characters(self, query: str) -> list[Character]:
        return _find(query, list(self.characters.values()))

    def characters_named(self, name: str | None) -> list[Character]:
        """Everyone (``name`` None), or the one character ``name`` picks; anything else
        is an ``UnknownCharacterError`` that lists who there is (``--agent NAME``)."""
        everyone = list(self.characters.values())
        if name is None:
            return everyone
        found = self.find_characters(name)
        if len(found) != 1:
            names = ", ".join(c.name for c in everyone)
            raise UnknownCharacterError(
                f"no single character called {name!r} in the vault (characters: {names})"
            )
        return found

    def find_rooms(self, query: str) -> list[Room]:
        return _find(query, list(self.rooms.values()))

    def find_here(self, room_id: str, query: str) -> list[Thing | Character]:
        """Objects and characters in ``room_id`` answering to ``query``."""
        present: list[Thing | Character] = [*self.things_in(room_id), *self.characters_in(room_id)]
        return _find(query, present)

    def path(self, start: str, goal: str) -> list[str] | None:
        """Exit names along a shortest path from ``start`` to ``goal`` (BFS), or None."""
        if start == goal:
            return []
        came_from: dict[str, tuple[str, str]] = {}
        frontier = deque([start])
        while frontier:
            here = frontier.popleft()
            for exit_name, there in self.rooms[here].exits.items():
                if there in came_from or there == start:
                    continue
                came_from[there] = (here, exit_name)
                if there == goal:
                    steps: list[str] = []
                    node = goal
                    while node != start:
                        node, step = came_from[node]
                        steps.append(step)
                    return steps[::-1]
                frontier.append(there)
        return None


def _names(item: Room | Thing | Character) -> list[str]:
    return [item.name, item.id, *item.aliases]


def _find(query: str, items: list[E]) -> list[E]:
    """``#id`` matches an id exactly; anything else matches names (see ``matching``)."""
    query = query.strip()
    if query.startswith("#"):
        return [item for item in items if item.id == query[1:]]
    return matching.match(query, ((_names(item), item) for item in items))
