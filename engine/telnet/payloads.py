"""What MUD clients are told besides text, as pure functions of the world.

- GMCP ``Room.Info`` in the shape Mudlet's generic mapper reads: ``{"num": <room
  number>, "name", "area", "exits": {"<exit>": <room number>}}``, plus ``"id"`` (the
  room's mudsim id, ``#id`` in commands). A mapper keys rooms by number, so each room
  gets one: its place in the world (1, 2, 3 ...). Rooms are only ever added (``@dig``),
  at the end, so a room keeps its number across runs.
- GMCP ``Char.Status``: the character's name, room and role.
- MSSP (what MUD listings crawl): the world's name, players connected, and when the
  server started (Unix time), as the MSSP spec asks.
"""

from __future__ import annotations

from typing import Any, Final

from engine import version
from engine.world.model import Character, Room
from engine.world.world import World

CODEBASE: Final = "mudsim"


def room_number(world: World, room_id: str) -> int:
    """``room_id``'s number (its place in the world, from 1); 0 for no such room."""
    for number, known in enumerate(world.rooms, start=1):
        if known == room_id:
            return number
    return 0


def room_info(world: World, room: Room) -> dict[str, Any]:
    """GMCP ``Room.Info`` for ``room``."""
    numbers = {room_id: number for number, room_id in enumerate(world.rooms, start=1)}
    return {
        "num": numbers.get(room.id, 0),
        "id": room.id,
        "name": room.name,
        "area": world.name,
        "exits": {name: numbers.get(target, 0) for name, target in room.exits.items()},
    }


def char_status(world: World, character: Character) -> dict[str, Any]:
    """GMCP ``Char.Status`` for ``character``."""
    room = world.rooms.get(character.location)
    return {
        "name": character.name,
        "room": room.name if room else character.location,
        "role": character.role.value,
    }


def mssp(world_name: str, players: int, started: float) -> dict[str, str | list[str]]:
    """MSSP variables: ``started`` is the server's start, in Unix seconds."""
    return {
        "NAME": world_name,
        "PLAYERS": str(players),
        "UPTIME": str(int(started)),
        "CODEBASE": f"{CODEBASE} {version()}",
        "FAMILY": "Custom",
        "GMCP": "1",
        "MSSP": "1",
        "ANSI": "1",
        "UTF-8": "1",
    }
