"""Reading a world file into a ``World``, with errors that name the file, line and field.

PyYAML drops positions when it builds Python data, so the file is first composed into
a node tree; an error's path (``rooms[1].id``) is walked through that tree to find the
line. Nothing is built unless the whole file is valid.

A world file may come from anywhere, so it is read by ``engine.world.safe_yaml``'s
loader and its node tree is measured before anything is built from it: deep nesting,
aliases that expand too far (a "billion laughs" file) and an alias inside the value it
names are refused with their line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from engine.errors import UnsafeNameError, WorldFileError
from engine.world.clock import WorldClock
from engine.world.model import Character, Room, Thing
from engine.world.safe_yaml import MAX_DEPTH, DepthLimitedLoader, YAMLLimitError, measure
from engine.world.schema import WorldSpec
from engine.world.world import LinkConflict, World

Loc = Sequence[str | int]


def load_world_file(path: Path) -> World:
    """Parse, validate and build the world in ``path``; raise ``WorldFileError``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorldFileError(f"cannot read world file {path}: {exc}") from exc
    return parse_world(text, source=str(path))


def parse_world(text: str, *, source: str) -> World:
    root, data = read_yaml(text, source)
    if not isinstance(data, dict):
        raise WorldFileError(
            f"{source}, line 1: a world file must be a mapping with name and rooms"
        )
    try:
        spec = WorldSpec.model_validate(data)
    except ValidationError as exc:
        raise WorldFileError(validation_problem(source, root, exc)) from exc
    return _Builder(spec, source, root).build()


