"""The kinds of recall question, as drafts drawn from what an agent perceived (pure).

Each category is a few *kinds*; each kind is a lazy stream of drafts in a random order
(its ``random.Random``), so the caller takes only as many as it needs. A draft holds the
question, the gold answer, the evidence seqs and its candidate distractors: ``near``
(hard ones: the agent's other rooms, the people who were there) and ``pool`` (the rest
of the world's names). Questions that would be ambiguous are never drafted: a quote
heard more than once, an event whose text is not unique in the journal.

Kinds (the question texts are exact):

- single-hop: ``Who told you "<quote>"?`` (gold: the speaker);
  ``Where were you when <speaker> said "<quote>"?`` (gold: the room the agent knew it
  was in, from its last move or room description);
- multi-hop: ``Where did the person who said "<quote>" go next?`` (gold: the room of the
  speaker's next departure the agent saw from that same room, the agent not having
  moved in between); ``Where had the person who said "<quote>" come from?`` (gold: the
  room of the speaker's last arrival seen there before it spoke);
- temporal: ``Which of these happened first?`` (options: four memories' first lines);
  ``What did you do right after "<memory>"?`` (options: the agent's own commands; gold:
  the first command it gave after that memory);
- knowledge-update: ``Where is <person> now?`` (gold: where the agent last knew the
  person to be; only for people the agent saw in at least two rooms). Objects never
  move in this world (there is no take, drop or give), so there are no object questions;
- abstention: the single-hop questions about a quote another agent heard that appears
  nowhere in this agent's journal (gold: "I don't know").
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from engine.lab.probe.perception import Perception, Speech, first_line
from engine.memory.record import MemoryRecord

IDK = "I don't know"
QUOTE_CHARS = 100
EVENT_CHARS = 120
COMMAND_CHARS = 80
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Draft:
    question: str
    gold: str
    """An option's text; ``IDK`` for abstention."""
    evidence: tuple[int, ...]
    near: tuple[str, ...] = ()
    pool: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Scene:
    """The world's names and every agent's perception."""

    people: tuple[str, ...]
    rooms: tuple[str, ...]
    seen: Mapping[str, Perception]


Kinds = list[Iterator[Draft]]


def clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with ``...``."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _shuffled(items: Iterable[T], rng: random.Random) -> list[T]:
    out = list(items)
    rng.shuffle(out)
    return out


def _unique_speeches(p: Perception, scene: Scene) -> list[Speech]:
    """Speeches by the world's people whose clipped quote was heard only once."""
    counts = Counter(clip(s.quote, QUOTE_CHARS) for s in p.speeches)
    return [
        s
        for s in p.speeches
        if counts[clip(s.quote, QUOTE_CHARS)] == 1 and s.speaker in scene.people
    ]


def _others(scene: Scene, *exclude: str | None) -> tuple[str, ...]:
    return tuple(n for n in scene.people if n not in exclude)


def _rooms_been(p: Perception) -> tuple[str, ...]:
    return tuple(sorted({h.name for h in p.here if h is not None}))


def _stayed(p: Perception, first: int, last: int, location: str | None) -> bool:
    """Every memory from seq ``first`` to ``last`` was made in ``location``."""
    pos = p.index
    return location is not None and all(
        r.location == location for r in p.records[pos[first] : pos[last] + 1]
    )


# -- single-hop ---------------------------------------------------------------------
def single_hop(p: Perception, scene: Scene, rng: random.Random) -> Kinds:
    speeches = _unique_speeches(p, scene)
    return [_who_told(p, scene, _shuffled(speeches, rng)), _where_when(p, scene, speeches, rng)]


def _who_told(p: Perception, scene: Scene, speeches: list[Speech]) -> Iterator[Draft]:
    for s in speeches:
        present = set(p.records[p.index[s.seq]].occupants)
        near = tuple(n for n in _others(scene, p.agent, s.speaker) if n in present)
        yield Draft(
            f'Who told you "{clip(s.quote, QUOTE_CHARS)}"?', s.speaker, (s.seq,), near,
            _others(scene, p.agent),
        )  # fmt: skip


def _where_when(
    p: Perception, scene: Scene, speeches: list[Speech], rng: random.Random
) -> Iterator[Draft]:
    for s in _shuffled((s for s in speeches if s.here is not None), rng):
        assert s.here is not None
        yield Draft(
            f'Where were you when {s.speaker} said "{clip(s.quote, QUOTE_CHARS)}"?',
            s.here.name, (s.here.seq, s.seq), _rooms_been(p), scene.rooms,
        )  # fmt: skip


# -- multi-hop ----------------------------------------------------------------------
def multi_hop(p: Perception, scene: Scene, rng: random.Random) -> Kinds:
    speeches = _unique_speeches(p, scene)
    return [_went_next(p, scene, speeches, rng), _came_from(p, scene, speeches, rng)]


def _trail_rooms(p: Perception, person: str) -> tuple[str, ...]:
    return tuple(sorted({s.room for s in p.sightings.get(person, []) if s.room is not None}))


def _went_next(
    p: Perception, scene: Scene, speeches: list[Speech], rng: random.Random
) -> Iterator[Draft]:
    for s in _shuffled(speeches, rng):
        move = next((m for m in p.moves if m.person == s.speaker and m.seq > s.seq), None)
        if move is None or move.kind != "leave" or move.room is None:
            continue
        if not _stayed(p, s.seq, move.seq, s.location):
            continue
        yield Draft(
            f'Where did the person who said "{clip(s.quote, QUOTE_CHARS)}" go next?',
            move.room, (s.seq, move.seq), _trail_rooms(p, s.speaker), scene.rooms,
        )  # fmt: skip


