"""The agent's prompt for a base model (pure, no I/O): who it is, what it may type,
what it remembers and where it stands, ending on its cue ``~Name>``.

Static text comes first and volatile text last, so a server can reuse a cached
prefix: the handbook's profile and tips (which change once per knowledge pass), the
summaries, then the memories (which only grow at their end between
compactions), then what depends on the situation (prior knowledge, relevant notes,
example moves) and the situation itself (DESIGN.md, "Prompt shape"). Every field but the two summaries is flattened to one line; no line of
free text can pass for the memory fence ``---`` or a cue (such a line is indented
by one space). Over a budget the oldest memories go first, then notes, knowledge,
the handbook and the beginning of the recent summary; the identity, the commands, the
long-term summary (never cut: the agent's history is shown whole) and the situation
always stay. A line above the memories says how many older ones the prompt does not
show (a compaction backlog, and those dropped to fit); it is part of what is fitted.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

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

_UNSAFE_START = re.compile(r"^(?:\s|~|---(?:\n|$))+")
"""What a cut summary must not begin with: whitespace, a cue's ``~``, a bare fence."""


@dataclass(frozen=True, slots=True)
class PromptParts:
    name: str
    profile: str
    room_name: str
    room_description: str
    exits: Sequence[str]
    """Exit names, e.g. ``["north", "garden"]``."""
    also_here: Sequence[str]
    """Other characters' names."""
    memories: Sequence[str]
    """Oldest first; each may span lines."""
    recent_summary: str = ""
    """Short-term summary S."""
    longterm_summary: str = ""
    """Long-term summary L."""
    notes: Sequence[tuple[str, str]] = ()
    """Relevant private notes as (title, text)."""
    knowledge: Sequence[str] = ()
    """What the agent brings to mind, as lines with their own headings
    (``engine.memory.retrieval.render``: prior knowledge, relevant notes, past
    experiences), shown after the memories."""
    backlog: int = 0
    """Memories older than ``memories`` that no summary covers yet (a compaction backlog)."""
    examples: Sequence[str] = ()
    """Good moves here, written by the engine (``engine.agents.examples``): shown as
    cue lines under ``EXAMPLES_HEADING``, just before the situation."""
    handbook: str = ""
    """The handbook's profile and first tips (``engine.memory.handbook.prompt_excerpt``),
    shown under ``HANDBOOK_HEADING`` before the summaries."""


_CLOSED = tuple(".!?:;,\"')]")


def one_line(text: str, *, sentences: bool = False) -> str:
    """Split on any line break, strip each piece, drop empty ones, join with spaces.

    With ``sentences`` (memories: each line of a result is its own statement) a piece
    that does not end in punctuation gets a full stop before the next one:
    ``"The Garden\nRoses climb."`` -> ``"The Garden. Roses climb."``.
    """
    parts = text.splitlines()
    if len(parts) == 1:
        return parts[0].strip()
    pieces = [piece for piece in (part.strip() for part in parts) if piece]
    if sentences:
        pieces = [p if p.endswith(_CLOSED) else p + "." for p in pieces[:-1]] + pieces[-1:]
    return " ".join(pieces)


def _guard(line: str) -> str:
    """Indent a line that would read as the memory fence or as a cue."""
    return " " + line if line == FENCE or line.startswith("~") else line


def _repeated(line: str, extra: int) -> str:
    return f"{line} (repeated {extra}x more)" if extra else line


_MEMORY_LINES: dict[str, str] = {}
"""Memory text -> its prompt line: each memory is shown in many prompts (emptied when it
holds ``_KEPT_LINES``)."""
_KEPT_LINES = 1 << 16


def _memory_line(memory: str) -> str:
    """A memory as its prompt line."""
    line = _MEMORY_LINES.get(memory)
    if line is None:
        if len(_MEMORY_LINES) >= _KEPT_LINES:
            _MEMORY_LINES.clear()
        line = _MEMORY_LINES[memory] = _guard(one_line(memory, sentences=True))
    return line


def _memory_runs(memories: Sequence[str]) -> tuple[list[str], list[int]]:
    """``memory_lines``, and how many memories each line stands for."""
    found = list(map(_MEMORY_LINES.get, memories))  # one pass in C: most are known
    if None in found:
        lines = [line if line is not None else _memory_line(text)
                 for line, text in zip(found, memories, strict=True)]  # fmt: skip
    else:
        lines = cast("list[str]", found)
    if "" not in lines and not any(map(operator.eq, lines, itertools.islice(lines, 1, None))):
        return lines, [1] * len(lines)  # the common case: no empty line, no run
    runs: list[str] = []
    counts: list[int] = []
    for line in lines:
        if not line:
            continue
        if runs and line == runs[-1]:
            counts[-1] += 1
            continue
        if counts and counts[-1] > 1:
            runs[-1] = _repeated(runs[-1], counts[-1] - 1)
        runs.append(line)
        counts.append(1)
    if counts and counts[-1] > 1:
        runs[-1] = _repeated(runs[-1], counts[-1] - 1)
    return runs, counts


