"""The summarizer's two prompts (DESIGN.md, "The stream and the waterfall"), pure.

Both are completion-style text sent raw (no chat template) to base or instruct
models. They are first person, ask for no preamble and end with a cue line with
nothing after it. The summarizer stops on a blank line ("\\n\\n"), so no blank line is
ever put inside the memories or summaries given: each memory becomes one line, and a
summary keeps its single newlines but loses its blank ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

CHUNK_CUE = "SUMMARY:"
MERGE_CUE = "COMBINED SUMMARY:"
DEFAULT_NUM_PREDICT = 400
"""The summarizer's ``num_predict`` when its options give none (or no limit)."""
CHARS_PER_TOKEN = 3
"""A low estimate of characters per token, so a text within ``summary_budget`` chars
stays within ``num_predict`` tokens."""

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
    lines = [line for line in (_one_line(memory) for memory in memories) if line]
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


def merge_prompt(name: str, longterm: str, recent: str) -> str:
    """The prompt that folds the short-term summary S into the long-term summary L."""
    return "\n".join(
        [
            f"Combine these two summaries of {_name(name)}'s past into one first-person"
            " summary (I, me, my), in one paragraph: the older events briefly, the recent"
            " ones in more detail. Begin at once with the summary: no introduction,"
            " no commentary.",
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
