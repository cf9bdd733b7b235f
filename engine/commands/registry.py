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
from typing import TYPE_CHECKING, Final, Literal

from rapidfuzz.distance import OSA

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
    MEMORY = "memory"
    """Words of something the caller knows (``recall``): any words for a person; for an
    agent's grammar, the topics of what it knows (its notes' titles, its entries' tags)."""


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
    spends_model_calls: bool = False
    """It starts work for a model (a summary, a knowledge pass, a dream): a served world
    limits who may run it (``config/telnet.md``'s ``model_call_role``)."""
    reads_unrecorded: bool = False
    """Its result reads what no run record holds (the live LLM's queue, the accounts
    file): a replay shows the recorded result instead of running it again."""

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
        if verb in PROSE_WORDS:  # "there ..." is a model writing prose, not "where"
            return Resolution(None, "none")
        names = {name: c for c in self.allowed(role) for name in c.names}
        prefixed = {c.key: c for name, c in names.items() if name.startswith(verb)}
        if len(prefixed) == 1:
            return Resolution(next(iter(prefixed.values())), "prefix")
        if len(prefixed) > 1:
            return Resolution(None, "ambiguous", tuple(sorted(prefixed)))
        limit = correction_limit(verb)
        distances = {name: OSA.distance(verb, name) for name in names}
        best = min(distances.values(), default=limit + 1)
        if best > limit:
            return Resolution(None, "none")
        nearest = {names[name].key: names[name] for name, d in distances.items() if d == best}
        if len(nearest) > 1:
            return Resolution(None, "ambiguous", tuple(sorted(nearest)))
        return Resolution(next(iter(nearest.values())), "distance")


# fmt: off
PROSE_WORDS: Final = frozenset((
    "a", "an", "the", "i", "i'm", "im", "me", "my", "mine", "you", "you're", "your",
    "yours", "he", "him", "his", "she", "her", "it", "its", "it's", "we", "us", "our",
    "they", "them", "their", "this", "that", "these", "those", "there", "here", "no",
    "not", "yes", "yeah", "ok", "okay", "and", "but", "or", "so", "if", "then", "than",
    "when", "why", "how", "what", "what's", "who's", "whose", "which", "while", "is",
    "are", "was", "were", "be", "been", "am", "do", "does", "did", "done", "have", "has",
    "had", "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "let", "let's", "hello", "hi", "hey", "welcome", "thanks", "thank", "please", "sorry",
    "oh", "well", "now", "just", "very", "all", "some", "any", "one", "two",
))
# fmt: on
"""Ordinary words a model writes when it answers in prose ("There is...", "No one...",
"Welcome to..."). They run when they are a command's name ("who", "where") but are
never corrected into one: the replies in tests/commands/test_autocorrect.py, taken
from the embedded model, show "there" taken as "where" and "no" as "note" otherwise."""


def correction_limit(word: str) -> int:
    """How many edits (a swap of two neighbours counts as one) a mistyped verb may be
    from the verb it is taken for: one for a word of up to four letters, two for a
    longer one, and never all of it. A short word is seldom a typo of a different short
    word: "you" (a model writing prose) is not "go", "lok" is "look"."""
    return min(MAX_EDIT_DISTANCE if len(word) > 4 else 1, len(word) - 1)


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
    spends_model_calls: bool = False,
    reads_unrecorded: bool = False,
) -> Callable[[Handler], Handler]:
    """Declare a command: the decorated handler is added to ``bucket`` with its metadata."""

    def register(handler: Handler) -> Handler:
        bucket.append(Command(key, handler, category, syntax, help, example, aliases, role, args,
                              spends_model_calls, reads_unrecorded))  # fmt: skip
        return handler

    return register
