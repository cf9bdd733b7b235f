"""Asking an agent a probe question (pure, no I/O): the memory configurations as
prompt parts, the question appended to the prompt, the answer's constraint, and the
reply read back as one of the options.

Configurations are prompts, not re-runs: each shows the agent's memory at the end of
the recorded run in another way, within the same budget as a turn.

- ``full``: the prompt a turn would get (summaries, the verbatim tail, what retrieval
  brings to mind, the handbook), without a turn's examples of good moves (no memory,
  and lines that end on the agent's cue just before a question).
- ``waterfall``: both summaries and the verbatim tail ``[boundary, M)``; nothing else.
- ``gapped``: Miniworld's rule on the same journal: the summaries, but only the newest
  ``immediate_window`` memories verbatim; what lies between is in neither (the gap).
- ``window``: the newest memories verbatim, as many as fit; no summaries.
- ``none``: the room alone.
- ``full+query``: ``full``, but what retrieval brings to mind is what fits the
  question's words (what ``recall`` would find for them), not the situation's.
- ``evidence``: the reader's ceiling (LongMemEval's oracle setting): only the memories
  that hold the answer and the question; no situation, no summaries, nothing else.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from dataclasses import replace

from engine.agents.prompt import PromptParts, memory_lines, one_line
from engine.memory.constraint import Constraint

CONFIGS: tuple[str, ...] = ("full", "waterfall", "gapped", "window", "none", "full+query",
                             "evidence")  # fmt: skip
CEILING = "evidence"
"""The configuration that measures the reader's ceiling (always asked)."""
EVIDENCE_HEAD = "Memories of yours:"
DONT_KNOW = "I don't know"
QUESTION_CUE = "Question for"
"""How the probe's question begins in the prompt (the oracle fake finds it by this)."""


def configured(parts: PromptParts, config: str, *, immediate: int,
               journal: Sequence[str]) -> PromptParts:  # fmt: skip
    """``parts`` (a turn's, ``full``) as ``config`` shows memory; ``journal``: every
    memory's text, oldest first (for ``window``); ``immediate``: the immediate window."""
    if config in ("full", "full+query"):  # examples of good moves are no memory: left out
        return replace(parts, examples=())
    bare = replace(parts, knowledge=(), notes=(), handbook="", examples=())
    if config == "waterfall":
        return bare
    if config == "gapped":
        shown = list(parts.memories)[-immediate:] if immediate > 0 else []
        return replace(bare, memories=shown, backlog=0)
    if config == "window":
        return replace(bare, memories=list(journal), recent_summary="", longterm_summary="",
                       backlog=0)  # fmt: skip
    if config == "none":
        return replace(bare, memories=[], recent_summary="", longterm_summary="", backlog=0)
    raise ValueError(f"no configuration called {config!r} (one of {', '.join(CONFIGS)})")


def evidence_prompt(name: str, profile: str, evidence: Sequence[str]) -> str:
    """The ``evidence`` configuration's prompt: who the agent is and the memories holding
    the answer, nothing else (``question_prompt`` appends the question)."""
    lines = [f"You are {one_line(name)}. {one_line(profile)}".rstrip(), EVIDENCE_HEAD, "---"]
    lines += memory_lines(evidence)
    return "\n".join([*lines, "---"])


def letters(options: Sequence[str]) -> list[str]:
    return list(string.ascii_uppercase[: len(options)])


def question_prompt(prompt: str, name: str, question: str, options: Sequence[str]) -> str:
    """The agent's prompt (its cue ``~Name>`` left off) with the question and its
    lettered options appended, ending on the answer's cue."""
    cue = f"~{name}>"
    head = prompt[: -len(cue)].rstrip("\n") if prompt.endswith(cue) else prompt
    lines = [f"{QUESTION_CUE} {name}: {one_line(question)}"]
    lines += [f"{letter}) {one_line(option)}" for letter, option in zip(letters(options), options,
                                                                        strict=True)]  # fmt: skip
    lines.append(f"{name}'s answer (one letter):")
    return head + "\n" + "\n".join(lines)


def answer_constraint(options: Sequence[str]) -> Constraint:
    """One option letter: a grammar for the embedded model, a JSON schema (a one-key
    object whose value is an enum of the letters) over HTTP."""
    choices = letters(options)
    gbnf = "root ::= " + " | ".join(f'"{c}"' for c in choices)
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": choices}},
              "required": ["answer"]}  # fmt: skip
    return Constraint(gbnf=gbnf, json_schema=schema)


_LETTER = re.compile(r"([A-Za-z])[).]?|\(([A-Za-z])\)")
"""A bare letter: ``B``, ``B)``, ``B.`` or ``(B)``, the whole of what is read."""


def read_answer(reply: str, options: Sequence[str]) -> str | None:
    """The option a reply names, strictly, or None (``unparsed``): a JSON object whose
    ``answer`` names one (``{"answer": "B"}``), or a bare reply that does, all of it;
    either names an option as its letter (``B``, ``B)``, ``B.``), as its exact text, or
    as the prompt's own line for it (``B) The Yard``), case and the ends' blanks aside.
    Anything else (``A good guess would be C``) names none."""
    text = reply.strip()
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        answer = value.get("answer")
        return _named(answer.strip(), options) if isinstance(answer, str) else None
    return _named(text, options)


def _named(text: str, options: Sequence[str]) -> str | None:
    """The option ``text`` is exactly (its text, its letter, or its lettered line)."""
    folded = text.casefold()
    for option in options:
        if folded == option.strip().casefold():
            return option
    choices = letters(options)
    letter = _LETTER.fullmatch(text)
    if letter:
        found = (letter[1] or letter[2]).upper()
        return options[choices.index(found)] if found in choices else None
    for choice, option in zip(choices, options, strict=True):
        if folded in {f"{choice}) {option}".casefold(), f"{choice}. {option}".casefold()}:
            return option
    return None
