"""The agent's prompt for a base model (pure, no I/O): who it is, what it may type,
what it remembers and where it stands, ending on its cue ``~Name>``.

Static text comes first and volatile text last, so a server can reuse a cached
prefix: the handbook's profile and tips (which change once per knowledge pass), the
summaries, then the memories (which only grow at their end between
compactions), then what depends on the situation (prior knowledge, relevant notes,
example moves) and the situation itself (DESIGN.md, "Prompt shape"). Every field but
the two summaries is flattened to one line; no line of free text can pass for the
memory fence ``---`` or a cue (such a line is indented by one space).

``fit_prompt`` fits it to a budget counted by the model's ``TokenCounter``
(``engine.agents.prompt_fit`` says in which order parts are dropped and cut: any single
part too long for its share is cut first, then the oldest memories go, then notes,
knowledge, the handbook and the beginning of the recent summary; last the long-term
summary and the situation are cut). A line above the memories says how many older ones
the prompt does not show (a compaction backlog, and those dropped to fit).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from engine.agents.prompt_fit import (
    BASIC_COMMANDS,
    EXAMPLES_HEADING,
    FENCE,
    HANDBOOK_HEADING,
    LONGTERM_HEADING,
    MEMORY_FLOOR,
    NOTES_HEADING,
    RECENT_HEADING,
    Frame,
    Sections,
    fit,
    memories_notice,
    prompt_lines,
)
from engine.memory.tokens import CHARACTERS, TokenCounter, fits

__all__ = [
    "BASIC_COMMANDS", "EXAMPLES_HEADING", "FENCE", "HANDBOOK_HEADING", "LONGTERM_HEADING",
    "MEMORY_FLOOR", "NOTES_HEADING", "RECENT_HEADING", "FittedPrompt", "PromptParts",
    "char_budget", "fit_prompt", "memories_notice", "memory_lines", "one_line",
    "render_prompt",
]  # fmt: skip
FIT_TRIES = 3
"""Fittings of one prompt at most: a tokenizer may count the joined prompt a token or two
above its parts' sum, and each try takes that much off the budget."""


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


def _summary(text: str) -> str:
    """Keep the line breaks, trim the ends, guard every line."""
    return "\n".join(_guard(line) for line in text.strip().splitlines())


@dataclass(frozen=True, slots=True)
class FittedPrompt:
    text: str
    hidden: int = 0
    """Memories left out to fit the budget (the oldest; a line of the prompt says so)."""
    cut: tuple[str, ...] = ()
    """The parts cut short to fit, in words ("room description", "2 memories")."""
    dropped: tuple[str, ...] = ()
    """The parts left out whole to fit, in words ("3 notes", "the examples")."""


def render_prompt(
    parts: PromptParts, budget: int | None = None, counter: TokenCounter = CHARACTERS
) -> str:
    """The whole prompt, ending on ``~Name>`` with no newline after it; with ``budget``,
    fitted to it (``fit_prompt``)."""
    return fit_prompt(parts, budget, counter).text


def fit_prompt(
    parts: PromptParts, budget: int | None = None, counter: TokenCounter = CHARACTERS
) -> FittedPrompt:
    """The prompt within ``budget`` as ``counter`` counts it (``CHARACTERS``: characters;
    the model's counter: tokens), and what it left out. The frame (the identity, the
    commands, where the agent is, its cue) is never cut: a budget smaller than it gets
    the frame alone."""
    name = one_line(parts.name)
    frame = Frame(
        name=name,
        profile=one_line(parts.profile),
        room=one_line(parts.room_name),
        description=one_line(parts.room_description),
        exits=", ".join(e for e in map(one_line, parts.exits) if e) or "none",
        others=", ".join(n for n in map(one_line, parts.also_here) if n) or "nobody",
        examples=[f"~{name}> {line}" for line in map(one_line, parts.examples) if line],
    )
    notes = [f"- {one_line(title)}: {one_line(text)}".rstrip() for title, text in parts.notes]
    lines, counts = _memory_runs(parts.memories)
    knowledge = [line for line in (_guard(one_line(k)) for k in parts.knowledge) if line]
    while knowledge and knowledge[-1].startswith("#"):  # a heading with nothing under it
        knowledge.pop()
    body = Sections(
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
    text = "\n".join(prompt_lines(frame, body))
    if budget is None or fits(text, budget, counter):  # most prompts fit whole
        return FittedPrompt(text)
    room = budget
    for _ in range(FIT_TRIES):
        fitted = fit(frame, body, room, counts, parts.backlog, counter)
        text = "\n".join(prompt_lines(fitted.frame, fitted.body))
        over = counter.count(text) - budget
        if over <= 0:
            break
        room -= over  # the joined text counts more than its parts: try with less
    return FittedPrompt(text, fitted.hidden, fitted.cut, fitted.dropped)


def char_budget(
    num_ctx: int, num_predict: int, *, chars_per_token: float = 3.5, margin: float = 0.1
) -> int:
    """Characters the prompt may take: the context left beside the reply, at
    ``chars_per_token``, less a safety ``margin``; never below 0. (The engine fits by
    tokens, ``engine.memory.tokens.prompt_room``; this is for callers with no model.)"""
    return max(0, int((num_ctx - num_predict) * chars_per_token * (1 - margin)))
