"""A knowledge pass's replies, read and applied to the bank (pure).

Phase 2 (consolidate) replies with operations on the bank, which it sees as small
numbers (``[3]``) rather than ids: ``parse_operations`` maps them back and sets aside
what it cannot use, with a reason; ``apply_operations`` returns the new bank and one
``Change`` per entry added, updated or deleted. ``add_all`` is the fallback when
consolidation fails: every candidate is added, exact duplicates left out. No entry a pass
writes is longer than ``CONTENT_MAX`` characters, whatever the decoding: a longer one is
cut at a sentence or word boundary (``cut_content``), and its ``Change`` says from how
long (``cut_from``); an entry already in the bank that is too long (from before the cap)
is cut by the next pass, as an UPDATE.

Re-exported here: phase 1's candidates (``Candidate``, ``parse_candidates``,
``candidates_from_reply``: ``engine.memory.knowledge_candidates``), and ``capacity``,
``shown_entries`` and the prompt's lines (``engine.memory.knowledge_view``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from engine.memory.knowledge import (
    CONTENT_MAX,
    Earlier,
    Entry,
    KnowledgeType,
    Source,
    Stamp,
    clean_tags,
    cut_content,
)
from engine.memory.knowledge_candidates import Candidate as Candidate
from engine.memory.knowledge_candidates import candidates_from_reply as candidates_from_reply
from engine.memory.knowledge_candidates import carries as carries
from engine.memory.knowledge_candidates import note_candidates as note_candidates
from engine.memory.knowledge_candidates import parse_candidates as parse_candidates
from engine.memory.knowledge_candidates import read_kind, read_tags, read_text
from engine.memory.knowledge_candidates import substantive as substantive
from engine.memory.knowledge_view import Capacity as Capacity
from engine.memory.knowledge_view import Tier as Tier
from engine.memory.knowledge_view import candidate_line as candidate_line
from engine.memory.knowledge_view import capacity as capacity
from engine.memory.knowledge_view import entry_line as entry_line
from engine.memory.knowledge_view import shown_entries as shown_entries
from engine.memory.knowledge_view import shown_json as shown_json

_FROZEN = ConfigDict(frozen=True, extra="forbid")
_NUMBER: Final = re.compile(r"^\s*\[?\s*(?:candidate\s*)?#?(\d{1,9})\s*\]?\s*$", re.IGNORECASE)
_NEW_ID_TRIES: Final = 100
_T = TypeVar("_T")


# --- operations ----------------------------------------------------------------------


class Keep(BaseModel):
    model_config = _FROZEN
    action: Literal["KEEP"] = "KEEP"
    id: str


class Update(BaseModel):
    """New content and/or tags for an entry; a field left None keeps the old one (a
    reply's empty tag list too: small models leave it empty rather than copy it)."""

    model_config = _FROZEN
    action: Literal["UPDATE"] = "UPDATE"
    id: str
    content: str | None = None
    tags: list[str] | None = None


class Delete(BaseModel):
    model_config = _FROZEN
    action: Literal["DELETE"] = "DELETE"
    id: str


class Add(BaseModel):
    """A new entry. Fields left None are its candidate's: ``{"action": "ADD",
    "candidate": 2}`` adds candidate 2 as it is (parsing makes sure that an ADD without a
    candidate has a type and a content)."""

    model_config = _FROZEN
    action: Literal["ADD"] = "ADD"
    type: KnowledgeType | None = None
    content: str | None = None
    tags: list[str] | None = None
    candidate: int | None = None
    """The candidate this adds (or merges), when the reply said."""


class Skip(BaseModel):
    model_config = _FROZEN
    action: Literal["SKIP"] = "SKIP"
    candidate: int


Operation = Keep | Update | Delete | Add | Skip


class ParsedOperations(BaseModel):
    model_config = _FROZEN

    operations: list[Operation]
    ignored: list[str] = []
    """One line per operation set aside, saying why."""


def parse_operations(value: Any, shown: Mapping[int, str], candidates: int) -> ParsedOperations:
    """The usable operations in a parsed reply (a list, or an object holding one under
    ``operations``). ``shown`` maps the numbers the prompt showed to entry ids;
    ``candidates`` is how many candidates it listed. Unknown numbers, candidate indexes
    out of range, and a second operation on the same entry or candidate are ignored."""
    if isinstance(value, dict):
        value = value.get("operations", [value] if "action" in value else None)
    if not isinstance(value, list):
        return ParsedOperations(operations=[], ignored=["the reply holds no list of operations"])
    operations: list[Operation] = []
    ignored: list[str] = []
    claimed: set[str | int] = set()
    for position, item in enumerate(value):
        result = _operation(item, shown, candidates)
        if isinstance(result, str):
            ignored.append(f"operation {position}: {result}")
            continue
        key = _claim(result)
        if key is not None and key in claimed:
            ignored.append(f"operation {position}: {_describe(result)} was already decided")
            continue
        if key is not None:
            claimed.add(key)
        operations.append(result)
    return ParsedOperations(operations=operations, ignored=ignored)


def _operation(item: Any, shown: Mapping[int, str], candidates: int) -> Operation | str:
    """The operation ``item`` asks for, or why it cannot be used."""
    if not isinstance(item, dict):
        return "not an object"
    action = item.get("action")
    action = action.strip().upper() if isinstance(action, str) else None
    if action in ("KEEP", "UPDATE", "DELETE"):
        entry_id = _entry_id(item.get("id"), shown)
        if entry_id is None:
            return f"{action} of an unknown entry {_show(item.get('id'))}"
        if action == "KEEP":
            return Keep(id=entry_id)
        if action == "DELETE":
            return Delete(id=entry_id)
        content, tags = read_text(item.get("content")), read_tags(item.get("tags")) or None
        if content is None and tags is None:
            return Keep(id=entry_id)  # an UPDATE that changes nothing
        return Update(id=entry_id, content=content, tags=tags)
    if action in ("ADD", "SKIP"):
        raw = next(
            (item[k] for k in ("candidate", "candidateIndex", "candidate_index") if k in item), None
        )
        index = _number(raw)
        if raw is not None and (index is None or index >= candidates):
            return f"{action} of an unknown candidate {_show(raw)}"
        if action == "SKIP":
            return "SKIP without a candidate" if index is None else Skip(candidate=index)
        kind, content = read_kind(item.get("type")), read_text(item.get("content"))
        if index is None and (kind is None or content is None):
            return "ADD without a known type and a content"
        tags = item.get("tags")
        cleaned = read_tags(tags) if isinstance(tags, list | str) else None
        return Add(type=kind, content=content, tags=cleaned, candidate=index)
    return f"unknown action {_show(item.get('action'))}"


def _claim(op: Operation) -> str | int | None:
    if isinstance(op, Keep | Update | Delete):
        return op.id
    return op.candidate


def _describe(op: Operation) -> str:
    if isinstance(op, Keep | Update | Delete):
        return f"{op.action} of {op.id}"
    return f"{op.action} of candidate {op.candidate}"


def _entry_id(raw: Any, shown: Mapping[int, str]) -> str | None:
    number = _number(raw)
    if number is not None:
        return shown.get(number)
    if isinstance(raw, str) and raw.strip() in shown.values():
        return raw.strip()  # the model wrote a real id
    return None


def _number(raw: Any) -> int | None:
    """3 from 3, "3", "[3]", "#3", "candidate 3"; None for anything else."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw >= 0 else None
    if isinstance(raw, float) and raw.is_integer() and raw >= 0:
        return int(raw)
    match = _NUMBER.match(raw) if isinstance(raw, str) else None
    return int(match.group(1)) if match else None


def _show(raw: Any) -> str:
    text = " ".join(repr(raw).split())
    return text if len(text) <= 40 else text[:39] + "…"


# --- applying ------------------------------------------------------------------------


class Change(BaseModel):
    """One entry added, updated or deleted by a pass (KEEP and SKIP change nothing)."""

    model_config = _FROZEN

    op: Literal["ADD", "UPDATE", "DELETE"]
    id: str
    before: Entry | None = None
    after: Entry | None = None
    candidate: int | None = None
    """The candidate an ADD came from, when known."""
    cut_from: int | None = None
    """The content's length before it was cut to ``CONTENT_MAX`` (None: not cut)."""


class Applied(BaseModel):
    model_config = _FROZEN

    bank: list[Entry]
    changes: list[Change]
    skipped: list[str] = []
    """One line per ADD left out as an exact duplicate."""


NewId = Callable[[set[str]], str]
"""A fresh entry id, given the ids taken (``engine.memory.knowledge.new_entry_id``)."""


def apply_operations(
    bank: Sequence[Entry],
    parsed: ParsedOperations,
    candidates: Sequence[Candidate],
    *,
    pass_id: str,
    now: Stamp,
    source: Source,
    new_id: NewId,
    add_unnamed: bool = True,
) -> Applied:
    """The bank after ``parsed``'s operations, in order; then, with ``add_unnamed`` (the
    GENEROUS tier: weak models forget some), every candidate no operation named is added.
    ``bank`` is left as it is."""
    state = _Pass(bank, candidates, pass_id, now, source, new_id)
    state.cut_long()
    for op in parsed.operations:
        state.apply(op)
    for index, candidate in enumerate(candidates):
        if not add_unnamed:
            break
        if index in state.mentioned:
            continue
        if _key(candidate.content) in state.dropped:  # what this pass deleted or rewrote
            state.skipped.append(f"candidate {index} was consolidated away by this pass")
            continue
        state.add(candidate.type, candidate.content, candidate.tags, index)
    return state.result()


def add_all(
    bank: Sequence[Entry],
    candidates: Sequence[Candidate],
    *,
    pass_id: str,
    now: Stamp,
    source: Source,
    new_id: NewId,
) -> Applied:
    """The fallback when consolidation fails: every candidate added, exact duplicates
    (of the bank or of an earlier candidate) left out."""
    nothing = ParsedOperations(operations=[])
    return apply_operations(
        bank, nothing, candidates, pass_id=pass_id, now=now, source=source, new_id=new_id
    )


class _Pass:
    def __init__(self, bank: Sequence[Entry], candidates: Sequence[Candidate], pass_id: str,
                 now: Stamp, source: Source, new_id: NewId) -> None:  # fmt: skip
        self.entries: list[Entry | None] = list(bank)
        self.where: dict[str, int] = {}
        for position, entry in enumerate(bank):
            self.where.setdefault(entry.id, position)
        self.taken = set(self.where)
        self.decided: set[str] = set()
        self.mentioned: set[int] = set()
        self.changes: list[Change] = []
        self.skipped: list[str] = []
        self.dropped: set[str] = set()
        """Contents this pass deleted or replaced: a forgotten candidate repeating one
        stays out."""
        self.candidates, self.pass_id, self.now = candidates, pass_id, now
        self.source, self.new_id = source, new_id

    def apply(self, op: Operation) -> None:
        if isinstance(op, Skip):
            self.mentioned.add(op.candidate)
        elif isinstance(op, Add):
            self._add(op)
        elif op.id not in self.decided and op.id in self.where:
            self.decided.add(op.id)
            if isinstance(op, Update):
                self._update(op)
            elif isinstance(op, Delete):
                position = self.where.pop(op.id)
                before, self.entries[position] = self.entries[position], None
                self.changes.append(Change(op="DELETE", id=op.id, before=before))
                if before is not None:
                    self.dropped.add(_key(before.content))

    def _add(self, op: Add) -> None:
        index = op.candidate
        base = (
            self.candidates[index] if index is not None and index < len(self.candidates) else None
        )
        if index is not None:
            self.mentioned.add(index)
        kind = op.type or (base.type if base else None)
        content = op.content or (base.content if base else None)
        tags = op.tags if op.tags is not None else (base.tags if base else [])
        if kind is not None and content is not None:
            self.add(kind, content, tags, index)

    def cut_long(self) -> None:
        """Cut every entry longer than ``CONTENT_MAX`` (an UPDATE each)."""
        for position, old in enumerate(self.entries):
            if old is None or len(old.content) <= CONTENT_MAX:
                continue
            earlier = Earlier(content=old.content, tags=list(old.tags), until=self.now,
                              by_pass=self.pass_id)  # fmt: skip
            new = old.model_copy(update={"content": cut_content(old.content), "updated": self.now,
                                         "history": [*old.history, earlier]})  # fmt: skip
            self.entries[position] = new
            self.changes.append(Change(op="UPDATE", id=old.id, before=old, after=new,
                                       cut_from=len(old.content)))  # fmt: skip

    def add(self, kind: KnowledgeType, content: str, tags: list[str], index: int | None) -> None:
        content, cut_from = _capped(content)
        key = _key(content)
        twin = next((e.id for e in self._current() if _key(e.content) == key), None)
        if twin is not None:
            what = "an ADD" if index is None else f"candidate {index}"
            self.skipped.append(f"{what} repeats {twin} exactly")
            return
        entry = Entry(
            id=self._fresh_id(),
            type=kind,
            content=content,
            tags=clean_tags(tags),
            source=_merged(Source(), self.source, self.pass_id),
            created=self.now,
            updated=self.now,
        )
        self.where[entry.id] = len(self.entries)
        self.entries.append(entry)
        self.changes.append(
            Change(op="ADD", id=entry.id, after=entry, candidate=index, cut_from=cut_from)
        )

    def _update(self, op: Update) -> None:
        position = self.where[op.id]
        old = self.entries[position]
        assert old is not None  # only deleted entries are None, and they left `where`
        content, cut_from = _capped(op.content or old.content)
        tags = clean_tags(op.tags) if op.tags is not None else list(old.tags)
        if content == old.content and tags == old.tags:
            return  # an UPDATE to what is already there is a KEEP
        earlier = Earlier(content=old.content, tags=list(old.tags), until=self.now,
                          by_pass=self.pass_id)  # fmt: skip
        new = old.model_copy(
            update={
                "content": content,
                "tags": tags,
                "updated": self.now,
                "source": _merged(old.source, self.source, self.pass_id),
                "history": [*old.history, earlier],
            }
        )
        self.entries[position] = new
        self.changes.append(Change(op="UPDATE", id=op.id, before=old, after=new, cut_from=cut_from))
        self.dropped.add(_key(old.content))

    def _current(self) -> Iterable[Entry]:
        return (entry for entry in self.entries if entry is not None)

    def _fresh_id(self) -> str:
        for _ in range(_NEW_ID_TRIES):
            candidate = self.new_id(set(self.taken))
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        raise ValueError(f"new_id gave only ids already taken ({_NEW_ID_TRIES} tries)")

    def result(self) -> Applied:
        return Applied(bank=list(self._current()), changes=self.changes, skipped=self.skipped)


def _merged(old: Source, new: Source, pass_id: str) -> Source:
    """``old`` with what ``new`` adds, and the pass, each once and in order."""
    return Source(
        memories=_unique([*old.memories, *new.memories]),
        notes=_unique([*old.notes, *new.notes]),
        passes=_unique([*old.passes, *new.passes, pass_id]),
        copied_from=_unique([*old.copied_from, *new.copied_from]),
    )


def _unique(items: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(items))


def _capped(content: str) -> tuple[str, int | None]:
    """``content`` within ``CONTENT_MAX``, and its length before when it was cut."""
    if len(content) <= CONTENT_MAX:
        return content, None
    return cut_content(content), len(content)


def _key(content: str) -> str:
    """What an exact duplicate shares: the words, in any case and spacing."""
    return " ".join(content.split()).casefold()