def memory_lines(memories: Sequence[str]) -> list[str]:
    """One line per memory, oldest first, as the prompt shows them.

    A run of identical lines becomes one line ending in `` (repeated Nx more)``;
    memories with no text at all are left out.
    """
    return _memory_runs(memories)[0]


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


def _summary(text: str) -> str:
    """Keep the line breaks, trim the ends, guard every line."""
    return "\n".join(_guard(line) for line in text.strip().splitlines())


def _sentence(subject: str, rest: str) -> str:
    return f"{subject} {rest}" if rest else subject


@dataclass(slots=True)
class _Sections:
    knowledge: list[str]
    notes: list[str]
    longterm: str
    recent: str
    memories: list[str]
    notice: str = ""
    """``memories_notice``: the first line between the fences."""
    handbook: list[str] = field(default_factory=list)


def _lines(head: list[str], body: _Sections, tail: list[str]) -> list[str]:
    """The prompt's lines (``BASIC_COMMANDS`` counts as one); empty sections left out."""
    lines = list(head)
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
    return lines + tail


def _length(lines: list[str]) -> int:
    return sum(map(len, lines)) + len(lines) - 1


def _drop(items: list[str], excess: int, framing: int, *, oldest: bool) -> tuple[list[str], int]:
    """Drop items (the first ones if ``oldest``, else the last) until ``excess`` <= 0.

    ``framing`` is what the section costs beyond its items (saved with the last one).
    """
    count = 0
    for item in items if oldest else reversed(items):
        if excess <= 0:
            break
        count += 1
        excess -= len(item) + 1 + (framing if count == len(items) else 0)
    return (items[count:] if oldest else items[: len(items) - count]), excess


def _cut(text: str, excess: int, framing: int) -> tuple[str, int]:
    """Cut ``text`` from its start, at a word boundary, until ``excess`` <= 0."""
    if excess <= 0 or not text:
        return text, excess
    rest = ""
    if excess < len(text):
        rest = text[excess:]
        if not text[excess - 1].isspace():
            word_end = re.search(r"\s", rest)
            rest = rest[word_end.start() :] if word_end else ""
        rest = _UNSAFE_START.sub("", rest)
    if not rest:
        return "", excess - len(text) - 1 - framing
    return rest, excess - (len(text) - len(rest))


def _plus_newline(total: int, length: int) -> int:
    return total + length + 1


def _fit(
    head: list[str], body: _Sections, tail: list[str], budget: int, counts: list[int], backlog: int
) -> tuple[_Sections, int]:
    """Shrink ``body`` in the documented order until the prompt fits ``budget``; also
    how many memories were left out. ``counts[i]``: the memories line ``i`` stands for."""
    lines = body.memories
    # kept[d]: what lines[d:] cost (sums from the end, in C)
    kept = list(itertools.accumulate(map(len, reversed(lines)), _plus_newline, initial=0))
    kept.reverse()
    hidden = [0, *itertools.accumulate(counts)]  # hidden[d]: the memories lines[:d] stand for
    fences = 2 * (len(FENCE) + 1)

    def block(d: int) -> int:  # what the memory block costs with lines[:d] left out
        notice = memories_notice(backlog, hidden[d])
        cost = kept[d] + (len(notice) + 1 if notice else 0)
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

    fixed = _length(_lines(head, _Sections([], [], "", "", []), tail))
    others = _Sections(body.knowledge, body.notes, body.longterm, body.recent, [],
                       handbook=body.handbook)  # fmt: skip
    base = _length(_lines(head, others, tail))
    # 1. the oldest memories, while the newest lines take more than their floor
    floor = int(MEMORY_FLOOR * max(0, budget - fixed))
    dropped = first_fitting(base, floor) or 0  # (never None: kept[-1] is 0, within any floor)
    # 2. notes, knowledge and the handbook, each the last line first
    excess = base + block(dropped) - budget
    notes, excess = _drop(body.notes, excess, len(NOTES_HEADING) + 1, oldest=False)
    knowledge, excess = _drop(body.knowledge, excess, 0, oldest=False)
    while knowledge and knowledge[-1].startswith("#"):  # a heading whose lines went
        excess -= len(knowledge.pop()) + 1
    handbook, excess = _drop(body.handbook, excess, len(HANDBOOK_HEADING) + 1, oldest=False)
    others = _Sections(knowledge, notes, body.longterm, body.recent, [], handbook=handbook)
    base = _length(_lines(head, others, tail))
    # 3. as many memories as then fit (what step 2 freed may take some back)
    fitting = first_fitting(base)
    if fitting is not None:
        others.memories, others.notice = lines[fitting:], memories_notice(backlog, hidden[fitting])
        return others, hidden[fitting]
    # 4. not one memory fits: the notice is kept longest, the recent summary is cut first;
    # the long-term summary, the agent's whole history, is never cut
    everything = len(lines)
    notice = memories_notice(backlog, hidden[everything])
    excess = base + block(everything) - budget
    recent, excess = _cut(body.recent, excess, len(RECENT_HEADING) + 1)
    notice = notice if excess <= 0 else ""  # it does not fit even alone
    return (_Sections(knowledge, notes, body.longterm, recent, [], notice, handbook),
            hidden[everything])  # fmt: skip


