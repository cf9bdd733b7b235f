"""The handbook written by the model (pure): seed 004's prompt, its reply's constraint,
and the reply read and checked.

One call: INIT when the agent has no handbook yet (from the pass records alone),
INCREMENTAL when it has one (its files and the pass records since: merge, deduplicate
keeping the more precise, prune what newer records contradict, keep the structure).
The prompt names each record by its path, which MEMORY.md's ``rollout_files:`` cite.
It fits its budget (``num_ctx`` less the reply, as the model's ``TokenCounter``
counts) whatever the sizes: after the instructions, the existing memory_summary.md,
MEMORY.md and skills, and the records together, share that one budget, each file
and the records getting an equal share, and a part that needs less than its share
leaving the rest to the others; a file over its share is cut to it (at its end, marked
``…``); the records fill theirs newest first, the first that does not fit whole cut
to what is left, the older left out and counted. No part is ever shown whole for
being the newest. When even that cannot fit (the instructions alone, or no room for
the newest record), ``HandbookPromptTooLong``: no call is made, and the rules write
the handbook.

The reply is seed 004's JSON object ``{memory_summary, memory_md, skills: [{name,
skill_md}]}``, constrained by ``HANDBOOK_CONSTRAINT`` (a JSON schema for Ollama's
``format``, a bounded GBNF twin for the embedded model) and checked by
``read_handbook``: sections, comment blocks, kebab-case names, front matter. A reply
that fails is asked once more, then the rules write the handbook
(``engine.memory.handbook_rules``). Sizes are not a failure: ``enforce_limits`` cuts an
oversized summary down, ``split_clusters`` splits a long cluster, and ``bound_memory_md``
keeps MEMORY.md within ``MEMORY_BYTES``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

from engine.memory.constraint import Constraint
from engine.memory.handbook import (
    CLUSTER_BULLETS,
    PROFILE_WORDS,
    SUMMARY_TOKENS,
    TIPS_MAX,
    Handbook,
    enforce_limits,
    memory_md_problems,
    routing_rows,
    skill_problems,
    split_clusters,
    summary_problems,
)
from engine.memory.handbook_rules import bound_memory_md
from engine.memory.json_reply import ReplyUnparseable, parse_json_reply
from engine.memory.tokens import CHARACTERS, TokenCounter, cut_text, fits

Mode = Literal["INIT", "INCREMENTAL"]
CUE: Final = "JSON handbook:"
"""The prompt's last line (not a knowledge pass's cue, so a stub tells them apart)."""
SKILLS_MAX: Final = 5
"""Skills one reply may write (the grammar and the schema)."""


class HandbookInvalid(ValueError):
    """The reply parsed, but is not a usable handbook (the reason is the message)."""


def handbook_prompt(
    name: str,
    mode: Mode,
    records: Sequence[tuple[str, str]],
    existing: Handbook | None,
    budget_chars: int,
    counter: TokenCounter = CHARACTERS,
    older: int = 0,
) -> str:
    """The prompt within ``budget_chars`` as ``counter`` counts (characters, or the
    model's tokens): the instructions for ``mode``, the existing files (INCREMENTAL),
    then the pass ``records`` (path, text; oldest first; ``older`` more, older still,
    not given). Everything after the instructions shares the one budget (see the
    module). ``HandbookPromptTooLong`` when it cannot fit: the instructions alone, or no
    room for the newest record."""
    who = " ".join(name.split())
    head = [
        f"You keep the handbook of {who}, a character in a text world (rooms joined by"
        " exits, other characters, notes, building with @dig). Each knowledge pass of"
        f" {who} left a record of what it learned; you consolidate them into three"
        " documents, returned as one JSON object.",
        "",
        *_mode_lines(mode, who),
        "",
        "1. memory_summary: always read by the character, so short and useful. Exactly"
        " these three sections:",
        f"## Profile — who {who} is, what they want, how they go about things, who they"
        f" know (at most {PROFILE_WORDS} words).",
        f"## General Tips — a numbered list (1. 2. ...), at most {TIPS_MAX} items, the"
        " most useful first; each one concise, actionable sentence.",
        "## Routing Index — a table `| Topic | Location | Keywords |` with a row per"
        " MEMORY.md cluster (`MEMORY.md > Topic`) and per skill (`skills/<name>/SKILL.md`).",
        f"The whole must stay under {SUMMARY_TOKENS} tokens.",
        "2. memory_md: topic clusters. Each is a `## Topic` heading, then this comment"
        " block, then specific bullets saying when, why and how:",
        "<!--\nrollout_files:\n  - knowledge/passes/<id>.md\nkeywords: [word, word]\n-->",
        f"rollout_files lists the records that taught the cluster. Split a cluster of"
        f" more than {CLUSTER_BULLETS} bullets.",
        "3. skills: only for a procedure seen in 3 or more different pass records (never a"
        " one-off fact). name is kebab-case (bake-bread); skill_md is front matter"
        " (name, description, keywords), then `# Skill: ...`, `## When to Use`,"
        " `## Procedure` (numbered steps with the real commands of this world, such as"
        " `go north` or `examine the oven`), `## Gotchas`, `## Examples`. [] when none.",
        "Never write a password, key or token: say what it is for, never its value.",
        'Reply with JSON only: {"memory_summary": "...", "memory_md": "...", "skills":'
        ' [{"name": "...", "skill_md": "..."}]}',
        "",
    ]
    tail = ["", CUE, ""]
    size = len if counter is CHARACTERS else counter.count
    documents = _documents(existing) if existing is not None else []
    fixed = [*head, *tail, RECORDS_HEADING, f"({len(records) + older} older records are not shown)"]
    room = budget_chars - _size(fixed, size)
    for _ in range(FIT_TRIES):  # a tokenizer may count the whole above its parts
        shown = _shared(documents, records, older, room, size, counter)
        prompt = "\n".join([*head, *shown, *tail])
        if not shown or room <= 0:
            break
        if fits(prompt, budget_chars, counter):
            return prompt
        room -= max(1, size(prompt) - budget_chars)
    raise HandbookPromptTooLong(
        f"the handbook prompt cannot fit in {budget_chars} tokens (num_ctx less the reply):"
        f" its instructions take {_size([*head, *tail], size)}"
    )


class HandbookPromptTooLong(ValueError):
    """The prompt cannot fit its budget (no call is made: the rules write the handbook)."""


RECORDS_HEADING: Final = "## Pass records"
MIN_PART: Final = 32
"""Tokens a cut record shows at least (below, it is left out)."""
FIT_TRIES: Final = 4


def _mode_lines(mode: Mode, who: str) -> list[str]:
    if mode == "INIT":
        return [f"Mode: INIT. {who} has no handbook yet: build it from the records below."]
    return [
        f"Mode: INCREMENTAL. Merge the new records into {who}'s existing handbook (shown"
        " first): keep its structure; when a new learning repeats an old one keep the more"
        " precise; remove what a newer learning contradicts; re-cluster if the new"
        " learnings call for it. Return the complete files, not the changes."
    ]


def _documents(existing: Handbook) -> list[tuple[str, str]]:
    """The existing files, (heading, text), in the order the prompt shows them."""
    return [
        ("## Existing memory_summary.md", existing.memory_summary.strip()),
        ("## Existing MEMORY.md", existing.memory_md.strip()),
        *((f"## Existing skill {name}", text.strip()) for name, text in existing.skills.items()),
    ]


def _shared(
    documents: Sequence[tuple[str, str]], records: Sequence[tuple[str, str]], older: int,
    room: int, size: Callable[[str], int], counter: TokenCounter,
) -> list[str]:  # fmt: skip
    """The existing files and the records within ``room``: each file, and the records
    together, get an equal share of it, a part smaller than its share leaving the rest
    to the others (``_shares``); a file over its share is cut to it; the records fill
    theirs newest first, the first that does not fit whole cut to what is left (at
    least ``MIN_PART``), the older left out and counted. [] when there are records and
    not even the newest has room."""
    blocks = [[heading, text, ""] for heading, text in documents]
    newest_first = [[f"### {path}", text.strip(), ""] for path, text in reversed(records)]
    costs = [_size(block, size) for block in blocks]
    shares = _shares([*costs, sum(_size(b, size) for b in newest_first)], room)
    lines: list[str] = []
    for block, cost, share in zip(blocks, costs, shares, strict=False):
        if cost > share:
            left = share - _size([block[0], ""], size) - 1
            block[1] = (
                cut_text(block[1], left, counter) if left >= MIN_PART else "(too long to show)"
            )
        lines += block
    left, kept = shares[-1], []
    for block in newest_first:
        cost = _size(block, size)
        if cost > left:
            text_room = left - _size([block[0], ""], size) - 1
            if text_room >= MIN_PART:
                kept.append([block[0], cut_text(block[1], text_room, counter), ""])
            break
        kept.append(block)
        left -= cost
    if records and not kept:
        return []
    left_out = len(records) - len(kept) + older
    note = [f"({left_out} older records are not shown)"] if left_out else []
    return [*lines, RECORDS_HEADING, *note, *(line for block in reversed(kept) for line in block)]


def _shares(costs: Sequence[int], room: int) -> list[int]:
    """``room`` shared among ``costs``: equal shares, the parts that need less than
    theirs taking what they need and leaving the rest to the others."""
    shares = [0] * len(costs)
    left, count = max(0, room), len(costs)
    for index in sorted(range(len(costs)), key=lambda i: costs[i]):
        shares[index] = min(costs[index], left // count)
        left -= shares[index]
        count -= 1
    return shares


def _size(lines: Sequence[str], size: Callable[[str], int] = len) -> int:
    return sum(size(line) + 1 for line in lines)


# --- the constraint -------------------------------------------------------------------

# No maxLength on the documents: a JSON-schema-to-grammar converter (Ollama's, or
# llama.cpp's behind serve-llm) unrolls one into that many nested rules, and tens of
# thousands of them overflow the grammar parser. num_predict bounds them instead.
HANDBOOK_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "memory_summary": {"type": "string", "minLength": 1},
        "memory_md": {"type": "string", "minLength": 1},
        "skills": {
            "type": "array",
            "maxItems": SKILLS_MAX,
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"},
                    "skill_md": {"type": "string", "minLength": 1},
                },
                "required": ["name", "skill_md"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["memory_summary", "memory_md", "skills"],
    "additionalProperties": False,
}


def _literal(text: str) -> str:
    return json.dumps(json.dumps(text))


HANDBOOK_GBNF: Final = "\n".join(
    [
        f'root ::= "{{" ws {_literal("memory_summary")} ws ":" ws text ws "," ws'
        f' {_literal("memory_md")} ws ":" ws text ws "," ws {_literal("skills")} ws ":"'
        ' ws skills ws "}"',
        'text ::= "\\"" char+ "\\""',
        f'skills ::= "[" ws ( skill ( ws "," ws skill ){{0,{SKILLS_MAX - 1}}} ws )? "]"',
        f'skill ::= "{{" ws {_literal("name")} ws ":" ws name ws "," ws'
        f' {_literal("skill_md")} ws ":" ws text ws "}}"',
        'name ::= "\\"" [a-z0-9]{1,30} ( "-" [a-z0-9]{1,30} ){0,5} "\\""',
        'char ::= [^"\\\\\\x00-\\x1F\\x7F] | "\\\\" ["\\\\/nt]',
        'ws ::= ( " " | "\\n" " "{0,8} )?',
    ]
)
HANDBOOK_CONSTRAINT: Final = Constraint(
    gbnf=HANDBOOK_GBNF + "\n", json_schema=HANDBOOK_SCHEMA, finite=False
)
"""Unbounded text: the call's ``num_predict`` ends it (a cut reply is asked again)."""


def handbook_constraint() -> Constraint:
    return HANDBOOK_CONSTRAINT


# --- the reply ------------------------------------------------------------------------


def read_handbook(text: str) -> Handbook:
    """The handbook a reply holds, within its limits. ``ReplyUnparseable`` when it holds
    no JSON object; ``HandbookInvalid`` when the object is not a usable handbook."""
    value = parse_json_reply(text)
    if not isinstance(value, dict):
        raise ReplyUnparseable("the reply is not a JSON object")
    summary, memory = value.get("memory_summary"), value.get("memory_md")
    if not isinstance(summary, str) or not summary.strip():
        raise HandbookInvalid("the reply has no memory_summary text")
    if not isinstance(memory, str) or not memory.strip():
        raise HandbookInvalid("the reply has no memory_md text")
    raw_skills = value.get("skills", [])
    if not isinstance(raw_skills, list):
        raise HandbookInvalid("skills is not a list")
    skills: dict[str, str] = {}
    for item in raw_skills:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                or not isinstance(item.get("skill_md"), str):  # fmt: skip
            raise HandbookInvalid("a skill is not {name, skill_md}")
        name = item["name"].strip()
        if name in skills:
            raise HandbookInvalid(f"the skill {name!r} is given twice")
        skills[name] = item["skill_md"].strip() + "\n"
    problems = [*summary_problems(summary), *memory_md_problems(memory)]
    for name, skill_md in skills.items():
        problems += skill_problems(name, skill_md)
    if problems:
        raise HandbookInvalid("; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else ""))
    return Handbook(
        memory_summary=enforce_limits(summary),
        memory_md=bound_memory_md(split_clusters(memory.strip() + "\n")),
        skills=skills,
    )


def without_skills(handbook: Handbook, dropped: set[str]) -> Handbook:
    """``handbook`` less the ``dropped`` skills and their routing rows."""
    if not dropped:
        return handbook
    rows = routing_rows(handbook.memory_summary)
    gone = [r for r in rows if any(f"skills/{name}/" in r[1] or r[0] == name for name in dropped)]
    summary = handbook.memory_summary
    for topic, location, keywords in gone:
        summary = "\n".join(
            line for line in summary.splitlines()
            if not (line.startswith("|") and topic in line and location in line
                    and keywords in line)
        ) + "\n"  # fmt: skip
    skills = {n: s for n, s in handbook.skills.items() if n not in dropped}
    return Handbook(summary, handbook.memory_md, skills)
