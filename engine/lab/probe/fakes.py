"""Two fake answerers that prove the probe measures the prompt, not its scorer
(shipped as product code, as ``engine.llm.fake`` is; ``mudsim probe --llm oracle:`` or
``--llm blind:``).

- ``OracleBackend`` answers right exactly when every memory holding the evidence is in
  the prompt (its beginning, word for word: as a memory line, or kept in a summary);
  otherwise it guesses among the four real options (chance, 25%). Its guess depends on
  the seed and the question only, so two configurations' answers differ exactly where
  their prompts show different evidence. With no evidence to find (an abstention
  question) it says it does not know.
- ``BlindBackend`` always guesses: chance everywhere.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.agents.prompt import memory_lines
from engine.lab.probe.asking import DONT_KNOW, QUESTION_CUE, letters, question_prompt
from engine.llm.request import Generation, LLMRequest


@dataclass(frozen=True)
class Known:
    """What the oracle knows of a question: its options, its gold answer, and the
    memories that hold the evidence (their texts)."""

    options: tuple[str, ...]
    gold: str
    evidence: tuple[str, ...]


def _asked(prompt: str) -> tuple[str, str]:
    """(the part of the prompt before the question, the question and its options: two
    questions may read the same, "Which of these happened first?")."""
    at = prompt.rfind("\n" + QUESTION_CUE + " ")
    if at < 0:
        return prompt, ""
    block = prompt[at + 1 :].splitlines()[:-1]  # the answer's cue left off
    return prompt[:at], "\n".join(block)


def _reply(letter: str) -> Generation:
    text = json.dumps({"answer": letter})
    return Generation(text, completion_tokens=3)


class BlindBackend:
    name = "blind"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    async def generate(self, request: LLMRequest) -> Generation:
        prompt = request.prompt()
        options = [line for line in prompt.splitlines() if line[1:3] == ") "]
        real = [line[0] for line in options if line[3:] != DONT_KNOW] or ["A"]
        return replace_tokens(_reply(self.rng.choice(real)), prompt)

    async def aclose(self) -> None:
        return None


class OracleBackend:
    name = "oracle"

    def __init__(self, known: Mapping[str, Known], seed: int = 0) -> None:
        self.known = known
        """A question as the prompt asks it (``question_block``) -> what the oracle knows."""
        self.seed = seed

    async def generate(self, request: LLMRequest) -> Generation:
        prompt = request.prompt()
        before, line = _asked(prompt)
        known = self.known.get(line)
        if known is None:
            return replace_tokens(_reply("A"), prompt)
        choices = letters(known.options)
        if not known.evidence:
            return replace_tokens(_reply(choices[known.options.index(DONT_KNOW)]), prompt)
        if all(_shown(text, before) for text in _lines(known.evidence)):
            return replace_tokens(_reply(choices[known.options.index(known.gold)]), prompt)
        real = [c for c, o in zip(choices, known.options, strict=True) if o != DONT_KNOW]
        guess = random.Random(f"{self.seed}\n{line}").choice(real)  # the same in every config
        return replace_tokens(_reply(guess), prompt)

    async def aclose(self) -> None:
        return None


def _lines(texts: Sequence[str]) -> list[str]:
    return [line.strip() for text in texts for line in memory_lines([text])]


SHOWN_CHARS = 40
"""A memory counts as shown when its first this many characters are in the prompt: as a
line of its own, or kept word for word in a summary (an extractive one cuts the rest)."""


def _shown(line: str, prompt: str) -> bool:
    return line[:SHOWN_CHARS] in prompt


def replace_tokens(generation: Generation, prompt: str) -> Generation:
    """The reply, with the prompt's tokens estimated (four characters a token)."""
    return Generation(generation.text, prompt_tokens=max(1, len(prompt) // 4),
                      completion_tokens=generation.completion_tokens)  # fmt: skip


def question_block(agent: str, question: str, options: Sequence[str]) -> str:
    """A question as the prompt asks it: its line and its lettered options
    (``asking.question_prompt``)."""
    asked = question_prompt("", agent, question, options)
    return "\n".join(asked.splitlines()[1:-1])
