"""The quality gate for the summarizer's replies (pure).

``judge_summary`` cleans a reply (``clean_summary``: think blocks, cue echoes,
preambles) and then rejects what is not a summary, with a one-line reason:

- empty: nothing is left (a model that starts with a blank line hits the "\\n\\n"
  stop at once and says nothing);
- cut off: the backend said the reply stopped at the token limit (``done_reason``
  "length"), so its end is missing;
- an echo: it repeats the prompt's instructions (six words of them in a row) or one
  of its section headings ("MEMORIES:", "OLDER SUMMARY:" ...);
- a refusal: it speaks as an AI ("As an AI", "as a language model") or opens with an
  apology or a "cannot" about the task ("I'm sorry, but I can't help with that");
- a loop: one sentence, or one run of eight words, three or more times.

A rejected reply is a failed attempt for the compactor, like an error; after enough
of them on one chunk it falls back to an extractive summary (``engine.memory.extractive``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from engine.memory.summary_prompts import clean_summary

EMPTY: Final = "the summarizer's reply was empty"
CUT_OFF: Final = "the summarizer's reply was cut off at its token limit (num_predict)"
ECHO: Final = "the summarizer's reply repeats the prompt's instructions"
REFUSAL: Final = "the summarizer's reply is a refusal, not a summary"
LOOP: Final = "the summarizer's reply repeats itself"

ECHO_WORDS: Final = 6
"""An echo shares this many words in a row with the prompt's instructions."""
LOOP_REPEATS: Final = 3
"""A sentence (or a run of ``LOOP_WORDS`` words) this many times is a loop."""
LOOP_WORDS: Final = 8

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_HEADING = re.compile(r"^[A-Z][A-Z ]*:$")
_AS_AN_AI = re.compile(
    r"\bas an? (?:ai|a\.i\.|artificial intelligence|(?:large |ai )?language model|"
    r"(?:ai |virtual )?assistant|llm|chatbot)\b",
    re.IGNORECASE,
)
_REFUSAL_OPENING = re.compile(
    r"^(?:i['’]?m sorry|i am sorry|sorry|my apologies|i apologi[sz]e|"
    r"(?:unfortunately,?\s+)?i (?:can(?:no|['’])t|cannot|am unable to|am not able to|"
    r"won['’]t|will not|must decline)|(?:unfortunately,?\s+)?i['’]m (?:unable|not able) to)\b",
    re.IGNORECASE,
)
_ABOUT_THE_TASK = re.compile(
    r"\b(?:summar\w*|assist\w*|help (?:you|with)|request|provide|comply|fulfil\w*|"
    r"complete (?:this|the|that)|these memories|this task|that task|this request|"
    r"the memories|the summaries|do that)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    summary: str | None
    """The cleaned summary when the reply passed, else None."""
    problem: str | None
    """Why the reply was rejected (one line), else None."""

    @property
    def accepted(self) -> bool:
        return self.summary is not None


def judge_summary(reply: str, prompt: str, *, truncated: bool = False) -> Verdict:
    """Accept ``reply`` to ``prompt`` as a summary, or say in one line why not."""
    if truncated:
        return Verdict(None, CUT_OFF)
    text = clean_summary(reply)
    if text is None:
        return Verdict(None, EMPTY)
    problem = (
        (ECHO if echoes_instructions(text, prompt) else None)
        or (REFUSAL if is_refusal(text) else None)
        or (LOOP if is_loop(text) else None)
    )
    return Verdict(None, problem) if problem else Verdict(text, None)


def words(text: str) -> list[str]:
    """Lower-case words (letters and digits, inner apostrophes kept)."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def sentences(text: str) -> list[str]:
    """Sentences and lines of ``text``, stripped, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def _shingles(tokens: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def echoes_instructions(text: str, prompt: str) -> bool:
    """True when ``text`` repeats ``ECHO_WORDS`` words of the prompt's instructions in
    a row, or one of the prompt's headings as a line of its own."""
    instructions = prompt.split("\n\n", 1)[0]
    if _shingles(words(instructions), ECHO_WORDS) & _shingles(words(text), ECHO_WORDS):
        return True
    headings = {line.strip() for line in prompt.splitlines() if _HEADING.match(line.strip())}
    return any(line.strip() in headings for line in text.splitlines())


def is_refusal(text: str) -> bool:
    """True when ``text`` speaks as an AI, or opens with an apology or a "cannot"
    about the task in its first sentence."""
    if _AS_AN_AI.search(text):
        return True
    found = sentences(text)
    first = found[0] if found else ""
    return bool(_REFUSAL_OPENING.match(first) and _ABOUT_THE_TASK.search(first))


def is_loop(text: str) -> bool:
    """True when one sentence, or one run of ``LOOP_WORDS`` words, comes back
    ``LOOP_REPEATS`` or more times (runs counted where they do not overlap)."""
    said = Counter(" ".join(words(s)) for s in sentences(text))
    said.pop("", None)
    if said and max(said.values()) >= LOOP_REPEATS:
        return True
    tokens = words(text)
    starts: dict[tuple[str, ...], list[int]] = {}
    for index in range(len(tokens) - LOOP_WORDS + 1):
        starts.setdefault(tuple(tokens[index : index + LOOP_WORDS]), []).append(index)
    return any(_apart(found) >= LOOP_REPEATS for found in starts.values())


def _apart(starts: list[int]) -> int:
    """How many of ``starts`` (ascending) are at least ``LOOP_WORDS`` apart, greedily."""
    count, last = 0, -LOOP_WORDS
    for start in starts:
        if start >= last + LOOP_WORDS:
            count, last = count + 1, start
    return count
