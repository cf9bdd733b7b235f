"""Example turns for the prompt, written by the engine for the agent's room (pure).

Base models copy a pattern better than they follow an instruction, so the prompt shows
a few good moves that fit where the agent stands: a word to someone here, a look at a
thing, a way out, a gesture. They rotate with the turn and skip the agent's recent
commands, so copying one is still a new, valid move.
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


def _pick(options: Sequence[str], turn: int, avoid: frozenset[str]) -> str | None:
    """The option after ``turn`` steps of rotation that is not to be avoided."""
    for step in range(len(options)):
        option = options[(turn + step) % len(options)]
        if repeat_key(option) not in avoid:
            return option
    return None


def example_turns(situation: Situation, turn: int) -> list[str]:
    """Up to ``EXAMPLES`` command lines that would be good moves now, varied by ``turn``."""
    s = situation
    candidates: list[str | None] = []
    if s.people:
        person = s.people[turn % len(s.people)]
        greetings = [g.format(name=person) for g in _GREETINGS]
        candidates.append(_pick(greetings, turn, s.avoid))
    if s.things:
        candidates.append(_pick([f"examine {t}" for t in s.things], turn, s.avoid))
    if s.exits:
        candidates.append(_pick([f"go {e}" for e in s.exits], turn, s.avoid))
    room = "the " + s.room[4:] if s.room.startswith("The ") else s.room
    candidates.append(_pick([a.format(room=room) for a in _ALONE], turn, s.avoid))
    lines = [line for line in candidates if line]
    shift = turn % len(lines) if lines else 0
    return (lines[shift:] + lines[:shift])[:EXAMPLES]
