"""Rules that keep a weak model's consolidation from harming the bank (pure): contents
that are not knowledge are set aside, with room to spare only a superseded entry may be
deleted, and a bank that must shrink (HEAVY_CUT) never ends a pass bigger."""

from __future__ import annotations

from collections.abc import Sequence

from engine.memory.knowledge import Entry
from engine.memory.knowledge_candidates import Candidate, carries, substantive
from engine.memory.knowledge_ops import (
    Add,
    Applied,
    Delete,
    Operation,
    ParsedOperations,
    Update,
)


def without_fragments(parsed: ParsedOperations) -> ParsedOperations:
    """``parsed`` less the contents that are not knowledge (``substantive``): such an
    UPDATE is set aside (the entry is kept), such an ADD falls back on its candidate's
    own content, or is set aside when it has none."""
    kept: list[Operation] = []
    ignored = list(parsed.ignored)
    for op in parsed.operations:
        if isinstance(op, Update | Add) and op.content is not None and not substantive(op.content):
            if isinstance(op, Add) and op.candidate is not None:
                op = op.model_copy(update={"content": None})
            else:
                ignored.append(f"{op.action} with a fragment for content: {op.content!r}")
                continue
        kept.append(op)
    return ParsedOperations(operations=kept, ignored=ignored)


def superseded_deletes_only(
    parsed: ParsedOperations, bank: Sequence[Entry], candidates: Sequence[Candidate]
) -> ParsedOperations:
    """The GENEROUS tier's "rarely DELETE, only what is wrong or superseded", kept by
    rule: a DELETE stands only when the same reply writes what carries the entry's words
    (an UPDATE or an ADD, or a candidate it adds), as a merge does. Small models delete
    good entries at random; with room to spare, keeping one costs little."""
    contents = {e.id: e.content for e in bank}
    written = [
        op.content for op in parsed.operations if isinstance(op, Update | Add) and op.content
    ]
    written += [
        candidates[op.candidate].content
        for op in parsed.operations
        if isinstance(op, Add) and op.candidate is not None and op.candidate < len(candidates)
    ]
    kept: list[Operation] = []
    ignored = list(parsed.ignored)
    for op in parsed.operations:
        old = contents.get(op.id) if isinstance(op, Delete) else None
        if isinstance(op, Delete) and old is not None and not any(carries(t, old) for t in written):
            ignored.append(f"DELETE {op.id}: nothing in this reply supersedes it (GENEROUS)")
            continue
        kept.append(op)
    return ParsedOperations(operations=kept, ignored=ignored)


def no_growth(applied: Applied, start: int) -> Applied:
    """``applied`` with its newest ADDs taken back until the bank holds no more than the
    ``start`` entries it began with (HEAVY_CUT: a pass may fold knowledge in, never pile
    it up)."""
    bank, changes, skipped = list(applied.bank), list(applied.changes), list(applied.skipped)
    for change in reversed(applied.changes):
        if len(bank) <= start:
            break
        if change.op != "ADD":
            continue
        changes.remove(change)
        bank = [entry for entry in bank if entry.id != change.id]
        what = "an ADD" if change.candidate is None else f"candidate {change.candidate}"
        skipped.append(f"{what} left out: the bank must not grow at HEAVY_CUT")
    return Applied(bank=bank, changes=changes, skipped=skipped)
