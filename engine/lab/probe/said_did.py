"""Said vs did (Project Sid's consistency check), from the journals alone (pure).

An *intention* is something an agent said (``say``) or thought (``think``) it would do
next, in one of a few phrasings (case-insensitive, ``'`` or ``’``):

- an opener, then one or more actions joined by ``and``/``then``/``, then``:
  ``I'll`` / ``I will`` / ``I shall`` / ``I'm going to`` / ``I am going to`` /
  ``I'm gonna`` / ``let me`` / ``let's`` / ``I want to`` / ``I need to``;
- ``I'm going`` / ``I am heading`` / ``I'm walking`` / ``I'm off`` + a direction or
  ``to <place>`` (a move) or ``to <action>``.

Actions (all the probe counts; anything else is not nameable and is ignored):

- **go**: ``go`` / ``head`` / ``walk`` / ``return`` / ``move`` + a compass direction
  (``north``, ``n``, ``up``) or ``to``/``into``/``towards``/``back to``/``over to`` +
  a place (``go to the library``). Kept by a successful move whose result line
  (``You go north to The Library.``, or ``(You have arrived at The Library.)``, or a
  ``@teleport`` there) contains every word of the target;
- **examine**: ``examine`` / ``inspect`` / ``check`` / ``study`` / ``read`` /
  ``look at`` / ``have a look at`` + a thing (not a pronoun). Kept by a successful
  ``examine``/``look`` of it: the target's words and the command's words, one within
  the other, or the target's words within the name the result shows;
- **look**: ``look around``. Kept by a successful bare ``look``.

Targets lose their articles and stop at ``,``/``to see``/``for``/``because``/``so``/
``before``/``with``. An intention is kept when one of the agent's next ``horizon`` own
commands (any command it gave, failed ones count as turns) does it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from engine.commands.parser import parse_line
from engine.lab.probe.perception import first_line
from engine.memory.record import MemoryRecord
from engine.world.model import ABBREVIATIONS, COMPASS

Action = Literal["go", "examine", "look"]

_OPENER = re.compile(
    r"\b(?:i'll|i will|i shall|i'm going to|i am going to|i'm gonna|let me|let's|"
    r"i want to|i need to)\s+"
)
_GOING = re.compile(r"\b(?:i'm|i am)\s+(?:going|heading|walking|off)\s+")
_GO = re.compile(r"(?:go|head|walk|return|move)(?:\s+back)?\s+(?P<rest>.*)")
_PLACE = re.compile(r"(?:back to|over to|to|into|towards|toward)\s+(?P<place>.*)")
_EXAMINE = re.compile(
    r"(?:examine|inspect|check|study|read|look at|have a look at|take a look at)\s+"
    r"(?P<thing>.*)"
)
_LOOK = re.compile(r"look around\b")
_VERB = re.compile(
    r"(?:go|head|walk|return|move|examine|inspect|check|study|read|look|have|take)\b"
)
_JOIN = re.compile(r"\s*,?\s+(?:and\s+then|then|and)\s+")
_STOP = re.compile(r",|[.!?;:]|\s(?:to see|for|because|so|before|with|and|then)\s")
_ARTICLES = {"the", "a", "an", "my", "that", "this", "some"}
_PRONOUNS = {"it", "that", "this", "them", "those", "these", "everything", "something", "around"}
_MAX_WORDS = 5
_EXAMINING = {"examine", "ex", "look", "l"}
_TELEPORT = {"@teleport", "@tp"}


@dataclass(frozen=True, slots=True)
class Intention:
    seq: int
    """The memory of the ``say``/``think`` that voiced it."""
    action: Action
    target: str
    """The place or thing (words, no articles); empty for ``look``."""
    kept_by: int | None
    """The seq of the command that did it, or None: not within the horizon."""


@dataclass(frozen=True, slots=True)
class SaidDid:
    agent: str
    intentions: tuple[Intention, ...]
    found: int
    kept: int
    rate: float | None
    """kept / found; None when nothing was found."""


def said_vs_did(
    journals: Mapping[str, Sequence[MemoryRecord]], *, horizon: int = 5
) -> dict[str, SaidDid]:
    """Each agent's intentions and whether it kept them within its next ``horizon`` own
    commands; ``journals`` by agent name, oldest first."""
    report: dict[str, SaidDid] = {}
    for agent, records in journals.items():
        own = [i for i, r in enumerate(records) if r.command]
        found: list[Intention] = []
        for n, index in enumerate(own):
            record = records[index]
            for action, target in intentions(record):
                window = [records[i] for i in own[n + 1 : n + 1 + horizon]]
                kept = next((r.seq for r in window if _does(r, action, target)), None)
                found.append(Intention(record.seq, action, target, kept))
        kept_count = sum(1 for i in found if i.kept_by is not None)
        rate = kept_count / len(found) if found else None
        report[agent] = SaidDid(agent, tuple(found), len(found), kept_count, rate)
    return report


def intentions(record: MemoryRecord) -> list[tuple[Action, str]]:
    """The intentions a ``say``/``think`` memory voices (none for anything else)."""
    if record.failed or not record.command:
        return []
    parsed = parse_line(record.command)
    if parsed is None or parsed.verb not in ("say", "think"):
        return []
    return utterance_intentions(parsed.args)


def utterance_intentions(text: str) -> list[tuple[Action, str]]:
    """``"I'll examine the ledger and then go north."`` -> examine ledger, go north."""
    text = " ".join(text.replace("’", "'").casefold().split())
    found: list[tuple[Action, str]] = []
    for match in _OPENER.finditer(text):
        found += _actions(text[match.end() :])
    for match in _GOING.finditer(text):
        rest = text[match.end() :]
        if rest.startswith("to ") and _VERB.match(rest[3:]):
            continue  # "I'm going to examine ...": the opener found it
        target = _go_target(rest)
        if target:
            found.append(("go", target))
    return list(dict.fromkeys(found))


def _actions(text: str) -> list[tuple[Action, str]]:
    out: list[tuple[Action, str]] = []
    for piece in _JOIN.split(text):
        action = _action(piece)
        if action is None:
            break
        out.append(action)
    return out


def _action(text: str) -> tuple[Action, str] | None:
    if _LOOK.match(text):
        return ("look", "")
    go = _GO.match(text)
    if go:
        target = _go_target(go["rest"])
        return ("go", target) if target else None
    examine = _EXAMINE.match(text)
    if examine:
        thing = _phrase(examine["thing"])
        return ("examine", thing) if thing and thing not in _PRONOUNS else None
    return None


def _go_target(text: str) -> str:
    """A direction, or the place after ``to``/``into``/...; empty: neither."""
    head = text.split(" ", 1)[0].strip(".,!?;:")
    word = ABBREVIATIONS.get(head, head)
    if word in COMPASS:
        return word
    place = _PLACE.match(text)
    return _phrase(place["place"]) if place else ""


def _phrase(text: str) -> str:
    """The words of a target, up to a stop, without articles; empty if too long."""
    cut = _STOP.search(" " + text + " ")
    words = [w for w in _words(text[: cut.start() - 1] if cut else text) if w not in _ARTICLES]
    return " ".join(words) if 0 < len(words) <= _MAX_WORDS else ""


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text.casefold())


def _does(record: MemoryRecord, action: Action, target: str) -> bool:
    """Whether ``record`` (one of the agent's own commands) does the intention."""
    if record.failed or not record.command:
        return False
    parsed = parse_line(record.command)
    if parsed is None:
        return False
    if action == "look":
        return parsed.verb in ("look", "l") and not parsed.args
    wanted = set(target.split())
    if action == "examine":
        if parsed.verb not in _EXAMINING or not parsed.args:
            return False
        typed = set(_words(parsed.args)) - _ARTICLES
        name = set(_words(first_line(record.text).split(":", 1)[0])) - _ARTICLES
        return bool(typed) and (wanted <= typed or typed <= wanted or wanted <= name)
    return any(wanted <= set(_words(line)) for line in _moves(record, parsed.verb))


def _moves(record: MemoryRecord, verb: str) -> list[str]:
    """The lines of a result that say where a move went."""
    lines = [" ".join(line.split()) for line in record.text.splitlines()]
    found = [
        line
        for line in lines
        if (line.startswith("You go ") and " to " in line)
        or line.startswith("(You have arrived at ")
    ]
    if verb in _TELEPORT and lines:
        found.append(first_line(record.text))
    return found
