"""Example turns for the prompt, written by the engine for the agent's room (pure).

Base models copy a pattern better than they follow an instruction, so the prompt shows
a few good moves that fit where the agent stands: a word to someone here, a look at a
thing, a way out, a gesture. They rotate with the turn and skip the agent's recent
commands, so copying one is still a new, valid move.

When someone else is here, two of the three are short, plain sentences addressed to
them by name (one first, one last), so a small model's most likely move is to speak,
and to speak the way people do: no headings, brackets or prompt labels in them, only
words (``engine.agents.speech_check`` holds speech to that).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.agents.reply import repeat_key

EXAMPLES = 3

_GREETINGS = (
    "say Hello, {name}. How are you today?",
    "say {name}, what are you doing?",
    "say It is good to see you, {name}.",
    "say {name}, shall we talk for a while?",
    "say Tell me about your day, {name}.",
    "say What a lovely morning, {name}.",
    "say {name}, what are you thinking about?",
)
_ABOUT = (
    "say {name}, have you seen {thing}?",
    "say Look at {thing}, {name}.",
    "say {name}, do you like {room}?",
    "say I am glad to be in {room}, {name}.",
    "say {name}, what do you think of {thing}?",
    "say Do you know {room} well, {name}?",
)
_ALONE = (
    "emote looks around {room}.",
    "emote hums a quiet tune.",
    "emote stretches and yawns.",
    "emote listens for a while.",
)


@dataclass(frozen=True, slots=True)
class Situation:
    room: str
    exits: Sequence[str]
    things: Sequence[str]
    people: Sequence[str]
    avoid: frozenset[str] = frozenset()
    """Repeat keys of the agent's recent commands."""


def _pick(options: Sequence[str], turn: int, avoid: frozenset[str], **fields: str) -> str | None:
    """The option after ``turn`` steps of rotation that is not to be avoided; each option
    is a template filled with ``fields`` (only those looked at are filled)."""
    for step in range(len(options)):
        option = options[(turn + step) % len(options)]
        if fields:
            option = option.format(**fields)
        if repeat_key(option) not in avoid:
            return option
    return None


def _definite(name: str) -> str:
    """``a copper kettle`` -> ``the copper kettle``: what one says of a thing in sight."""
    article, _, rest = name.partition(" ")
    return f"the {rest}" if article.lower() in ("a", "an", "some") and rest else name


def example_turns(situation: Situation, turn: int) -> list[str]:
    """Up to ``EXAMPLES`` command lines that would be good moves now, varied by ``turn``."""
    s = situation
    room = "the " + s.room[4:] if s.room.startswith("The ") else s.room
    candidates: list[str | None] = []
    if s.things:
        candidates.append(_pick([f"examine {t}" for t in s.things], turn, s.avoid))
    if s.exits:
        candidates.append(_pick([f"go {e}" for e in s.exits], turn, s.avoid))
    candidates.append(_pick(_ALONE, turn, s.avoid, room=room))
    lines = [line for line in candidates if line]
    shift = turn % len(lines) if lines else 0
    lines = lines[shift:] + lines[:shift]
    if not s.people:
        return lines[:EXAMPLES]
    person = s.people[turn % len(s.people)]
    thing = _definite(s.things[turn % len(s.things)]) if s.things else room
    first = _pick(_GREETINGS, turn, s.avoid, name=person)
    last = _pick(_ABOUT, turn, s.avoid, name=person, thing=thing, room=room)
    speech = [line for line in (first, last) if line]
    return (speech[:1] + lines[: EXAMPLES - len(speech)] + speech[1:])[:EXAMPLES]
