"""Fitting the agent's prompt to its model's context (pure): what goes, in which order,
and what is cut (``engine.agents.prompt`` builds the parts and calls ``fit``).

Sizes are counted by a ``TokenCounter`` (``engine.memory.tokens``: the model's tokenizer,
or the estimate for a server); ``CHARACTERS`` counts characters, for callers with no
model. Over the budget:

1. Any single part longer than its share of the budget is cut to it first (at a word
   boundary, marked ``…``): the profile, the room's name and description, the exits,
   who is here, each example, each memory line, note, knowledge line and handbook
   line (``PART_SHARE`` each), each summary (``SUMMARY_PART``; a summary keeps its end,
   the rest their beginning); never below ``MIN_PART``. A 100 KB room description is
   cut, not kept whole while the memories go.
2. The oldest memory lines go while the newest take more than ``MEMORY_FLOOR`` of the
   room the fixed parts leave; then notes (the last first), knowledge lines (the last
   first), the examples and the handbook's lines (the last first); then the rest of the
   memory lines, the oldest first; then the recent summary is cut from its start, and
   last the line saying how many older memories are not shown.
3. Still over: the long-term summary is cut from its start, then the room's
   description and the profile, each to what is left. Only the frame stays
   whatever the budget: the identity, the commands, where the agent is, its exits, who
   is here (each within its share) and its cue.

A line above the memories says how many older ones the prompt does not show (a
compaction backlog, and those dropped to fit); it is part of what is fitted. What was
cut and what was dropped is returned with the prompt (``@memory-status`` says it).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from engine.memory.tokens import CHARACTERS, TokenCounter, cut_text, fits

BASIC_COMMANDS = (
    "BASIC COMMANDS: look | go <exit> | say <text> | emote <action> | examine <thing>\n"
    "| think <thought> | note <title> -> <text> | recall <query> | help [topic]\n"
    'Add "| reason" after a command to keep a private reason.'
)
FENCE = "---"
"""The line before and after the verbatim memories."""
HANDBOOK_HEADING = "## Handbook"
NOTES_HEADING = "## Relevant private notes"
LONGTERM_HEADING = "## Older memories (summary)"
RECENT_HEADING = "## Recent past (summary)"
EXAMPLES_HEADING = "## Good moves here (examples)"
MEMORY_FLOOR = 0.25
"""The share of the room beside the fixed parts that the newest memory lines keep before
notes, knowledge and the handbook are cut to fit (what just happened outranks what is
brought to mind)."""
PART_SHARE = 1 / 8
"""The most of the budget any one line may take once the prompt is over it."""
SUMMARY_PART = 1 / 4
"""The most of the budget each summary may take once the prompt is over it (the
compactor keeps them within a quarter of the context: only a summary in a script the
character estimate misjudged is ever cut to it)."""

MIN_PART = 64
"""No share cuts a part below this many tokens (characters, counting characters): a
short part is never worth cutting."""

Size = Callable[[str], int]


def memories_notice(backlog: int, hidden: int) -> str:
    """The line above the memories: how many older memories the prompt does not show.

    ``backlog`` memories wait for a summary; ``hidden`` more were left out to fit the
    budget. Empty when there are none."""
    missing = backlog + hidden
    if missing <= 0:
        return ""
    noun = "memory" if missing == 1 else "memories"
    why = "not shown" if hidden > 0 else "not yet summarized"
    return f"({missing} earlier {noun} {why})"


def _sentence(subject: str, rest: str) -> str:
    return f"{subject} {rest}" if rest else subject


@dataclass(slots=True)
class Frame:
    """What every prompt shows around its sections: who, where, and the cue."""

    name: str
    profile: str
    room: str
    description: str
    exits: str
    others: str
    examples: list[str] = field(default_factory=list)
    """The example cue lines (``~Name> look``)."""

    def head(self) -> list[str]:
        return [_sentence(f"You are {self.name}.", self.profile), BASIC_COMMANDS]

    def tail(self) -> list[str]:
        return [
            *([EXAMPLES_HEADING, *self.examples] if self.examples else []),
            _sentence(f"You are {self.name} in {self.room}.", self.description),
            f"Exits: {self.exits}   Also here: {self.others}",
            f"~{self.name}>",
        ]


@dataclass(slots=True)
class Sections:
    knowledge: list[str]
    notes: list[str]
    longterm: str
    recent: str
    memories: list[str]
    notice: str = ""
    """``memories_notice``: the first line between the fences."""
    handbook: list[str] = field(default_factory=list)


def prompt_lines(frame: Frame, body: Sections) -> list[str]:
    """The prompt's lines (``BASIC_COMMANDS`` counts as one); empty sections left out."""
    lines = frame.head()
    if body.handbook:
        lines += [HANDBOOK_HEADING, *body.handbook]
    if body.longterm:
        lines += [LONGTERM_HEADING, body.longterm]
    if body.recent:
        lines += [RECENT_HEADING, body.recent]
    block = [body.notice, *body.memories] if body.notice else body.memories
    if block:
        lines += [FENCE, *block, FENCE]
    # What depends on the situation comes after the memories, which only grow at their
    # end between compactions: a server's cached prefix then reaches the last memory.
    lines += body.knowledge
    if body.notes:
        lines += [NOTES_HEADING, *body.notes]
    return lines + frame.tail()


