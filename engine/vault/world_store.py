"""The world as saved in a vault.

- ``world/world.yaml``: rooms (exits are directed: the way back is written out as its
  own exit), objects, the id counter, and the characters' folder names in order. Its
  leading comment lists who is where, for people; mudsim never reads comments.
- ``agents/<Name>/agent.md``: each character's settings in front matter (profile,
  description, location, role, thinker settings); the body repeats them for people.
- ``world/clock.json``: the world clock (``engine.world.clock``): its start, minutes per
  round, what it reads now and the turns taken in the round now running. A vault
  saved before the clock existed has none: its clock starts at the world file's start.

Save order, so a save cut off at any file (a kill, a full disk) leaves a vault that
loads: a character new to the vault gets its ``agent.md`` first; then ``world.yaml``,
the commit point for rooms, exits, objects and who exists; then the clock and the
other characters' files. The files of a save are not one transaction: a character may come back where
it stood before the save while the rooms are the new ones. A character whose room the
world lacks (left by a hand edit, or by an older mudsim that wrote the agent files
first) goes to the start room, the first room of ``world.yaml`` (the world file's first
room), with a warning. A file whose text has not changed is not written again.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import VaultError
from engine.faults import crash_point
from engine.vault.files import (
    atomic_write_text,
    dump_front_matter,
    dump_yaml,
    read_front_matter,
    read_json,
)
from engine.world.clock import WorldClock
from engine.world.folder_names import legacy_folder_name
from engine.world.model import Character, CharacterType, Role, Room, Thing
from engine.world.safe_yaml import load_yaml
from engine.world.world import World

SNAPSHOT_FORMAT = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _RoomSnapshot(_Strict):
    id: str
    name: str
    description: str = ""
    exits: dict[str, str] = {}
    aliases: list[str] = []


class _ThingSnapshot(_Strict):
    id: str
    name: str
    location: str
    description: str = ""
    aliases: list[str] = []


class _WorldSnapshot(_Strict):
    format: int = SNAPSHOT_FORMAT
    name: str
    next_room_number: int = Field(default=1, ge=1)
    characters: list[str]
    rooms: list[_RoomSnapshot]
    objects: list[_ThingSnapshot] = []


class _AgentFile(_Strict):
    name: str
    id: str
    type: CharacterType
    role: Role = Role.PLAYER
    location: str
    profile: str = ""
    description: str = ""
    aliases: list[str] = []
    think_interval: float | None = Field(default=None, gt=0)
    immediate_window: int | None = Field(default=None, ge=1)
    recent_window: int | None = Field(default=None, ge=1)
    model: str | None = None
    occupation: str = ""
    goal: str = ""
    tags: list[str] = []
    prioritize_recent: bool = False


_WRITTEN_WHEN_SET = ("occupation", "goal", "tags", "prioritize_recent")


def save_world(root: Path, world: World) -> None:
    """Write what changed: new characters' agent.md, world.yaml, then the others' files."""
    files = {c.folder: root / "agents" / c.folder / "agent.md" for c in world.characters.values()}
    new = {folder for folder, path in files.items() if not path.exists()}
    for character in world.characters.values():
        if character.folder in new:
            _write_if_changed(files[character.folder], _character_text(character))
    _write_if_changed(root / "world" / "world.yaml", _snapshot_text(world))
    crash_point("world-save-mid")
    save_clock(root, world.clock)
    for character in world.characters.values():
        if character.folder not in new:
            _write_if_changed(files[character.folder], _character_text(character))


def _snapshot_text(world: World) -> str:
    snapshot = _WorldSnapshot(
        name=world.name,
        next_room_number=world.next_room_number,
        characters=[c.folder for c in world.characters.values()],
        rooms=[_RoomSnapshot(**vars(room)) for room in world.rooms.values()],
        objects=[_ThingSnapshot(**vars(thing)) for thing in world.things.values()],
    )
    where = "\n".join(
        f"#   {_one_line(c.name)} is in {_one_line(world.rooms[c.location].name)}"
        for c in world.characters.values()
    )
    header = f"# mudsim world snapshot (written by mudsim; exits are one-way each).\n# Who is where:\n{where}\n"
    return header + dump_yaml(snapshot.model_dump(mode="json"))


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass  # missing or unreadable: write it
    atomic_write_text(path, text)


def start_room(world: World) -> Room:
    """Where a character whose room is unknown goes: the world's first room."""
    return next(iter(world.rooms.values()))


def warn_on_stderr(message: str) -> None:
    """The default warning: one line on stderr."""
    print(f"mudsim: warning: {message}", file=sys.stderr)


def save_clock(root: Path, clock: WorldClock) -> None:
    """Write ``world/clock.json`` (atomically) when it changed."""
    _write_if_changed(clock_path(root), json.dumps(clock.to_dict(), indent=2) + "\n")


def clock_path(root: Path) -> Path:
    return root / "world" / "clock.json"


