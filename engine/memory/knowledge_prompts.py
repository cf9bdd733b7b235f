"""The knowledge pass's two prompts (seed 000), pure.

Both are completion-style text sent raw (no chat template) and end on a cue line
("JSON array:", "JSON object:") so a model starts its JSON at once; small models read
them, so they are short. The extraction prompt shows what the agent noted, lived and
said since its last pass (notes whole, conversations cut to their last lines); the
consolidation prompt shows the bank's size and tier, the entries (numbered, not by
id) and the candidates. The replies' constraints are in
``engine.memory.knowledge_grammar``, re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from engine.memory.knowledge import KNOWLEDGE_TYPES, TYPE_MEANINGS, Entry
from engine.memory.knowledge_candidates import PROMPT_EXAMPLES
from engine.memory.knowledge_grammar import CANDIDATES_MAX, TAGS_MAX
from engine.memory.knowledge_grammar import (
    CONSOLIDATION_CONSTRAINT as CONSOLIDATION_CONSTRAINT,
)
from engine.memory.knowledge_grammar import EXTRACTION_CONSTRAINT as EXTRACTION_CONSTRAINT
from engine.memory.knowledge_grammar import consolidation_constraint as consolidation_constraint
from engine.memory.knowledge_grammar import extraction_constraint as extraction_constraint
from engine.memory.knowledge_ops import Candidate, Capacity, Tier, candidate_line, entry_line

EXTRACTION_CUE: Final = "JSON array:"
CONSOLIDATION_CUE: Final = "JSON object:"
LINES_PER_PARTNER: Final = 20
LINE_MAX: Final = 500
"""Characters of one conversation line, at most."""

NOTES_HEADING: Final = "## Notes written or changed since the last pass"
WORKING_HEADING: Final = "## Working memory since the last pass"
TALK_HEADING: Final = "## Conversations"

_DATE: Final = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})")

_TIERS: Final[dict[Tier, tuple[str, ...]]] = {
    "GENEROUS": (
        "ADD new knowledge freely; SKIP only exact repeats.",
        "UPDATE an entry when new information really improves it.",
        "DELETE rarely: only what is clearly wrong or superseded.",
    ),
    "SELECTIVE": (
        "ADD only knowledge that is really new and useful.",
        "Merge related entries: UPDATE one, DELETE the others.",
        "DELETE entries with 0 accesses that are generic or obvious.",
    ),
    "HEAVY_CUT": (
        "Prefer UPDATE to ADD: fold new knowledge into existing entries.",
        "Merge and compress hard: combine related entries into one.",
        "DELETE entries with few accesses that are generic or repeated.",
    ),
}
_EXAMPLE_REPLY: Final = (
    '{"operations": [{"action": "KEEP", "id": 1}, {"action": "UPDATE", "id": 2, "content":'
    ' "<the whole new text>", "tags": ["<tag>"]}, {"action": "DELETE", "id": 3},'
    ' {"action": "ADD", "candidate": 0}, {"action": "ADD", "candidate": 1, "type": "fact",'
    ' "content": "<the text to add>", "tags": ["<tag>"]}, {"action": "SKIP", "candidate": 2}]}'
)


def extraction_prompt(
    name: str,
    now_sim: str,
    notes: Sequence[tuple[str, str]],
    summaries: Sequence[str],
    memories: Sequence[str],
    conversations: Mapping[str, Sequence[str]],
) -> str:
    """The prompt that asks for candidates: the instructions, then ``notes`` (title,
    whole body), the working memory (``summaries``, then ``memories``) and the last
    lines said to and by the agent per partner, each section saying when it is empty."""
    who, now = _one_line(name), _when(now_sim)
    dated = _DATE.match(now_sim.strip())
    example = f" ({dated.group(1)})" if dated else ""
    kinds = [
        f"- {kind}: {TYPE_MEANINGS[kind]}. Example: {PROMPT_EXAMPLES[kind]}"
        for kind in KNOWLEDGE_TYPES
    ]
    return "\n".join(
        [
            f"You pick out what {who}, a character in a text world (rooms joined by exits,"
            " other characters, notes, building with @dig), should remember for good from"
            " what they noted, lived and said since the last time.",
            f"It is now {now} in the world.",
            "",
            "Each item has one of these types (mistakes first: they stop a failure from"
            " happening twice):",
            *kinds,
            "",
            "Rules:",
            "- Take the knowledge FROM the notes (what they say), not that a note was written.",
            "- A mistake is written as advice: what to do instead.",
            "- Each item stands alone: name the people, places and things.",
            f"- Write dates as world dates{example}, never 'today' or 'recently'.",
            f"- Up to {TAGS_MAX} short lowercase tags: people, places, topics.",
            "- Leave out anything trivial: greetings, looking around, small talk.",
            f"- At most {CANDIDATES_MAX} items; [] when nothing is worth keeping.",
            'Reply with a JSON array only: [{"type": "...", "content": "...", "tags": ["..."]}]',
            "",
            *_notes(notes),
            *_working(summaries, memories),
            *_conversations(conversations),
            EXTRACTION_CUE,
            "",
        ]
    )


def _notes(notes: Sequence[tuple[str, str]]) -> list[str]:
    if not notes:
        return ["(No notes were written or changed since the last pass.)", ""]
    lines = [NOTES_HEADING]
    for title, body in notes:
        lines += [f"### {_one_line(title)}", body.strip() or "(empty)", ""]
    return lines


def _working(summaries: Sequence[str], memories: Sequence[str]) -> list[str]:
    summaries = [s for s in (_one_line(s) for s in summaries) if s]
    memories = [m for m in (_one_line(m) for m in memories) if m]
    if not summaries and not memories:
        return ["(Nothing in working memory since the last pass.)", ""]
    lines = [WORKING_HEADING]
    if summaries:
        lines += ["Summaries:", *(f"- {s}" for s in summaries)]
    if memories:
        lines += ["Memories not yet summarized:", *(f"- {m}" for m in memories)]
    return [*lines, ""]


def _conversations(conversations: Mapping[str, Sequence[str]]) -> list[str]:
    lines: list[str] = []
    for partner, said in conversations.items():
        kept = [line for line in (_one_line(s) for s in said) if line]
        if kept:
            lines += [f"### with {_one_line(partner)}", *map(_cut, kept[-LINES_PER_PARTNER:]), ""]
    if not lines:
        return ["(No conversations since the last pass.)", ""]
    return [TALK_HEADING, *lines]


def consolidation_prompt(
    name: str,
    capacity: Capacity,
    shown: Sequence[tuple[int, Entry]],
    left_out: int,
    candidates: Sequence[Candidate],
) -> str:
    """The prompt that asks for operations on the bank: the seed's instructions and the
    tier's, the Capacity Status, the ``shown`` entries by number (saying how many more
    are kept unseen) and the candidates by index."""
    who = _one_line(name)
    total = len(shown) + left_out
    tier = list(_TIERS[capacity.tier])
    if capacity.tier == "HEAVY_CUT" and total:
        tier.append(
            f"Bring the {total} entries down by 10-20%, to about {max(1, round(total * 0.85))}."
        )
    entries = [entry_line(k, entry) for k, entry in shown] or ["(none yet)"]
    if left_out:
        entries.append(f"({left_out} more entries not shown are kept as they are)")
    return "\n".join(
        [
            f"You keep the long-term knowledge of {who}, a character in a text world."
            " Compare the new candidate memories with the existing entries and decide what"
            " to do with each.",
            "",
            "For each existing entry, by its number:",
            "- KEEP: still right, and no candidate repeats it.",
            "- UPDATE: new information improves it; give its whole new content and tags.",
            "- DELETE: outdated, superseded, contradicted or of little value.",
            "For each candidate, by its index:",
            "- ADD: knowledge no existing entry holds.",
            "- SKIP: an existing entry already holds it (after your updates).",
            "Reply with a JSON object only, of this form (id: an entry's number; candidate:"
            " a candidate's index):",
            _EXAMPLE_REPLY,
            "",
            "## Capacity Status",
            _status(capacity, total),
            f"Tier: {capacity.tier}. At this tier:",
            *(f"- {line}" for line in tier),
            "",
            "## Existing entries",
            *entries,
            "",
            "## Candidates",
            *([candidate_line(i, c) for i, c in enumerate(candidates)] or ["(none)"]),
            "",
            CONSOLIDATION_CUE,
            "",
        ]
    )


def _status(capacity: Capacity, entries: int) -> str:
    held = f"The bank holds {entries} entries, about {capacity.tokens} tokens"
    if capacity.percent is None or not capacity.context_tokens:
        return f"{held}; its capacity is not known."
    return f"{held}: {capacity.percent:.1f}% of its capacity of {capacity.context_tokens} tokens."


def _when(now_sim: str) -> str:
    """``2026-01-03T14:20`` as ``2026-01-03 14:20``; anything else as it is."""
    match = _DATE.match(now_sim.strip())
    return f"{match.group(1)} {match.group(2)}" if match else _one_line(now_sim)


def _cut(line: str) -> str:
    return line if len(line) <= LINE_MAX else line[: LINE_MAX - 1] + "…"


def _one_line(text: str) -> str:
    return " ".join(text.split())
