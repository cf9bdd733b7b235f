"""The command lines an agent may send from where it stands, as a grammar (pure, no I/O).

Built from the command registry and the agent's room: ``go`` takes only the room's real
exits, ``examine`` only what is here, ``say`` any text; commands whose required argument
has nothing to name here (``go`` in a room without exits) are left out, and so are the
out-of-character ``@`` commands. One shape, three forms:

- ``gbnf``: a llama.cpp grammar, so the embedded model can only write a valid command;
- ``json_schema``: ``{"command": "..."}`` with the same language as a regex ``pattern``,
  for Ollama's ``format`` (``constrain: true`` in a profile);
- ``regex``: the same language for Python, to check a line (and to count how often an
  unconstrained model writes something that is not a command).

A line may end in ``" | reason"``, the private reason the command parser splits off.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.commands.registry import ArgKind, Command

WORDS_MAX = 12
"""Words of free text a command may carry, single-spaced; a reason carries half as many.
The language is finite, so a constrained model always finishes its line."""
WORD_MAX = 16
_UNSAYABLE = frozenset("\n|")
"""A name holding these cannot be written on one command line."""

Free = Literal["text", "title"]

_WORD = f"[^\\n| ]{{1,{WORD_MAX}}}"
_TITLE_WORD = "[A-Za-z0-9']{1,16}"


def _gbnf_words(word: str, most: int) -> str:
    return f'{word} ( " " {word} ){{0,{most - 1}}}'


def _regex_words(word: str, most: int) -> str:
    return f"{word}( {word}){{0,{most - 1}}}"


# Free-text classes, written once for GBNF and once for regular expressions.
_GBNF_RULES = {
    "text": _gbnf_words(_WORD, WORDS_MAX),
    "title": _gbnf_words(_TITLE_WORD, 4),
    "reason": _gbnf_words(_WORD, WORDS_MAX // 2),
}
_REGEX_RULES = {
    "text": _regex_words(_WORD, WORDS_MAX),
    "title": _regex_words(_TITLE_WORD, 4),
    "reason": _regex_words(_WORD, WORDS_MAX // 2),
}


@dataclass(frozen=True, slots=True)
class RoomView:
    """What an agent can name from where it stands."""

    exits: Sequence[str] = ()
    things: Sequence[str] = ()
    """Objects and other characters here."""
    rooms: Sequence[str] = ()
    topics: Sequence[str] = ()
    """Command and category names (for ``help``)."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One argument: a choice among names, or free text; ``lead`` comes before it."""

    choices: tuple[str, ...] | None
    free: Free = "text"
    optional: bool = False
    lead: str = " "


@dataclass(frozen=True, slots=True)
class Shape:
    verb: str
    slots: tuple[Slot, ...] = ()


def command_shapes(commands: Iterable[Command], view: RoomView) -> tuple[Shape, ...]:
    """The shape of each command an agent can use here, in registry order."""
    shapes = []
    for command in commands:
        if command.key.startswith("@"):
            continue
        slots = []
        for index, arg in enumerate(command.args):
            after_title = index > 0 and command.args[index - 1].kind is ArgKind.TITLE
            slot = _slot(arg.kind, view, arg.optional, " -> " if after_title else " ")
            if slot is None and not arg.optional:
                break
            if slot is not None:
                slots.append(slot)
        else:
            shapes.append(Shape(command.key, tuple(slots)))
    return tuple(shapes)


def _slot(kind: ArgKind, view: RoomView, optional: bool, lead: str) -> Slot | None:
    """None when the argument has nothing it could name here."""
    if kind is ArgKind.TEXT:
        return Slot(None, "text", optional, lead)
    if kind is ArgKind.TITLE:
        return Slot(None, "title", optional, lead)
    names = {
        ArgKind.EXIT: view.exits,
        ArgKind.THING: view.things,
        ArgKind.CHARACTER: view.things,
        ArgKind.ROOM: view.rooms,
        ArgKind.TOPIC: view.topics,
    }[kind]
    choices = tuple(dict.fromkeys(n for n in names if n and not _UNSAYABLE & set(n)))
    return Slot(choices, optional=optional, lead=lead) if choices else None


def help_topics(commands: Iterable[Command]) -> tuple[str, ...]:
    """What ``help`` may be asked about: the in-character commands and their categories."""
    usable = [c for c in commands if not c.key.startswith("@")]
    return (*(c.key for c in usable), *dict.fromkeys(c.category for c in usable))


@dataclass(frozen=True)
class CommandGrammar:
    shapes: tuple[Shape, ...]

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(shape.verb for shape in self.shapes)

    def gbnf(self) -> str:
        alternatives = " | ".join(_gbnf_shape(shape) for shape in self.shapes)
        lines = [
            'root ::= command ( " | " reason )?',
            f"command ::= {alternatives}",
            *(f"{name} ::= {rule}" for name, rule in _GBNF_RULES.items()),
        ]
        return "\n".join(lines) + "\n"

    def regex(self) -> str:
        """The language as a regular expression (plain groups only, so llama.cpp's
        schema converter reads it too); match it against a whole line."""
        alternatives = "|".join(_regex_shape(shape) for shape in self.shapes)
        return f"({alternatives})( \\| {_REGEX_RULES['reason']})?"

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"command": {"type": "string", "pattern": f"^{self.regex()}$"}},
            "required": ["command"],
        }

    def accepts(self, line: str) -> bool:
        return re.fullmatch(self.regex(), line) is not None


def _gbnf_literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # GBNF literals escape like JSON strings


def _gbnf_shape(shape: Shape) -> str:
    parts = [_gbnf_literal(shape.verb)]
    for slot in shape.slots:
        value = (
            "( " + " | ".join(_gbnf_literal(c) for c in slot.choices) + " )"
            if slot.choices is not None
            else slot.free
        )
        part = f"{_gbnf_literal(slot.lead)} {value}"
        parts.append(f"( {part} )?" if slot.optional else part)
    return "( " + " ".join(parts) + " )"


def _regex_literal(text: str) -> str:
    """Backslashes before regex metacharacters only (``re.escape`` also escapes spaces,
    which not every schema-to-grammar converter reads)."""
    return "".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in text)


_REGEX_SPECIAL = frozenset("\\.^$*+?{}[]()|-/")


def _regex_shape(shape: Shape) -> str:
    parts = [_regex_literal(shape.verb)]
    for slot in shape.slots:
        value = (
            "(" + "|".join(_regex_literal(c) for c in slot.choices) + ")"
            if slot.choices is not None
            else _REGEX_RULES[slot.free]
        )
        part = _regex_literal(slot.lead) + value
        parts.append(f"({part})?" if slot.optional else part)
    return "".join(parts)
