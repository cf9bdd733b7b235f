"""What a knowledge pass does with a consolidation reply (pure; for
``engine.agents.knowledge_pass``): the reply read into operations, the guards that keep
a weak model from harming the bank, the operations applied, and the notes' own facts
kept all the same.

The tier decides what a reply may leave unsaid: in GENEROUS a candidate it does not
name is added (weak models forget some) and a DELETE stands only when the reply writes
what supersedes the entry; in SELECTIVE and HEAVY_CUT only what it names is added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.agents.knowledge_inputs import PassInputs
from engine.memory.json_reply import ReplyUnparseable, parse_json_reply
from engine.memory.knowledge import Entry, Source, Stamp, new_entry_id
from engine.memory.knowledge_guards import superseded_deletes_only, without_fragments
from engine.memory.knowledge_ops import (
    Applied,
    Candidate,
    Tier,
    add_all,
    apply_operations,
    carries,
    parse_operations,
)


def applied_reply(
    text: str,
    shown: Mapping[int, str],
    bank: Sequence[Entry],
    candidates: Sequence[Candidate],
    tier: Tier,
    *,
    pass_id: str,
    now: Stamp,
    source: Source,
) -> tuple[Applied, list[str]]:
    """The bank after the reply ``text`` (``shown``: the prompt's numbers -> entry ids),
    and one line per operation set aside. ``ReplyUnparseable`` when it holds no list of
    operations."""
    parsed = without_fragments(parse_operations(_operations(text), shown, len(candidates)))
    if tier == "GENEROUS":
        parsed = superseded_deletes_only(parsed, bank, candidates)
    applied = apply_operations(bank, parsed, candidates, pass_id=pass_id, now=now, source=source,
                               new_id=new_entry_id, add_unnamed=tier == "GENEROUS")  # fmt: skip
    return applied, list(parsed.ignored)


def keep_notes(
    applied: Applied,
    candidates: Sequence[Candidate],
    from_notes: Sequence[Candidate],
    *,
    pass_id: str,
    now: Stamp,
    source: Source,
) -> Applied:
    """The notes' own facts that consolidation let go (a weak model SKIPs what it should
    keep) and that no entry carries, added after all: what an agent wrote down always
    reaches its bank (and a HEAVY_CUT pass then takes back its newest ADDs)."""
    missing = [
        c for c in from_notes if not any(carries(e.content, c.content) for e in applied.bank)
    ]
    if not missing:
        return applied
    extra = add_all(applied.bank, missing, pass_id=pass_id, now=now, source=source,
                    new_id=new_entry_id)  # fmt: skip
    changes = [
        c.model_copy(update={"candidate": list(candidates).index(missing[c.candidate])})
        if c.candidate is not None
        else c
        for c in extra.changes
    ]
    return Applied(bank=extra.bank, changes=[*applied.changes, *changes])


def pass_source(inputs: PassInputs) -> Source:
    """What a pass read, for its entries' ``source`` (the pass id is added on apply)."""
    start, end = inputs.memories
    return Source(
        memories=[inputs.memories] if end > start else [],
        notes=[title for title, _ in inputs.notes],
    )


def _operations(text: str) -> Any:
    """The reply's JSON, which must hold a list of operations (bare, or under
    ``operations``); ``ReplyUnparseable`` otherwise."""
    value = parse_json_reply(text)
    listed = value.get("operations") if isinstance(value, dict) else value
    if not isinstance(listed, list):
        raise ReplyUnparseable("the reply holds no list of operations")
    return value
