"""Dreams (Miniworld's ``dream``), pure: the fragments a dream is made of, the prompt
that asks for it, and the dream made without a model when none can be had.

A dream mixes old and recent: a shuffled sample of the agent's past summaries (what it
lived long ago), its newest memories and its knowledge entries, ``FRAGMENTS`` of each
at most, drawn by a seeded generator so the same agent at the same memory count dreams
of the same fragments. The model is asked for three to five first-person sentences,
strange but made of those fragments (the summary grammar constrains it to one
paragraph of plain sentences). The fallback (``montage``) strings the fragments
together as a dream would: it is deterministic and always reads as one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from engine.memory.tokens import CHARACTERS, TokenCounter, cut_text, fits

FRAGMENTS: Final = 3
FRAGMENT_CHARS: Final = 200
CUE: Final = "DREAM:"
NOTE_TITLE: Final = "Dreams"


def sample_fragments(
    old: Sequence[str], recent: Sequence[str], known: Sequence[str], seed: str
) -> list[str]:
    """Up to ``FRAGMENTS`` of each of ``old`` (past summaries), ``recent`` (the newest
    memories) and ``known`` (knowledge entries), shuffled together; the same ``seed``
    draws the same ones."""
    rng = random.Random(seed)
    chosen: list[str] = []
    for pool in (old, recent, known):
        kept = [_cut(" ".join(text.split())) for text in pool if text.strip()]
        chosen += rng.sample(kept, min(FRAGMENTS, len(kept)))
    rng.shuffle(chosen)
    return chosen


def dream_prompt(
    name: str, fragments: Sequence[str], budget: int | None = None,
    counter: TokenCounter = CHARACTERS,
) -> str:  # fmt: skip
    """The prompt that asks for ``name``'s dream of ``fragments``, within ``budget`` as
    ``counter`` counts (None: any length): over it, each fragment is cut to an equal
    share of the room the instructions leave, and the last fragments go if even that is
    too much."""
    prompt = _dream_prompt(name, fragments)
    if budget is None or fits(prompt, budget, counter):
        return prompt
    room = budget - counter.count(_dream_prompt(name, []))
    share = room // max(1, len(fragments)) - 3  # "- " and the newline
    kept = [piece for piece in (cut_text(f, share, counter) for f in fragments) if piece]
    while kept and not fits(_dream_prompt(name, kept), budget, counter):
        kept.pop()
    return _dream_prompt(name, kept)


def _dream_prompt(name: str, fragments: Sequence[str]) -> str:
    who = " ".join(name.split())
    lines = [f"- {fragment}" for fragment in fragments] or ["- (a quiet, empty room)"]
    return "\n".join(
        [
            f"{who} falls asleep. Pieces of what {who} lived and knows drift by:",
            *lines,
            "",
            f"Write the dream {who} has now, in first person (I, me, my): three to five"
            " sentences, strange and vivid, made of those pieces. Begin at once with the"
            " dream: no introduction, no commentary.",
            "",
            CUE,
            "",
        ]
    )


def montage(fragments: Sequence[str], seed: str) -> str:
    """A dream made of ``fragments`` without a model (the fallback)."""
    if not fragments:
        return "I dreamt of nothing at all: a grey room, and then morning."
    rng = random.Random(seed)
    links = ("Then", "Somehow", "Suddenly", "Far away", "And again")
    parts = [f"I dreamt that {_lower(fragments[0])}"]
    for fragment in fragments[1:4]:
        parts.append(f"{rng.choice(links)}, {_lower(fragment)}")
    parts.append("Then I woke.")
    return " ".join(_sentence(part) for part in parts)


def _cut(text: str) -> str:
    return text if len(text) <= FRAGMENT_CHARS else text[:FRAGMENT_CHARS].rsplit(" ", 1)[0] + "…"


_COMMON: Final = frozenset({"you", "your", "the", "a", "an", "it", "there", "this", "that"})


def _lower(text: str) -> str:
    """A fragment to go on after a comma: its end stop off, and its first word in lower
    case when that is a common word ("You went north" -> "you went north"; names stay)."""
    text = text.strip().rstrip(".!?…")
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first.lower() in _COMMON else text


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."
