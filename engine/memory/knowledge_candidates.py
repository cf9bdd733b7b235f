"""Phase 1's reply, read (pure): the candidate memories a knowledge pass extracted.

A candidate is ``{type, content, tags}``: the type one of seed 000's six (in any case),
the content on one line, the tags lowercased (``clean_tags``). The ``read_*`` helpers
take such values out of whatever a model wrote, and drop what it copied from a prompt's
example instead of writing ("...", "<tag>", a whole example sentence);
``engine.memory.knowledge_ops`` reads its operations with them too, and re-exports
this module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.memory.json_reply import parse_json_reply
from engine.memory.knowledge import KNOWLEDGE_TYPES, KnowledgeType, clean_tags

_PLACEHOLDER: Final = re.compile(r"^(?:\.{2,}|…|<[^<>]*>)$")
"""What a model copies from a prompt's example instead of writing: "...", "<tag>"."""

PROMPT_EXAMPLES: Final[dict[KnowledgeType, str]] = {
    "mistake": "Going west from the Hall fails: it has no west exit. Look at the exits first.",
    "skill": "@dig <room name> -> <description> makes a new room joined to this one.",
    "procedure": "From the Square to the Library: go north, then go east, then go up.",
    "fact": "Orla runs the bakery east of the Square; she opens it at dawn.",
    "observation": "Tamsin answers every question about the old mill with a riddle.",
    "preference": "Orla wants notes short, with the place in the title.",
}
"""The extraction prompt's example of each type, mistakes first. A small model copies
them as its own knowledge; such a copy is dropped like a placeholder."""
_COPIES: Final = frozenset(" ".join(text.split()).casefold() for text in PROMPT_EXAMPLES.values())


class Candidate(BaseModel):
    """A memory phase 1 proposes: tags lowercased, content on one line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: KnowledgeType
    content: str = Field(min_length=1)
    tags: list[str] = []

    @field_validator("tags")
    @classmethod
    def _lowercase(cls, tags: list[str]) -> list[str]:
        return clean_tags(tags)


def parse_candidates(value: Any) -> list[Candidate]:
    """The valid candidates in a parsed reply: a list, or an object holding one under
    ``memories`` or ``candidates``. Items without a known type or a content are dropped."""
    if isinstance(value, dict):
        value = value.get("memories", value.get("candidates"))
    if not isinstance(value, list):
        return []
    found = []
    for item in value:
        if not isinstance(item, dict):
            continue
        kind, content = read_kind(item.get("type")), read_text(item.get("content"))
        if kind is not None and content is not None:
            found.append(Candidate(type=kind, content=content, tags=read_tags(item.get("tags"))))
    return found


def candidates_from_reply(text: str) -> list[Candidate]:
    """``parse_candidates`` of a reply's JSON; raises ``ReplyUnparseable`` when it has none."""
    return parse_candidates(parse_json_reply(text))


def read_kind(raw: Any) -> KnowledgeType | None:
    """One of the six types, in any case and spacing; None for anything else."""
    if not isinstance(raw, str):
        return None
    name = raw.strip().lower()
    return next((kind for kind in KNOWLEDGE_TYPES if kind == name), None)


def read_text(raw: Any) -> str | None:
    """The text on one line; None for none, a placeholder or a copy of an example."""
    text = " ".join(raw.split()) if isinstance(raw, str) else ""
    copied = not text or _PLACEHOLDER.match(text) or text.casefold() in _COPIES
    return None if copied else text


def read_tags(raw: Any) -> list[str]:
    """Tags from a list (or one comma-separated string), cleaned; [] for anything else."""
    if isinstance(raw, str):
        raw = raw.split(",")
    if not isinstance(raw, list):
        return []
    words = [str(tag) for tag in raw if isinstance(tag, str | int) and not isinstance(tag, bool)]
    return [tag for tag in clean_tags(words) if not _PLACEHOLDER.match(tag)]


_MARKUP: Final = re.compile(r"\[(?:\d+|candidate[^\]]*)\]|~\w+>|^\s*\[", re.IGNORECASE)
"""What a model copies from the prompt's layout: ``[3]``, ``[candidate 0]``, ``~Ada>``,
a leading ``[label]``."""
_WORD: Final = re.compile(r"[^\W\d_]{2,}")
WORDS_MIN: Final = 4
"""Knowledge worth keeping is a statement: a bare word or two ("Bread") is not one."""


def substantive(text: str) -> bool:
    """Whether ``text`` reads as knowledge: at least ``WORDS_MIN`` words, mostly letters,
    and none of the prompt's markup. Small models answer under the schema with fragments
    of the transcript ("[1] You add to your note 'Bread' [2], 3, you say,") or a bare
    title; those are dropped (``engine.agents.knowledge_pass``)."""
    if _MARKUP.search(text):
        return False
    words = _WORD.findall(text)
    letters = sum(len(word) for word in words)
    visible = sum(1 for char in text if not char.isspace())
    return len(words) >= WORDS_MIN and letters >= 0.6 * visible


NOTE_CARRIED: Final = 0.6
"""A note counts as carried by a text holding this share of its words."""
NOTE_CHARS: Final = 400
_CONTENT_WORD: Final = re.compile(r"[^\W\d_]{3,}")


def carries(text: str, note: str) -> bool:
    """Whether ``text`` holds at least ``NOTE_CARRIED`` of the words (3+ letters) of
    ``note``: a model that rephrased a note keeps most of its words; one that wrote
    about something else, or a fragment, does not."""
    wanted = {w.casefold() for w in _CONTENT_WORD.findall(note)}
    if not wanted:
        return True
    held = {w.casefold() for w in _CONTENT_WORD.findall(text)}
    return len(wanted & held) >= NOTE_CARRIED * len(wanted)


def note_candidates(
    notes: Sequence[tuple[str, str]], found: Sequence[Candidate]
) -> list[Candidate]:
    """A ``fact`` for each note (title, body) that no candidate in ``found`` carries:
    ``"<title>: <its newest entry>"``, on one line, at most ``NOTE_CHARS`` (cut at a
    word), tagged with the title's words. The deterministic floor under a weak model's
    extraction: what an agent wrote down reaches its bank even when the model's reply
    was empty or fragments."""
    made = []
    for title, body in notes:
        newest = " ".join(body.rsplit("\n---\n", 1)[-1].split())
        text = f"{' '.join(title.split())}: {newest}"
        if len(text) > NOTE_CHARS:
            text = text[:NOTE_CHARS].rsplit(" ", 1)[0] + "..."
        if not substantive(text) or any(carries(c.content, newest) for c in found):
            continue
        made.append(Candidate(type="fact", content=text, tags=clean_tags(title.split())[:6]))
    return made
