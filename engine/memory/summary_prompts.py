"""The summarizer's two prompts (DESIGN.md, "The stream and the waterfall"), pure.

Both are completion-style text sent raw (no chat template) to base or instruct
models. They are first person, ask for no preamble and end with a cue line with
nothing after it. The summarizer stops on a blank line ("\\n\\n"), so no blank line is
ever put inside the memories or summaries given: each memory becomes one line, and a
summary keeps its single newlines but loses its blank ones.

Each is fitted to the summarizer's ``num_ctx`` less its reply (``prompt_budget``, in
tokens), counted by its model's ``TokenCounter`` (``engine.memory.tokens``): a chunk's
longest memory lines are cut (``fitted_chunk_prompt``), a merge's two summaries are cut
from their start, the older first (``fitted_merge_prompt``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from engine.memory.tokens import CHARACTERS, TokenCounter, cut_text, fits, prompt_room

CHUNK_CUE = "SUMMARY:"
MERGE_CUE = "COMBINED SUMMARY:"
DEFAULT_NUM_PREDICT = 400
"""The summarizer's ``num_predict`` when its options give none (or no limit)."""
CHARS_PER_TOKEN = 3
"""A low estimate of characters per token, so a text within ``summary_budget`` chars
stays within ``num_predict`` tokens (prompts are fitted in tokens: ``prompt_budget``)."""
CHARS_PER_WORD = 7
"""A high estimate of characters per word (with its space), to ask for a word count."""
MIN_LINE = 40
"""A memory line is never cut shorter than this (characters) to fit a chunk's prompt..."""
MIN_LINE_TOKENS = 16
"""... nor, fitted in tokens, than this many (about ``MIN_LINE`` characters of English,
a dozen Chinese characters)."""
MIN_SUMMARY = 16
"""A merge's summary is never cut shorter than this many tokens (else no merge)."""

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_CUE_ECHO = re.compile(r"^\**\s*(?:combined\s+)?summary\s*:\s*\**\s*", re.IGNORECASE)
_PREAMBLE_START = re.compile(
    r"^(?:here(?:'|’| i)s|sure|okay|ok|certainly|of course)\b", re.IGNORECASE
)
_ACKNOWLEDGEMENT = re.compile(r"^(?:sure|okay|ok|certainly|of course)[\s!.,]*$", re.IGNORECASE)


def _one_line(text: str) -> str:
    """Text on one line: line breaks become spaces, blank pieces are dropped."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def _no_blank_lines(text: str) -> str:
    """Text without blank lines (single newlines kept, each line right-stripped);
    "(none)" for a text with nothing in it."""
    kept = "\n".join(line.rstrip() for line in text.splitlines() if line.strip())
    return kept or "(none)"


def _name(name: str) -> str:
    return " ".join(name.split())


def chunk_prompt(name: str, memories: Sequence[str]) -> str:
    """The prompt that summarizes one chunk: its memories only, one per line."""
    return _chunk_prompt(name, _lines(memories))


def fitted_chunk_prompt(
    name: str, memories: Sequence[str], budget: int | None,
    counter: TokenCounter = CHARACTERS,
) -> str | None:  # fmt: skip
    """``chunk_prompt`` within ``budget`` (``prompt_budget``, as ``counter`` counts;
    None: any length): the longest memory lines are cut until it fits. None when it
    cannot fit even with every line cut to ``MIN_LINE`` characters (``MIN_LINE_TOKENS``
    in tokens; the chunk is then summarized without the model)."""
    lines = _lines(memories)
    if budget is None:
        return _chunk_prompt(name, lines)
    room = budget
    for _ in range(3):  # the joined prompt may count a token or two above its parts
        fitted = fit_lines(lines, room - counter.count(_chunk_prompt(name, [])), counter)
        if fitted is None:
            return None
        prompt = _chunk_prompt(name, fitted)
        over = counter.count(prompt) - budget if counter is not CHARACTERS else 0
        if over <= 0:
            return prompt
        room -= over
    return None


def _lines(memories: Sequence[str]) -> list[str]:
    return [line for line in (_one_line(memory) for memory in memories) if line]


def _chunk_prompt(name: str, lines: Sequence[str]) -> str:
    return "\n".join(
        [
            f"Summarize these memories of {_name(name)} in first person (I, me, my), in 2-4"
            " sentences. Begin at once with the summary: no introduction, no commentary.",
            "",
            "MEMORIES:",
            *lines,
            "",
            CHUNK_CUE,
        ]
    )


def merge_prompt(name: str, longterm: str, recent: str, limit: int | None = None) -> str:
    """The prompt that folds the short-term summary S into the long-term summary L; with
    ``limit`` (characters) it asks for at most ``limit // CHARS_PER_WORD`` words."""
    most = f" Use at most {limit // CHARS_PER_WORD} words." if limit else ""
    return "\n".join(
        [
            f"Combine these two summaries of {_name(name)}'s past into one first-person"
            " summary (I, me, my), in one paragraph: the older events briefly, the recent"
            " ones in more detail. Begin at once with the summary: no introduction,"
            f" no commentary.{most}",
            "",
            "OLDER SUMMARY:",
            _no_blank_lines(longterm),
            "",
            "RECENT SUMMARY:",
            _no_blank_lines(recent),
            "",
            MERGE_CUE,
        ]
    )