@dataclass(frozen=True, slots=True)
class Fitted:
    frame: Frame
    body: Sections
    hidden: int
    """Memories left out (the oldest)."""
    cut: tuple[str, ...] = ()
    """The parts cut short, in words ("room description", "2 memories")."""
    dropped: tuple[str, ...] = ()
    """The parts left out whole, in words ("3 notes", "the examples")."""


def sizer(counter: TokenCounter) -> Size:
    """``counter.count``, remembered for the texts of one fitting (``len`` for
    ``CHARACTERS``)."""
    if counter is CHARACTERS:
        return len
    known: dict[str, int] = {}

    def size(text: str) -> int:
        found = known.get(text)
        if found is None:
            found = known[text] = counter.count(text)
        return found

    return size


def length(lines: list[str], size: Size = len) -> int:
    """What ``lines`` joined by newlines cost (a newline counts one)."""
    return sum(map(size, lines)) + len(lines) - 1


def fit(frame: Frame, body: Sections, budget: int, counts: list[int], backlog: int,
        counter: TokenCounter = CHARACTERS) -> Fitted:  # fmt: skip
    """``frame`` and ``body`` within ``budget`` (the order above). ``counts[i]``: the
    memories line ``i`` stands for."""
    size = sizer(counter)
    original, examples = body, bool(frame.examples)
    frame, body, cut = _capped(frame, body, budget, counter)
    hidden = 0
    if length(prompt_lines(frame, body), size) > budget:
        frame, body, hidden = _shrink(frame, body, budget, counts, backlog, size, counter)
        frame, body, last = _last_resort(frame, body, budget, size, counter)
        cut += last
    dropped = _dropped(original, body, examples, frame)
    cut = [what for what in dict.fromkeys(cut) if what not in dropped]  # (once, the last word)
    return Fitted(frame, body, hidden, tuple(cut), dropped)


def _capped(
    frame: Frame, body: Sections, budget: int, counter: TokenCounter
) -> tuple[Frame, Sections, list[str]]:
    """Every part within its share of ``budget``; what was cut, in words."""
    part = max(MIN_PART, int(budget * PART_SHARE))
    summary = max(MIN_PART, int(budget * SUMMARY_PART))
    cut: list[str] = []

    def one(text: str, what: str, limit: int = part, *, keep_end: bool = False) -> str:
        if fits(text, limit, counter):
            return text
        cut.append(what)
        return cut_text(text, limit, counter, keep_end=keep_end)

    def each(lines: list[str], what: str) -> list[str]:
        kept = [line if fits(line, part, counter) else cut_text(line, part, counter)
                for line in lines]  # fmt: skip
        changed = sum(a is not b for a, b in zip(lines, kept, strict=True))
        if changed:
            cut.append(_count(changed, what))
        return kept

    frame = replace(
        frame, profile=one(frame.profile, "profile"), room=one(frame.room, "room name"),
        description=one(frame.description, "room description"),
        exits=one(frame.exits, "exits"), others=one(frame.others, "who is here"),
        examples=each(frame.examples, "example"),
    )  # fmt: skip
    body = replace(
        body, memories=each(body.memories, "memory"), notes=each(body.notes, "note"),
        knowledge=each(body.knowledge, "knowledge line"),
        handbook=each(body.handbook, "handbook line"),
        longterm=one(body.longterm, "long-term summary", summary, keep_end=True),
        recent=one(body.recent, "recent summary", summary, keep_end=True),
    )  # fmt: skip
    return frame, body, cut