@dataclass(frozen=True, slots=True)
class FittedPrompt:
    text: str
    hidden: int = 0
    """Memories left out to fit the budget (the oldest; a line of the prompt says so)."""


def render_prompt(parts: PromptParts, budget_chars: int | None = None) -> str:
    """The whole prompt, ending on ``~Name>`` with no newline after it.

    With ``budget_chars`` the prompt is shrunk to at most that many characters: the
    oldest memory lines go first while the memories take more than ``MEMORY_FLOOR`` of
    the room the fixed parts leave; then notes (the last first), knowledge lines (the
    last first) and the handbook's lines (the last first); then the rest of the memory
    lines, the oldest first; then the recent summary is cut from its start, and last the
    line saying how many older memories are not shown. The identity line, the commands,
    the long-term summary and the situation are never dropped or cut: when they alone
    are longer than the budget they are returned anyway, so the result is then longer
    than ``budget_chars``.
    """
    return fit_prompt(parts, budget_chars).text


def fit_prompt(parts: PromptParts, budget_chars: int | None = None) -> FittedPrompt:
    """``render_prompt``, and how many memories it left out to fit the budget."""
    name = one_line(parts.name)
    exits = ", ".join(e for e in map(one_line, parts.exits) if e) or "none"
    others = ", ".join(n for n in map(one_line, parts.also_here) if n) or "nobody"
    room = one_line(parts.room_name)
    head = [_sentence(f"You are {name}.", one_line(parts.profile)), BASIC_COMMANDS]
    examples = [f"~{name}> {line}" for line in map(one_line, parts.examples) if line]
    tail = [
        *([EXAMPLES_HEADING, *examples] if examples else []),
        _sentence(f"You are {name} in {room}.", one_line(parts.room_description)),
        f"Exits: {exits}   Also here: {others}",
        f"~{name}>",
    ]
    notes = [f"- {one_line(title)}: {one_line(text)}".rstrip() for title, text in parts.notes]
    lines, counts = _memory_runs(parts.memories)
    knowledge = [line for line in (_guard(one_line(k)) for k in parts.knowledge) if line]
    while knowledge and knowledge[-1].startswith("#"):  # a heading with nothing under it
        knowledge.pop()
    body = _Sections(
        knowledge=knowledge,
        notes=notes,
        longterm=_summary(parts.longterm_summary),
        recent=_summary(parts.recent_summary),
        memories=lines,
        notice=memories_notice(parts.backlog, 0),
        handbook=[
            line for line in (_guard(x.strip()) for x in parts.handbook.splitlines()) if line
        ],
    )
    hidden = 0
    lines = _lines(head, body, tail)
    if budget_chars is not None and _length(lines) > budget_chars:  # most prompts fit whole
        body, hidden = _fit(head, body, tail, budget_chars, counts, parts.backlog)
        lines = _lines(head, body, tail)
    return FittedPrompt("\n".join(lines), hidden)


def char_budget(
    num_ctx: int, num_predict: int, *, chars_per_token: float = 3.5, margin: float = 0.1
) -> int:
    """Characters the prompt may take: the context left beside the reply, at
    ``chars_per_token``, less a safety ``margin``; never below 0."""
    return max(0, int((num_ctx - num_predict) * chars_per_token * (1 - margin)))
