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

Three more readers check the report against what readers do with the room (issue 43;
``--llm oracle:picks-shown``, ``oracle:avoids-shown``, ``oracle:abstains``):

- ``RoomReader`` is the oracle, but its guess reads the room the prompt shows (its
  name, who is here: the frame's ``You are X in ROOM.`` and ``Also here:`` lines):
  ``picks`` guesses among the options shown there, as small models pick what the
  prompt names, or ``avoids`` them, as a reader that knows the gold is never in sight
  would; with none shown, or every one, it guesses among all four.
- ``AbstainingReader`` says it does not know whenever its prompt shows no memory at
  all (no memory between the fences, no summary: ``none``, or ``evidence`` with
  nothing to show); otherwise it always answers: the gold where the evidence is shown,
  else the oracle's guess, abstention questions included (a false answer).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from engine.agents.prompt import FENCE, LONGTERM_HEADING, RECENT_HEADING, memory_lines
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
        return replace_tokens(_reply(letters(known.options)[self.choose(before, line, known)]),
                              prompt)  # fmt: skip

    def choose(self, before: str, line: str, known: Known) -> int:
        """The index of the option it answers, ``before``: the prompt before the question
        ``line``."""
        if not known.evidence:
            return known.options.index(DONT_KNOW)
        if all(_shown(text, before) for text in _lines(known.evidence)):
            return known.options.index(known.gold)
        return self.guess(before, line, known)

    def guess(self, before: str, line: str, known: Known) -> int:
        """A real option, the same for a question in every configuration."""
        real = [i for i, o in enumerate(known.options) if o != DONT_KNOW]
        return random.Random(f"{self.seed}\n{line}").choice(real)

    async def aclose(self) -> None:
        return None


class RoomReader(OracleBackend):
    """The oracle, guessing among what the room shows (``picks``) or the rest
    (``avoids``)."""

    def __init__(self, known: Mapping[str, Known], seed: int = 0,
                 way: Literal["picks", "avoids"] = "picks") -> None:  # fmt: skip
        super().__init__(known, seed)
        self.way = way
        self.name = f"oracle:{way}-shown"

    def guess(self, before: str, line: str, known: Known) -> int:
        shows = room_shows(before)
        real = [i for i, o in enumerate(known.options) if o != DONT_KNOW]
        seen = [i for i in real if shows(known.options[i])]
        wanted = seen if self.way == "picks" else [i for i in real if i not in seen]
        return random.Random(f"{self.seed}\n{line}").choice(wanted or real)


class AbstainingReader(OracleBackend):
    """Says "I don't know" with no memory in the prompt, and otherwise never."""

    name = "oracle:abstains"

    def choose(self, before: str, line: str, known: Known) -> int:
        if not remembers(before):
            return known.options.index(DONT_KNOW)
        if known.evidence and all(_shown(text, before) for text in _lines(known.evidence)):
            return known.options.index(known.gold)
        return self.guess(before, line, known)


ALSO_HERE = "   Also here: "
"""How the prompt's last line of the situation names who is here (``prompt_fit.Frame``)."""


def room_shows(prompt: str) -> Callable[[str], bool]:
    """Whether ``prompt``'s situation shows an option: the current room's name (``You
    are Ada in The Hall.``) or someone here (``Exits: north   Also here: Bo, Pat``);
    nothing for a prompt without those lines (``evidence``)."""
    lines = prompt.splitlines()
    at = next((i for i in range(len(lines) - 1, 0, -1)
               if lines[i].startswith("Exits: ") and ALSO_HERE in lines[i]), None)  # fmt: skip
    if at is None or not lines[at - 1].startswith("You are "):
        return lambda _option: False
    where = lines[at - 1]
    here = {
        n.removesuffix(" (asleep)").strip() for n in lines[at].split(ALSO_HERE, 1)[1].split(", ")
    }
    return lambda option: option in here or f" in {option}." in where


def remembers(prompt: str) -> bool:
    """Whether ``prompt`` shows any memory: a summary, or a memory between the fences."""
    lines = prompt.splitlines()
    if LONGTERM_HEADING in lines or RECENT_HEADING in lines:
        return True
    fences = [i for i, line in enumerate(lines) if line == FENCE]
    return len(fences) >= 2 and fences[-1] - fences[0] > 1


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