def _drop(items: list[str], excess: int, framing: int, size: Size, *, oldest: bool
          ) -> tuple[list[str], int]:  # fmt: skip
    """Drop items (the first ones if ``oldest``, else the last) until ``excess`` <= 0.

    ``framing`` is what the section costs beyond its items (saved with the last one).
    """
    count = 0
    for item in items if oldest else reversed(items):
        if excess <= 0:
            break
        count += 1
        excess -= size(item) + 1 + (framing if count == len(items) else 0)
    return (items[count:] if oldest else items[: len(items) - count]), excess


def _cut_start(text: str, excess: int, framing: int, size: Size, counter: TokenCounter
               ) -> tuple[str, int]:  # fmt: skip
    """Cut ``text`` from its start, at a word boundary, until ``excess`` <= 0
    (``framing``: what the section costs beyond it, saved when it goes whole)."""
    if excess <= 0 or not text:
        return text, excess
    cost = size(text)
    rest = cut_text(text, cost - excess, counter, keep_end=True) if excess < cost else ""
    if not rest:
        return "", excess - cost - 1 - framing
    return rest, excess - (cost - size(rest))


def _plus_newline(total: int, length: int) -> int:
    return total + length + 1


def _shrink(
    frame: Frame, body: Sections, budget: int, counts: list[int], backlog: int, size: Size,
    counter: TokenCounter,
) -> tuple[Frame, Sections, int]:  # fmt: skip
    """Shrink ``body`` (and the examples of ``frame``) in the documented order (step 2)
    until the prompt fits ``budget``; also how many memories were left out."""
    lines = body.memories
    # kept[d]: what lines[d:] cost (sums from the end, in C)
    kept = list(itertools.accumulate(map(size, reversed(lines)), _plus_newline, initial=0))
    kept.reverse()
    hidden = [0, *itertools.accumulate(counts)]  # hidden[d]: the memories lines[:d] stand for
    fences = 2 * (size(FENCE) + 1)

    def block(d: int) -> int:  # what the memory block costs with lines[:d] left out
        notice = memories_notice(backlog, hidden[d])
        cost = kept[d] + (size(notice) + 1 if notice else 0)
        return cost + fences if cost else 0

    def first_fitting(base: int, floor: int = -1) -> int | None:
        """The fewest oldest lines to leave out so the prompt fits, or the lines take at
        most ``floor``; None: not even with every line left out. (``kept`` only falls
        with ``d``, so both bounds are found by bisection; the notice's length, which
        grows with ``d``, is then checked from the first ``d`` that could fit.)"""
        count = len(lines) + 1
        small = bisect.bisect_left(range(count), True, key=lambda d: kept[d] <= floor)
        least = bisect.bisect_left(
            range(count), True, key=lambda d: base + (kept[d] + fences if kept[d] else 0) <= budget
        )
        fits = next((d for d in range(least, small) if base + block(d) <= budget), None)
        if fits is not None:
            return fits
        return small if small < count else None

    fixed = length([*frame.head(), *frame.tail()], size)
    others = Sections(body.knowledge, body.notes, body.longterm, body.recent, [],
                      handbook=body.handbook)  # fmt: skip
    base = length(prompt_lines(frame, others), size)
    # 1. the oldest memories, while the newest lines take more than their floor
    floor = int(MEMORY_FLOOR * max(0, budget - fixed))
    dropped = first_fitting(base, floor) or 0  # (never None: kept[-1] is 0, within any floor)
    # 2. notes, knowledge, the examples and the handbook, each the last line first
    excess = base + block(dropped) - budget
    notes, excess = _drop(body.notes, excess, size(NOTES_HEADING) + 1, size, oldest=False)
    knowledge, excess = _drop(body.knowledge, excess, 0, size, oldest=False)
    while knowledge and knowledge[-1].startswith("#"):  # a heading whose lines went
        excess -= size(knowledge.pop()) + 1
    if excess > 0 and frame.examples:
        excess -= length([EXAMPLES_HEADING, *frame.examples], size) + 1
        frame = replace(frame, examples=[])
    handbook, excess = _drop(body.handbook, excess, size(HANDBOOK_HEADING) + 1, size,
                             oldest=False)  # fmt: skip
    others = Sections(knowledge, notes, body.longterm, body.recent, [], handbook=handbook)
    base = length(prompt_lines(frame, others), size)
    # 3. as many memories as then fit (what step 2 freed may take some back)
    fitting = first_fitting(base)
    if fitting is not None:
        others.memories, others.notice = lines[fitting:], memories_notice(backlog, hidden[fitting])
        return frame, others, hidden[fitting]
    # 4. not one memory fits: the notice is kept longest, the recent summary is cut first
    everything = len(lines)
    notice = memories_notice(backlog, hidden[everything])
    excess = base + block(everything) - budget
    recent, excess = _cut_start(body.recent, excess, size(RECENT_HEADING) + 1, size, counter)
    notice = notice if excess <= 0 else ""  # it does not fit even alone
    return (frame, Sections(knowledge, notes, body.longterm, recent, [], notice, handbook),
            hidden[everything])  # fmt: skip