def _came_from(
    p: Perception, scene: Scene, speeches: list[Speech], rng: random.Random
) -> Iterator[Draft]:
    for s in _shuffled(speeches, rng):
        before = [m for m in p.moves if m.person == s.speaker and m.seq < s.seq]
        if not before or before[-1].kind != "arrive" or before[-1].room is None:
            continue
        move = before[-1]
        assert move.room is not None
        if not _stayed(p, move.seq, s.seq, s.location):
            continue
        yield Draft(
            f'Where had the person who said "{clip(s.quote, QUOTE_CHARS)}" come from?',
            move.room, (move.seq, s.seq), _trail_rooms(p, s.speaker), scene.rooms,
        )  # fmt: skip


# -- temporal -----------------------------------------------------------------------
def event_text(record: MemoryRecord) -> str:
    """A memory as a temporal option: its first line, clipped."""
    return clip(first_line(record.text), EVENT_CHARS)


def _unique_events(p: Perception, scene: Scene) -> list[MemoryRecord]:
    """Memories whose option text is theirs alone (a room description's first line, the
    room's name, is no event)."""
    texts = [event_text(r) for r in p.records]
    counts = Counter(texts)
    return [
        r
        for r, t in zip(p.records, texts, strict=True)
        if t and counts[t] == 1 and t not in scene.rooms
    ]


def temporal(p: Perception, scene: Scene, rng: random.Random) -> Kinds:
    events = _unique_events(p, scene)
    return [_first_of(events, rng), _right_after(p, events, rng)]


def _first_of(events: list[MemoryRecord], rng: random.Random) -> Iterator[Draft]:
    if len(events) < 4:
        return
    for _ in range(len(events)):
        chosen = sorted(rng.sample(events, 4), key=lambda r: r.seq)
        texts = [event_text(r) for r in chosen]
        yield Draft(
            "Which of these happened first?", texts[0], tuple(r.seq for r in chosen),
            tuple(texts[1:]),
        )  # fmt: skip


def _right_after(p: Perception, events: list[MemoryRecord], rng: random.Random) -> Iterator[Draft]:
    own = [(i, r) for i, r in enumerate(p.records) if r.command]
    commands = tuple(sorted({clip(r.command or "", COMMAND_CHARS) for _, r in own}))
    if len(commands) < 4:
        return
    pos = p.index
    for event in _shuffled(events, rng):
        after = next(((i, r) for i, r in own if i > pos[event.seq]), None)
        if after is None:
            continue
        i, done = after
        nearby = {clip(r.command or "", COMMAND_CHARS) for j, r in own if abs(j - i) <= 6}
        yield Draft(
            f'What did you do right after "{event_text(event)}"?',
            clip(done.command or "", COMMAND_CHARS), (event.seq, done.seq),
            tuple(sorted(nearby)), commands,
        )  # fmt: skip


# -- knowledge update ---------------------------------------------------------------
def knowledge_update(p: Perception, scene: Scene, rng: random.Random) -> Kinds:
    return [_where_now(p, scene, rng)]


def _where_now(p: Perception, scene: Scene, rng: random.Random) -> Iterator[Draft]:
    for person in _shuffled(sorted(p.sightings), rng):
        last = p.sightings[person][-1]
        earlier = _trail_rooms(p, person)
        if person not in scene.people or last.room is None or len(earlier) < 2:
            continue
        yield Draft(f"Where is {person} now?", last.room, last.evidence, earlier, scene.rooms)


# -- abstention ---------------------------------------------------------------------
def abstention(p: Perception, scene: Scene, rng: random.Random) -> Kinds:
    haystack = "\n".join(r.text.casefold() for r in p.records)
    found: dict[str, tuple[str, Speech]] = {}
    for name in sorted(scene.seen):
        if name != p.agent:
            for s in _unique_speeches(scene.seen[name], scene):
                found.setdefault(s.quote, (name, s))
    candidates = [c for c in found.values() if c[1].speaker != p.agent]

    def unheard(items: list[tuple[str, Speech]]) -> Iterator[tuple[str, Speech]]:
        for other, s in items:
            stem = clip(s.quote, QUOTE_CHARS).removesuffix("...")
            if s.quote.casefold() not in haystack and stem.casefold() not in haystack:
                yield other, s

    def who() -> Iterator[Draft]:
        for _, s in unheard(_shuffled(candidates, rng)):
            yield Draft(
                f'Who told you "{clip(s.quote, QUOTE_CHARS)}"?', IDK, (),
                (s.speaker,), _others(scene, p.agent),
            )  # fmt: skip

    def where() -> Iterator[Draft]:
        for other, s in unheard(_shuffled(candidates, rng)):
            there = _rooms_been(scene.seen[other])
            yield Draft(
                f'Where were you when {s.speaker} said "{clip(s.quote, QUOTE_CHARS)}"?', IDK,
                (), there, scene.rooms,
            )  # fmt: skip

    return [who(), where()]


CATEGORIES = {
    "single-hop": single_hop,
    "multi-hop": multi_hop,
    "temporal": temporal,
    "knowledge-update": knowledge_update,
    "abstention": abstention,
}
"""Each category's kinds, in the order questions are written."""
