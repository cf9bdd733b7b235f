"""What a world file declares that a saved world lacks, and adding it (pure, no I/O).

Once a vault is seeded the vault wins: its world is the one that comes back, with
everything agents built. A world file edited later may still declare things the vault
has never had (a new room, an exit, an object, a character); ``plan_additions`` finds
them and ``apply_additions`` adds them. Nothing the vault has is ever changed or
removed: a room, object or character the vault has (by id) stays as it is, wherever it
now stands and whatever it is now called, and an exit name a room already uses keeps
the vault's target.

What cannot be added is named with the reason (``Additions.refused``): an id the vault
uses for another kind of thing, a character whose vault folder another character (or
an old journal) already holds, an exit or object whose room was itself refused.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from engine.world.model import Character, Room, Thing
from engine.world.world import World


@dataclass(frozen=True)
class NewExit:
    room_id: str
    name: str
    to: str


@dataclass
class Additions:
    rooms: list[Room] = field(default_factory=list)
    exits: list[NewExit] = field(default_factory=list)
    things: list[Thing] = field(default_factory=list)
    characters: list[Character] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """One line each: what the world file declares that cannot be added, and why."""

    @property
    def empty(self) -> bool:
        return not (self.rooms or self.exits or self.things or self.characters)

    def counts(self) -> str:
        """``"2 rooms, 3 exits, 1 character"`` (kinds with nothing to add left out)."""
        parts = [
            (len(self.rooms), "room", "rooms"),
            (len(self.exits), "exit", "exits"),
            (len(self.things), "object", "objects"),
            (len(self.characters), "character", "characters"),
        ]
        return ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in parts if n)

    def lines(self, world: World) -> list[str]:
        """One line per addition, naming rooms as ``world`` (with the additions) calls them."""

        def room(room_id: str) -> str:
            found = world.rooms.get(room_id)
            return found.name if found else room_id

        return [
            *(f"room {r.id} ({r.name})" for r in self.rooms),
            *(f"exit {e.name!r} from {room(e.room_id)} to {room(e.to)}" for e in self.exits),
            *(f"object {t.id} ({t.name}) in {room(t.location)}" for t in self.things),
            *(f"character {c.name} ({c.type}) in {room(c.location)}" for c in self.characters),
        ]


def plan_additions(
    declared: World, present: World, *, occupied_folders: Collection[str] = ()
) -> Additions:
    """What ``declared`` (a world file) has that ``present`` (the vault's world) lacks.

    ``occupied_folders``: character folder names (any case) that already hold files in
    the vault although ``present`` has no such character (an old journal); a new
    character there would inherit memories that are not its own, so it is refused.
    """
    plan = Additions()
    rooms = set(present.rooms)
    for r in declared.rooms.values():
        if r.id in present.rooms:
            continue
        if present.has_id(r.id):
            plan.refused.append(
                f"room {r.id} ({r.name}): the vault uses that id for {_kind(present, r.id)}"
            )
            continue
        plan.rooms.append(Room(r.id, r.name, r.description, {}, list(r.aliases)))
        rooms.add(r.id)
    _plan_exits(declared, present, rooms, plan)
    for t in declared.things.values():
        if t.id in present.things:
            continue
        if present.has_id(t.id):
            plan.refused.append(
                f"object {t.id} ({t.name}): the vault uses that id for {_kind(present, t.id)}"
            )
        elif t.location not in rooms:
            plan.refused.append(f"object {t.id} ({t.name}): its room {t.location!r} is not added")
        else:
            plan.things.append(Thing(t.id, t.name, t.location, t.description, list(t.aliases)))
    _plan_characters(declared, present, rooms, occupied_folders, plan)
    return plan


def _plan_exits(declared: World, present: World, rooms: set[str], plan: Additions) -> None:
    for r in declared.rooms.values():
        if r.id not in rooms:
            continue  # refused above
        have = present.rooms[r.id].exits if r.id in present.rooms else {}
        for name, to in r.exits.items():
            if name in have:
                if have[name] != to:
                    plan.refused.append(
                        f"exit {name!r} from {_name(present, r.id)}: it leads to "
                        f"{_name(present, have[name])} in the vault, kept (the world file: {to!r})"
                    )
            elif to not in rooms:
                plan.refused.append(
                    f"exit {name!r} from {_name(present, r.id)}: its room {to!r} is not added"
                )
            else:
                plan.exits.append(NewExit(r.id, name, to))


def _plan_characters(
    declared: World,
    present: World,
    rooms: set[str],
    occupied_folders: Collection[str],
    plan: Additions,
) -> None:
    folders = {c.folder.lower(): c.name for c in present.characters.values()}
    occupied = {folder.lower() for folder in occupied_folders}
    for c in declared.characters.values():
        if c.id in present.characters:
            continue
        folder = c.folder.lower()
        why = None
        if present.has_id(c.id):
            why = f"the vault uses the id {c.id!r} for {_kind(present, c.id)}"
        elif folder in folders:
            why = f"{folders[folder]} in the vault has the same folder, agents/{c.folder}"
        elif folder in occupied:
            why = (
                f"agents/{c.folder} in the vault holds files of someone its world does not "
                f"have; move that folder away to add {c.name}"
            )
        elif c.location not in rooms:
            why = f"its room {c.location!r} is not added"
        if why is not None:
            plan.refused.append(f"character {c.name}: {why}")
            continue
        plan.characters.append(replace(c, aliases=list(c.aliases)))


def apply_additions(world: World, plan: Additions) -> None:
    """Add ``plan`` (made against ``world``) to ``world``; nothing it has changes."""
    for room in plan.rooms:
        world.add_room(room)
    for new in plan.exits:
        world.rooms[new.room_id].exits.setdefault(new.name, new.to)
    for thing in plan.things:
        world.add_thing(thing)
    for character in plan.characters:
        world.add_character(character)


def _kind(world: World, entity_id: str) -> str:
    if entity_id in world.rooms:
        return f"the room {world.rooms[entity_id].name}"
    if entity_id in world.things:
        return f"the object {world.things[entity_id].name}"
    return f"the character {world.characters[entity_id].name}"


def _name(world: World, room_id: str) -> str:
    room = world.rooms.get(room_id)
    return room.name if room else room_id