def load_clock(root: Path) -> WorldClock | None:
    """The saved world clock, or None when the vault has none (saved before it existed)."""
    path = clock_path(root)
    if not path.exists():
        return None
    try:
        return WorldClock.from_dict(read_json(path))
    except ValueError as exc:  # a ClockError, or a number too long for Python to read
        raise VaultError(f"{path} is not a valid world clock: {exc}") from exc


def load_world(
    root: Path,
    *,
    warn: Callable[[str], None] = warn_on_stderr,
    clock: WorldClock | None = None,
) -> World:
    """The saved world; a character whose room it lacks goes to ``start_room`` (``warn``).
    Its clock is the saved one; a vault without one gets ``clock`` (the world file's),
    else the default clock."""
    path = root / "world" / "world.yaml"
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
        snapshot = _WorldSnapshot.model_validate(data)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise VaultError(f"cannot read {path}: {' '.join(str(exc).split())}") from exc
    except ValidationError as exc:
        raise VaultError(f"{path} is not a valid world snapshot: {_first(exc)}") from exc
    saved = load_clock(root)
    if saved is None and clock is not None:
        saved = replace(clock)
    world = World(snapshot.name, next_room_number=snapshot.next_room_number, clock=saved)
    try:
        for room in snapshot.rooms:
            world.add_room(Room(**room.model_dump()))
        for thing in snapshot.objects:
            world.add_thing(Thing(**thing.model_dump()))
        for folder in snapshot.characters:
            agent_file = root / "agents" / folder / "agent.md"
            character = _load_character(agent_file)
            if character.location not in world.rooms:
                if not world.rooms:
                    raise VaultError(f"{path} has no rooms for {character.name} to stand in")
                start = start_room(world)
                warn(
                    f"{agent_file}: {character.name}'s room {character.location!r} is no "
                    f"room of {path} (a save was cut short?); {character.name} is in the "
                    f"start room, {start.name}, until the next save"
                )
                character.location = start.id
            world.add_character(character)
    except ValueError as exc:
        raise VaultError(f"{path}: {exc}") from exc
    _check_references(world, path)
    return world


def _check_references(world: World, path: Path) -> None:
    for room in world.rooms.values():
        for name, target in room.exits.items():
            if target not in world.rooms:
                raise VaultError(
                    f"{path}: exit {name!r} of {room.id!r} leads to unknown room {target!r}"
                )
    for item in world.things.values():
        if item.location not in world.rooms:
            raise VaultError(f"{path}: {item.name!r} is in unknown room {item.location!r}")


def _character_text(character: Character) -> str:
    """``agent.md``'s text (rendered once per distinct character: a save renders every
    character's file to see what changed, and the YAML dump is most of its time)."""
    return _rendered_character(tuple((name, tuple(value) if isinstance(value, list) else value)
                                     for name, value in vars(character).items()))  # fmt: skip


@functools.lru_cache(maxsize=4096)
def _rendered_character(fields: tuple[tuple[str, Any], ...]) -> str:
    values: dict[str, Any] = {n: list(v) if isinstance(v, tuple) else v for n, v in fields}
    meta: dict[str, Any] = _AgentFile(**values).model_dump(mode="json", exclude_none=True)
    for key in _WRITTEN_WHEN_SET:  # files from before these fields stay as they were
        if meta.get(key) == _AgentFile.model_fields[key].default:
            del meta[key]
    role = Role(values["role"])
    body = (
        f"# {values['name']}\n\n_{values['type']}, role {role.value}; "
        f"mudsim reads the front matter above, this text is for people._\n\n"
        f"## Profile\n\n{values['profile'] or '(none)'}\n\n"
        f"## Description\n\n{values['description'] or '(none)'}\n"
    )
    return dump_front_matter(meta, body)


def _load_character(path: Path) -> Character:
    if not path.exists():
        raise VaultError(f"{path} is missing (the world snapshot lists this character)")
    meta, _body = read_front_matter(path)
    try:
        spec = _AgentFile.model_validate(meta)
    except ValidationError as exc:
        raise VaultError(f"{path}: {_first(exc)}") from exc
    character = Character(**spec.model_dump())
    if character.folder != path.parent.name:
        if legacy_folder_name(character.name) == path.parent.name:  # not moved yet
            raise VaultError(
                f"{path}: {character.name}'s folder is agents/{character.folder} now, and "
                f"it was not moved there (a command that takes the vault, such as `mudsim "
                f"do`, moves it, unless agents/{character.folder} is someone else's)"
            )
        raise VaultError(f"{path}: the name {character.name!r} does not belong in this folder")
    return character


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(step) for step in error["loc"]) or "(top level)"
    return f"{field}: {error['msg']}"


def _one_line(name: str) -> str:
    """A name fit for a YAML comment: every kind of line break (which YAML would end
    the comment at) made a space."""
    return " ".join(name.splitlines())
