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

A line may end in ``" | reason"``, the private reason the command parser splits off
(``CommandGrammar(reason=False)`` leaves it out: a weak model fills it with junk).

Free text is words of letters (Latin, Greek, Cyrillic, CJK, kana, Hangul) with a
trailing mark at most: no digits, no quotes, no ``~`` or ``>``, so a small model can
neither write digit strings nor copy the transcript's markup (``~Ash>``, ``## ...``,
``[topic]``, ``<exit>``). Speech (``say``, ``emote``) is words of Latin letters only: the
world speaks English, and a small model drifts into other scripts (``эта острона``)
when it may. A room view
can also hold what this agent should not do now (``avoid``: its recent commands, which
leave the grammar when they are names to choose, ``rest``: verbs on a cool-down) and
``title_words``: the words a note title is made of (the situation's own words).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from engine.agents.reply import repeat_key
from engine.commands.registry import ArgKind, Command

WORDS_MAX = 10
"""Words of free text a command may carry, single-spaced; a reason carries half as many.
The language is finite, so a constrained model always finishes its line."""
WORD_MAX = 15
TITLE_WORDS_MAX = 2
_UNSAYABLE = frozenset("\n|")
"""A name holding these cannot be written on one command line."""

Free = Literal["text", "title", "speech"]
SPEECH_VERBS = frozenset({"say", "emote"})
"""Commands whose text is speech (``Free`` ``speech``)."""

_LETTERS = "A-Za-zÀ-ÖØ-öø-ɏͰ-ϿЀ-ӿ぀-ヿ一-鿿가-힯"
_LATIN = "A-Za-zÀ-ÖØ-öø-ÿ"
_WORD = f"[{_LETTERS}][{_LETTERS}'’]{{0,{WORD_MAX - 2}}}[.,!?]?"
_SPOKEN = f"[{_LATIN}][{_LATIN}'’]{{0,{WORD_MAX - 2}}}[.,!?]?"
_TITLE_WORD = f"[{_LETTERS}][{_LETTERS}'’]{{0,{WORD_MAX - 1}}}"


def _gbnf_words(word: str, most: int) -> str:
    return f'{word} ( " " {word} ){{0,{most - 1}}}'


def _regex_words(word: str, most: int) -> str:
    return f"{word}( {word}){{0,{most - 1}}}"


# Free-text classes, written once for GBNF and once for regular expressions.
_GBNF_RULES = {
    "text": _gbnf_words(_WORD, WORDS_MAX),
    "speech": _gbnf_words(_SPOKEN, WORDS_MAX),
    "title": _gbnf_words(_TITLE_WORD, TITLE_WORDS_MAX),
    "reason": _gbnf_words(_WORD, WORDS_MAX // 2),
}
_REGEX_RULES = {
    "text": _regex_words(_WORD, WORDS_MAX),
    "speech": _regex_words(_SPOKEN, WORDS_MAX),
    "title": _regex_words(_TITLE_WORD, TITLE_WORDS_MAX),
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
    avoid: frozenset[str] = frozenset()
    """Repeat keys (``engine.agents.reply.repeat_key``) of commands not to offer again:
    a choice that would repeat one is left out, and so is a bare verb."""
    rest: frozenset[str] = frozenset()
    """Verbs left out this time (a cool-down)."""
    title_words: Sequence[str] = ()
    """When given, a note title is one or two of these words, not any words."""
    memories: Sequence[str] = ()
    """What ``recall`` may ask about (the topics of what the agent knows); none: free text."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One argument: a choice among names, or free text; ``lead`` comes before it."""

    choices: tuple[str, ...] | None
    free: Free = "text"
    optional: bool = False
    lead: str = " "
    words: tuple[str, ...] | None = None
    """For a title: the words it may be made of (None: any words)."""


@dataclass(frozen=True, slots=True)
class Shape:
    verb: str
    slots: tuple[Slot, ...] = ()


def command_shapes(commands: Iterable[Command], view: RoomView) -> tuple[Shape, ...]:
    """The shape of each command an agent can use here, in registry order."""
    shapes = []
    for command in commands:
        if command.key.startswith("@") or command.key in view.rest:
            continue
        slots = []
        for index, arg in enumerate(command.args):
            after_title = index > 0 and command.args[index - 1].kind is ArgKind.TITLE
            slot = _slot(arg.kind, view, arg.optional, " -> " if after_title else " ")
            if slot is not None and slot.free == "text" and command.key in SPEECH_VERBS:
                slot = Slot(slot.choices, "speech", slot.optional, slot.lead, slot.words)
            if slot is None and not arg.optional:
                break
            if slot is not None:
                slots.append(slot)
        else:
            shape = _avoiding(Shape(command.key, tuple(slots)), view.avoid)
            if shape is not None:
                shapes.append(shape)
    return tuple(shapes)


def _avoiding(shape: Shape, avoid: frozenset[str]) -> Shape | None:
    """``shape`` without the lines in ``avoid`` that it spells out as names to choose
    (a bare verb, or a verb and one choice); None when nothing is left."""
    if not avoid:
        return shape
    bare = all(slot.optional for slot in shape.slots)
    if len(shape.slots) > 1 or (shape.slots and shape.slots[0].choices is None):
        return shape if not bare or repeat_key(shape.verb) not in avoid else None
    if not shape.slots:
        return None if repeat_key(shape.verb) in avoid else shape
    slot = shape.slots[0]
    assert slot.choices is not None
    kept = tuple(c for c in slot.choices if repeat_key(f"{shape.verb} {c}") not in avoid)
    keep_bare = slot.optional and repeat_key(shape.verb) not in avoid
    if not kept:
        return Shape(shape.verb) if keep_bare else None
    return Shape(shape.verb, (Slot(kept, slot.free, keep_bare, slot.lead),))


def _slot(kind: ArgKind, view: RoomView, optional: bool, lead: str) -> Slot | None:
    """None when the argument has nothing it could name here."""
    if kind is ArgKind.TEXT or (kind is ArgKind.MEMORY and not view.memories):
        return Slot(None, "text", optional, lead)
    if kind is ArgKind.TITLE:
        words = tuple(dict.fromkeys(w for w in view.title_words if w and " " not in w))
        return Slot(None, "title", optional, lead, words or None)
    names = {
        ArgKind.EXIT: view.exits,
        ArgKind.THING: view.things,
        ArgKind.CHARACTER: view.things,
        ArgKind.ROOM: view.rooms,
        ArgKind.TOPIC: view.topics,
        ArgKind.MEMORY: view.memories,
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
    reason: bool = True
    """Whether a line may end in ``" | reason"``."""

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(shape.verb for shape in self.shapes)

    def gbnf(self) -> str:
        alternatives = " | ".join(_gbnf_shape(shape) for shape in self.shapes)
        root = 'root ::= command ( " | " reason )?' if self.reason else "root ::= command"
        lines = [
            root,
            f"command ::= {alternatives}",
            *(f"{name} ::= {rule}" for name, rule in _GBNF_RULES.items()),
        ]
        return "\n".join(lines) + "\n"

    def regex(self) -> str:
        """The language as a regular expression (plain groups only, so llama.cpp's
        schema converter reads it too); match it against a whole line."""
        alternatives = "|".join(_regex_shape(shape) for shape in self.shapes)
        reason = f"( \\| {_REGEX_RULES['reason']})?" if self.reason else ""
        return f"({alternatives}){reason}"

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
        if slot.choices is not None:
            value = "( " + " | ".join(_gbnf_literal(c) for c in slot.choices) + " )"
        elif slot.words is not None:
            word = "( " + " | ".join(_gbnf_literal(w) for w in slot.words) + " )"
            value = f"( {_gbnf_words(word, TITLE_WORDS_MAX)} )"
        else:
            value = slot.free
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
        if slot.choices is not None:
            value = "(" + "|".join(_regex_literal(c) for c in slot.choices) + ")"
        elif slot.words is not None:
            word = "(" + "|".join(_regex_literal(w) for w in slot.words) + ")"
            value = _regex_words(word, TITLE_WORDS_MAX)
        else:
            value = _REGEX_RULES[slot.free]
        part = _regex_literal(slot.lead) + value
        parts.append(f"({part})?" if slot.optional else part)
    return "".join(parts)
