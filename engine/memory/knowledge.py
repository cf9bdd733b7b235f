"""The knowledge bank's records (pure): what an agent *learned*, typed and correctable.

``agents/<Name>/knowledge/long-term-memory.json`` is a JSON array of ``Entry``; each
entry keeps its id for life (``ltm-<n>-<short random>``), where it came from
(``Source``: memory seq ranges, note titles, pass ids), when it was made and last
changed in simulation time and wall time (``Stamp``), how often retrieval used it, and
its earlier contents (``history``, one item per UPDATE). Tags are lowercased whatever
the model wrote. The types are seed 000's six.

A *pass* (``knowledge/passes/<pass id>.md``) extracts candidates from what the agent
noted, lived and said since the last pass, then consolidates them with the bank; its
id is its UTC start, ``YYYYMMDD-HHMMSS`` (``-2``, ``-3`` ... for a same-second one).
"""

from __future__ import annotations

import re
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from engine import wallclock

KnowledgeType = Literal["skill", "fact", "procedure", "observation", "mistake", "preference"]
KNOWLEDGE_TYPES: Final[tuple[KnowledgeType, ...]] = (
    "mistake",
    "skill",
    "procedure",
    "fact",
    "observation",
    "preference",
)
"""Mistakes first: the seed's priority (they prevent repeated failures)."""

TYPE_MEANINGS: Final[dict[KnowledgeType, str]] = {
    "mistake": "an error or failed approach to avoid, phrased as advice",
    "skill": "a technique or capability the agent showed or learned",
    "procedure": "a step-by-step way of doing something that worked",
    "fact": "a verified piece of knowledge about the world or its people",
    "observation": "a pattern, trend or notable behaviour noticed",
    "preference": "what someone likes or wants, in style or approach",
}

CONTENT_MAX: Final = 400
"""Characters of an entry's content at most, whatever the decoding (``cut_content``)."""
_SENTENCE_END: Final = re.compile(r"[.!?…][\"')\]]*\s")

_STRICT = ConfigDict(extra="forbid")


class Stamp(BaseModel):
    """A moment in both clocks."""

    model_config = _STRICT

    sim: str
    """Simulation time (the world clock, ISO ``YYYY-MM-DDTHH:MM``)."""
    at: str
    """Wall time, UTC ISO 8601 with a ``Z``."""


class Source(BaseModel):
    """Where an entry's knowledge came from (every pass that added or updated it)."""

    model_config = _STRICT

    memories: list[tuple[int, int]] = Field(default_factory=list)
    """Half-open memory seq ranges the passes read."""
    notes: list[str] = Field(default_factory=list)
    """Titles of the notes the passes read."""
    passes: list[str] = Field(default_factory=list)
    """Pass ids, oldest first."""
    copied_from: list[str] = Field(default_factory=list)
    """``Name:entry-id`` of another agent's entry this one was seeded from (``mudsim
    agent new``)."""


class Earlier(BaseModel):
    """An entry's content before an UPDATE replaced it."""

    model_config = _STRICT

    content: str
    tags: list[str]
    until: Stamp
    """When the update replaced it."""
    by_pass: str
    """The pass that replaced it."""


class Entry(BaseModel):
    model_config = _STRICT

    id: str = Field(pattern=r"^ltm-\d+-[0-9a-z]+$")
    type: KnowledgeType
    content: str = Field(min_length=1)
    """Stored whole, never cut to fit a prompt."""
    tags: list[str] = Field(default_factory=list)
    source: Source = Field(default_factory=Source)
    created: Stamp
    updated: Stamp
    access_count: int = Field(default=0, ge=0)
    last_access: Stamp | None = None
    history: list[Earlier] = Field(default_factory=list)

    @field_validator("tags")
    @classmethod
    def _lowercase(cls, tags: list[str]) -> list[str]:
        return clean_tags(tags)


BANK: Final[TypeAdapter[list[Entry]]] = TypeAdapter(list[Entry])
"""The bank file's schema: validates ``long-term-memory.json``."""


def clean_tags(tags: list[str]) -> list[str]:
    """Lowercased, stripped, empty ones and repeats dropped, order kept."""
    seen: dict[str, None] = {}
    for tag in tags:
        tag = " ".join(str(tag).split()).lower()
        if tag:
            seen.setdefault(tag, None)
    return list(seen)


def entry_number(entry_id: str) -> int:
    """The ``<n>`` of ``ltm-<n>-<random>`` (0 for an id not of that shape)."""
    parts = entry_id.split("-")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0


def new_entry_id(taken: list[str] | tuple[str, ...] | set[str], token: str | None = None) -> str:
    """``ltm-<n>-<6 random chars>``, ``n`` one more than the largest in ``taken``."""
    number = max((entry_number(i) for i in taken), default=0) + 1
    return f"ltm-{number}-{token or wallclock.token_hex(3)}"


def cut_content(text: str, limit: int = CONTENT_MAX) -> str:
    """``text`` on one line, within ``limit`` characters: whole as it is when it fits,
    else cut after its last sentence that fits (when that keeps at least half), else at
    its last word boundary with "…" (a single word longer than ``limit`` is cut in it)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    if ends and ends[-1] - 1 >= limit // 2:
        return head[: ends[-1]].rstrip()
    words = head[: limit - 1].rsplit(" ", 1)[0] if " " in head[: limit - 1] else head[: limit - 1]
    return words.rstrip(" ,;:-") + "…"
