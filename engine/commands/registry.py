"""The command registry: every command's metadata, and verb resolution.

Each command declares its key, aliases, category, syntax, help, example, minimum role
and typed arguments; help is generated from them and, later, grammar-constrained
decoding. Resolving a verb is a pure, scored decision: an exact name or alias, else
a unique prefix, else the single nearest name within edit distance 2. Two equally good
candidates are an ambiguity to report, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from rapidfuzz.distance import Levenshtein

from engine.world.model import Role

if TYPE_CHECKING:
    from engine.commands.context import CommandContext
    from engine.commands.result import Result

MAX_EDIT_DISTANCE = 2

CATEGORIES: dict[str, str] = {
    "social": "talking and being seen",
    "movement": "getting around",
    "memory": "thinking, notes and remembering",
    "self": "who you are and how you look",
    "query": "finding out about the world",
    "building": "making rooms and exits (builders)",
    "admin": "running the world (admins)",
}


class ArgKind(StrEnum):
    TEXT = "text"
    EXIT = "exit"
    ROOM = "room"
    CHARACTER = "character"
    THING = "thing"
    """An object or character in the caller's room (or ``here`` / ``me``)."""
    TITLE = "title"
    TOPIC = "topic"
    """A command or category name (help)."""


@dataclass(frozen=True, slots=True)
class Arg:
    name: str
    kind: ArgKind
    optional: bool = False


Handler = Callable[["CommandContext", "Invocation"], "Result"]


@dataclass(frozen=True, slots=True)
class Invocation:
    """What a handler gets besides the context: the arguments and the private reason."""

    args: str
    reason: str | None = None
    verb: str = ""


@dataclass(frozen=True)
class Command:
    key: str
    handler: Handler
    category: str
    syntax: str
    help: str
    example: str
    aliases: tuple[str, ...] = ()
    role: Role = Role.PLAYER
    args: tuple[Arg, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.key, *self.aliases)


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome of resolving a verb: a command, or a reason there is none."""

    command: Command | None
    how: Literal["exact", "prefix", "distance", "none", "ambiguous", "forbidden"]
    candidates: tuple[str, ...] = ()


@dataclass
class Registry:
    commands: dict[str, Command] = field(default_factory=dict)
    _by_name: dict[str, Command] = field(default_factory=dict)

    def add(self, command: Command) -> None:
        if command.category not in CATEGORIES:
            raise ValueError(f"{command.key}: unknown category {command.category!r}")
        taken = [name for name in command.names if name in self._by_name]
        if taken or len(set(command.names)) != len(command.names):
            raise ValueError(
                f"{command.key}: command name {(taken or command.names)[0]!r} is registered twice"
            )
        for name in command.names:
            self._by_name[name] = command
        self.commands[command.key] = command

    def extend(self, commands: Iterable[Command]) -> None:
        for command in commands:
            self.add(command)

    def get(self, name: str) -> Command | None:
        return self._by_name.get(name.lower())

    def allowed(self, role: Role) -> list[Command]:
        return [c for c in self.commands.values() if role.allows(c.role)]

    def resolve(self, verb: str, role: Role) -> Resolution:
        """Find the command ``verb`` means for a caller with ``role``."""
        verb = verb.lower()
        exact = self.get(verb)
        if exact is not None:
            how: Literal["exact", "forbidden"] = "exact" if role.allows(exact.role) else "forbidden"
            return Resolution(exact, how)
        names = {name: c for c in self.allowed(role) for name in c.names}
        prefixed = {c.key: c for name, c in names.items() if name.startswith(verb)}
        if len(prefixed) == 1:
            return Resolution(next(iter(prefixed.values())), "prefix")
        if len(prefixed) > 1:
            return Resolution(None, "ambiguous", tuple(sorted(prefixed)))
        # A correction must keep at least one letter of what was typed ("@d" is not "go").
        limit = min(MAX_EDIT_DISTANCE, len(verb) - 1)
        distances = {name: Levenshtein.distance(verb, name) for name in names}
        best = min(distances.values(), default=limit + 1)
        if best > limit:
            return Resolution(None, "none")
        nearest = {names[name].key: names[name] for name, d in distances.items() if d == best}
        if len(nearest) > 1:
            return Resolution(None, "ambiguous", tuple(sorted(nearest)))
        return Resolution(next(iter(nearest.values())), "distance")


def command(
    bucket: list[Command],
    key: str,
    *,
    category: str,
    syntax: str,
    help: str,
    example: str,
    aliases: tuple[str, ...] = (),
    role: Role = Role.PLAYER,
    args: tuple[Arg, ...] = (),
) -> Callable[[Handler], Handler]:
    """Declare a command: the decorated handler is added to ``bucket`` with its metadata."""

    def register(handler: Handler) -> Handler:
        bucket.append(Command(key, handler, category, syntax, help, example, aliases, role, args))
        return handler

    return register