def read_yaml(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    """The node tree and the data of ``text``; every problem is a ``WorldFileError``."""
    loader: DepthLimitedLoader | None = None
    try:
        loader = DepthLimitedLoader(text)
        root = loader.get_single_node()
        if root is None:
            return None, None
        measure(root)
        repeated = _repeated_key(root, ())  # before building: merge keys (<<) edit the tree
        if repeated is not None:
            loc, line = repeated
            raise WorldFileError(f"{source}, line {line}, {_dotted(loc)}: this key is given twice")
        return root, loader.construct_document(root)
    except YAMLLimitError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise WorldFileError(f"{source}, line {line}: {exc.problem}") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        problem = " ".join(str(exc.problem or exc.context).split())
        raise WorldFileError(f"{source}, line {line}: YAML syntax error: {problem}") from exc
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise WorldFileError(
            f"{source}, line {line}: YAML does not allow the character "
            f"U+{exc.character if isinstance(exc.character, int) else ord(exc.character):04X}"
        ) from exc
    except yaml.YAMLError as exc:
        raise WorldFileError(f"{source}: YAML error: {' '.join(str(exc).split())}") from exc
    except RecursionError as exc:
        line = loader.line + 1 if loader is not None else 1
        raise WorldFileError(
            f"{source}, line {line}: nested more than {MAX_DEPTH} levels deep"  # a guard missed
        ) from exc
    finally:
        if loader is not None:
            loader.dispose()


class _Builder:
    """Turns a valid ``WorldSpec`` into a ``World``, checking what pydantic cannot:
    ids unique, exits and locations pointing at rooms, folder names not colliding."""

    def __init__(self, spec: WorldSpec, source: str, root: yaml.Node | None) -> None:
        self.spec, self.source, self.root = spec, source, root
        clock = WorldClock.starting(spec.clock.start, spec.clock.minutes_per_round)
        self.world = World(spec.name, clock=clock)
        self.first_use: dict[str, Loc] = {}

    def fail(self, loc: Loc, message: str) -> WorldFileError:
        return WorldFileError(f"{where(self.source, self.root, loc)}: {message}")

    def claim(self, entity_id: str, loc: Loc) -> None:
        if entity_id in self.first_use:
            line = _line(self.root, self.first_use[entity_id])
            raise self.fail(loc, f"duplicate id {entity_id!r} (first used at line {line})")
        self.first_use[entity_id] = loc

    def build(self) -> World:
        spec, world = self.spec, self.world
        for i, room in enumerate(spec.rooms):
            self.claim(room.id, ("rooms", i, "id"))
            world.add_room(Room(room.id, room.name, room.description, {}, list(room.aliases)))
        for i, obj in enumerate(spec.objects):
            self.claim(obj.id, ("objects", i, "id"))
            self.check_room(obj.location, ("objects", i, "location"))
            world.add_thing(
                Thing(obj.id, obj.name, obj.location, obj.description, list(obj.aliases))
            )
        self.build_exits()
        self.build_characters()
        return world

    def check_room(self, room_id: str, loc: Loc) -> None:
        if room_id not in self.world.rooms:
            raise self.fail(loc, f"there is no room with id {room_id!r}")

    def build_exits(self) -> None:
        two_way: list[tuple[str, str, str, Loc]] = []
        for i, room in enumerate(self.spec.rooms):
            seen: set[str] = set()
            for raw_name, exit_spec in room.exits.items():
                loc: Loc = ("rooms", i, "exits", raw_name)
                name = " ".join(raw_name.lower().split())
                if name in seen:
                    raise self.fail(loc, f"exit {name!r} is declared twice in room {room.id!r}")
                seen.add(name)
                self.check_room(exit_spec.to, loc)
                self.world.rooms[room.id].exits[name] = exit_spec.to
                if not exit_spec.one_way:
                    two_way.append((room.id, name, exit_spec.to, loc))
        for source, name, target, loc in two_way:
            try:
                back = self.world.way_back_needed(source, name, target)
            except LinkConflict as exc:
                raise self.fail(
                    loc, f"{exc}; declare the way back or mark this exit one_way"
                ) from exc
            if back is not None:
                self.world.rooms[target].exits[back] = source

    def build_characters(self) -> None:
        folders: dict[str, str] = {}
        for i, char in enumerate(self.spec.characters):
            loc: Loc = ("characters", i)
            if char.type == "agent" and not char.profile.strip():
                raise self.fail(
                    loc, f"agent {char.name!r} needs a profile (who they are, in a sentence)"
                )
            character = Character(
                id=char.id or "",
                name=char.name.strip(),
                type=char.type,
                location=char.location,
                profile=char.profile,
                description=char.description,
                role=char.role,
                aliases=list(char.aliases),
                think_interval=char.think_interval,
                immediate_window=char.immediate_window,
                recent_window=char.recent_window,
                model=char.model,
                occupation=char.occupation.strip(),
                goal=char.goal.strip(),
                tags=[tag.strip() for tag in char.tags if tag.strip()],
                prioritize_recent=char.prioritize_recent,
            )
            try:
                folder = character.folder
            except UnsafeNameError as exc:
                raise self.fail((*loc, "name"), str(exc)) from exc
            if folder.lower() in folders:
                raise self.fail(
                    (*loc, "name"),
                    f"{char.name!r} and {folders[folder.lower()]!r} would share the vault folder "
                    f"{folder!r}; rename one",
                )
            folders[folder.lower()] = char.name
            character.id = char.id or folder.lower()
            self.claim(character.id, (*loc, "id") if char.id else (*loc, "name"))
            self.check_room(char.location, (*loc, "location"))
            self.world.add_character(character)


def _repeated_key(node: yaml.Node | None, loc: tuple[str | int, ...]) -> tuple[Loc, int] | None:
    """The first key given twice in one mapping (PyYAML silently keeps the last)."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = str(key.value)
            if name in seen:
                return (*loc, name), key.start_mark.line + 1
            seen.add(name)
            found = _repeated_key(value, (*loc, name))
            if found is not None:
                return found
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found = _repeated_key(item, (*loc, index))
            if found is not None:
                return found
    return None


def validation_problem(source: str, root: yaml.Node | None, exc: ValidationError) -> str:
    """A validation failure of a YAML file as one line: the first problem's place (file,
    line, key path) and words, and how many more there are."""
    problems = exc.errors()
    first = problems[0]
    more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
    return f"{where(source, root, first['loc'])}: {error_message(first)}{more}"


def error_message(error: Any) -> str:
    kind, loc = error["type"], error["loc"]
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r} (check its spelling)"
    if kind == "value_error" and "error" in error.get("ctx", {}):
        return str(error["ctx"]["error"])  # our own validator's words, without "Value error, "
    if kind == "model_type":
        return "must be a mapping (key: value pairs)"
    if kind == "missing":
        return f"missing required field {loc[-1]!r}"
    if kind == "string_pattern_mismatch":
        if "A-Za-z0-9" in str(error.get("ctx", {}).get("pattern", "")):
            return "an id may only use letters, digits, '_' and '-'"
        return "a name cannot contain control characters, line separators or bidi overrides"
    return str(error["msg"])


def where(source: str, root: yaml.Node | None, loc: Loc) -> str:
    return f"{source}, line {_line(root, loc)}, {_dotted(loc)}"


def _dotted(loc: Loc) -> str:
    text = ""
    for step in loc:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text or "(top level)"


def _line(root: yaml.Node | None, loc: Loc) -> int:
    """1-based line of the deepest node along ``loc`` (a key's own line for its last step)."""
    node: Any = root
    line = node.start_mark.line + 1 if node is not None else 1
    for step in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if str(k.value) == str(step)), None)
            if pair is None:
                return line
            line = pair[0].start_mark.line + 1
            node = pair[1]
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value)
        ):
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            return line
    return line