def fitted_merge_prompt(
    name: str, longterm: str, recent: str, limit: int | None, budget: int | None,
    counter: TokenCounter = CHARACTERS,
) -> str | None:  # fmt: skip
    """``merge_prompt`` within ``budget`` (``prompt_budget``, as ``counter`` counts;
    None: any length): when the two summaries do not fit, each is cut from its start
    (the oldest of it goes), the older summary to what the recent one leaves of the
    room and at most half of it. None when not even ``MIN_SUMMARY`` tokens of each
    fit (the merge is then made without the model)."""
    prompt = merge_prompt(name, longterm, recent, limit)
    if budget is None or fits(prompt, budget, counter):
        return prompt
    older, newer = _no_blank_lines(longterm), _no_blank_lines(recent)
    room = budget - counter.count(merge_prompt(name, "", "", limit))
    for _ in range(3):  # the joined prompt may count a token or two above its parts
        if room < 2 * MIN_SUMMARY:
            return None
        newer_room = max(room // 2, room - counter.count(older))
        newer_cut = cut_text(newer, newer_room, counter, keep_end=True) or "(none)"
        older_cut = cut_text(older, room - counter.count(newer_cut), counter, keep_end=True)
        prompt = merge_prompt(name, older_cut or "(none)", newer_cut, limit)
        over = counter.count(prompt) - budget
        if over <= 0:
            return prompt
        room -= over
    return None


def prompt_budget(options: Mapping[str, Any]) -> int | None:
    """The tokens a summarizer prompt may take: ``num_ctx`` less the reply's
    ``num_predict`` (``DEFAULT_NUM_PREDICT`` when it gives none) less
    ``engine.memory.tokens.RESERVED``; None when the options set no ``num_ctx``."""
    return prompt_room(options, default_reply=DEFAULT_NUM_PREDICT)


def fit_lines(
    lines: Sequence[str], room: int, counter: TokenCounter = CHARACTERS
) -> list[str] | None:
    """``lines`` within ``room`` (as ``counter`` counts, a newline after each): the
    longest are cut to a common size, at a word boundary with an ellipsis; None when
    even ``MIN_LINE`` characters a line (``MIN_LINE_TOKENS`` in tokens) do not fit."""
    if counter is not CHARACTERS:
        return _fit_lines(lines, room, counter)
    if sum(len(line) + 1 for line in lines) <= room:
        return list(lines)
    if len(lines) * (MIN_LINE + 1) > room:
        return None
    low, high = MIN_LINE, max(len(line) for line in lines)
    while low < high:  # the longest cap at which every line fits
        cap = (low + high + 1) // 2
        if sum(min(len(line), cap) + 1 for line in lines) <= room:
            low = cap
        else:
            high = cap - 1
    return [_cut_line(line, low) for line in lines]


def _fit_lines(lines: Sequence[str], room: int, counter: TokenCounter) -> list[str] | None:
    """``fit_lines`` in tokens: the largest token cap at which every line fits, each line
    kept to at least ``MIN_LINE_TOKENS``."""
    sizes = [counter.count(line) for line in lines]
    if sum(sizes) + len(lines) <= room:
        return list(lines)
    floors = [min(size, MIN_LINE_TOKENS) for size in sizes]
    if sum(floors) + len(lines) > room:
        return None

    def cost(cap: int) -> int:
        return sum(max(floor, min(size, cap)) for size, floor in zip(sizes, floors, strict=True))

    low, high = 0, max(sizes)
    while low < high:  # the largest cap at which every line fits
        cap = (low + high + 1) // 2
        if cost(cap) + len(lines) <= room:
            low = cap
        else:
            high = cap - 1
    return [line if size <= low else cut_text(line, max(low, floor), counter)
            for line, size, floor in zip(lines, sizes, floors, strict=True)]  # fmt: skip


def _cut_line(line: str, cap: int) -> str:
    if len(line) <= cap:
        return line
    head = line[: cap - 1]
    cut = head.rsplit(" ", 1)[0] if " " in head[MIN_LINE // 2 :] else head
    return cut.rstrip(" ,;:-") + "…"


def summary_budget(options: Mapping[str, Any]) -> int:
    """The length, in characters, a summary may have: what the summarizer's
    ``num_predict`` lets a model write. An extractive summary keeps within it too."""
    try:
        tokens = int(options.get("num_predict", DEFAULT_NUM_PREDICT))
    except (TypeError, ValueError):
        tokens = DEFAULT_NUM_PREDICT
    return (tokens if tokens > 0 else DEFAULT_NUM_PREDICT) * CHARS_PER_TOKEN


def _drop_think(text: str) -> str:
    """Remove <think>...</think> blocks, a dangling close's prefix and an unclosed tail."""
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    return text[: opened.start()] if opened else text


def _drop_preamble(text: str) -> str:
    """Remove one leading cue echo or preamble, if there is one."""
    echo = _CUE_ECHO.match(text)
    if echo:
        return text[echo.end() :]
    first, _, rest = text.partition("\n")
    first = first.strip()
    if _ACKNOWLEDGEMENT.match(first) or (_PREAMBLE_START.match(first) and first.endswith(":")):
        return rest
    head, colon, tail = first.partition(":")
    if colon and _PREAMBLE_START.match(head) and "summar" in head.lower():
        return tail + ("\n" + rest if rest else "")
    return text


def clean_summary(reply: str) -> str | None:
    """The summary in an LLM reply, without think blocks, cue echoes or preambles;
    None when nothing is left (an empty reply is a failure)."""
    text = _drop_think(reply).strip()
    while True:
        cleaned = _drop_preamble(text).strip()
        if cleaned == text:
            return text or None
        text = cleaned