def _last_resort(
    frame: Frame, body: Sections, budget: int, size: Size, counter: TokenCounter
) -> tuple[Frame, Sections, list[str]]:
    """Step 3: the long-term summary, the description and the profile, each cut to
    what is left, until the prompt fits."""
    cut: list[str] = []
    excess = length(prompt_lines(frame, body), size) - budget
    if excess > 0 and body.longterm:
        longterm, _ = _cut_start(body.longterm, excess, size(LONGTERM_HEADING) + 1, size, counter)
        body = replace(body, longterm=longterm)
        cut.append("long-term summary")
        excess = length(prompt_lines(frame, body), size) - budget
    for name, what in (("description", "room description"), ("profile", "profile")):
        text = getattr(frame, name)
        if excess <= 0:
            break
        if not text:
            continue
        keep = size(text) - excess - 1
        shorter = cut_text(text, keep, counter) if keep > 0 else ""
        if name == "description":
            frame = replace(frame, description=shorter)
        else:
            frame = replace(frame, profile=shorter)
        cut.append(what)
        excess = length(prompt_lines(frame, body), size) - budget
    return frame, body, cut


def _dropped(original: Sections, body: Sections, examples: bool, frame: Frame
             ) -> tuple[str, ...]:  # fmt: skip
    """The parts of ``original`` that ``body`` left out whole, and the ``examples`` if the
    ``frame`` lost them, in words."""
    gone = []
    for what, before, after in (("note", original.notes, body.notes),
                                ("knowledge line", original.knowledge, body.knowledge),
                                ("handbook line", original.handbook, body.handbook)):  # fmt: skip
        missing = len(before) - len(after)
        if missing > 0:
            gone.append(_count(missing, what))
    if original.recent and not body.recent:
        gone.append("recent summary")
    if original.longterm and not body.longterm:
        gone.append("long-term summary")
    if examples and not frame.examples:
        gone.append("examples")
    return tuple(gone)


def _count(number: int, what: str) -> str:
    """``1 note``, ``3 notes``, ``2 memories``."""
    if number == 1:
        return f"{number} {what}"
    return f"{number} {what[:-1] + 'ies' if what.endswith('y') else what + 's'}"
