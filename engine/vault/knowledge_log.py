"""A knowledge bank's change log, ``agents/<Name>/knowledge/log.jsonl`` (for
``engine.vault.knowledge_store``).

One JSON object a line, ``{"pass", "at", "tier", "op", "id", "before", "after",
"candidate"}``: a line per change a pass made (``before``/``after``: the entry, redacted,
or null), and ``{"pass": P, "op": "UNDO", ...}`` (the rest null) when pass P is undone.
Appends are whole lines, flushed and fsynced. A kill mid-append leaves a torn last line
(no newline, or not a log line): reading ignores it, the next append cuts it off first.
Any other bad line is a ``VaultError`` naming it.

A change whose content was cut to the entry cap says from how long (``"cut_from"``).

The inverse of a change (``invert``) is idempotent: ADD removes the id if present;
UPDATE puts ``before`` back (replacing by id, or inserting it); DELETE re-inserts
``before`` if its id is absent, where ``ltm-<n>`` order puts it.

``rebase`` replays a pass's changes on the bank as it is at the commit, not as the pass
loaded it: an undo (or a seeding) while the pass waited on the model is not reverted.
An ADD goes in unless its id is taken; an UPDATE or a DELETE applies only to an entry
whose content and tags are still those it saw (its access count and last access are
the bank's own, so counting uses is never undone either). When a model's UPDATE finds
its entry changed (``keep_displaced``), its merged text is dropped (it holds the undone
entry's words) and the pass falls back as a failed consolidation does: every candidate no
applied ADD carried is added, unless the bank holds it word for word. An undo never
loses a pass's new knowledge, and its memory range is read once.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Final, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from engine.errors import VaultError
from engine.memory.knowledge import Entry, Source, Stamp, cut_content, entry_number, new_entry_id
from engine.memory.knowledge_candidates import Candidate
from engine.memory.knowledge_ops import Change, add_all
from engine.memory.record import utc_now
from engine.memory.secrets import redact, redact_value
from engine.vault.files import fsync_folder, make_folder, os_reason

CHANGE_OPS: Final = ("ADD", "UPDATE", "DELETE")
UNDO: Final = "UNDO"
_BLOCK: Final = 65536
_NEEDS: Final = {"ADD": ("after",), "UPDATE": ("before", "after"), "DELETE": ("before",)}

_log = logging.getLogger("mudsim.vault")


class ChangeLike(Protocol):
    """One operation a pass applied (``engine.memory.knowledge_ops.Change`` fits)."""

    @property
    def op(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def before(self) -> Entry | None: ...
    @property
    def after(self) -> Entry | None: ...
    @property
    def candidate(self) -> object: ...


class LogLine(BaseModel):
    """One line of the log; ``pass`` is ``pass_id`` in Python."""

    model_config = ConfigDict(populate_by_name=True)

    pass_id: str = Field(alias="pass")
    at: str
    tier: str | None = None
    op: str
    id: str | None = None
    before: Entry | None = None
    after: Entry | None = None
    candidate: Any = None

    @model_validator(mode="after")
    def _complete(self) -> LogLine:
        for name in _NEEDS.get(self.op, ()):
            entry = getattr(self, name)
            if entry is None or entry.id != self.id:
                raise ValueError(f"{self.op} needs {name} with the id {self.id}")
        return self


def read_log(path: Path) -> list[LogLine]:
    """The log's lines, oldest first (a missing log has none)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise VaultError(f"cannot read {path}: {os_reason(exc)}") from exc
    pieces = data.split(b"\n")
    torn = pieces.pop()  # after the last newline: nothing, or a line cut short
    lines: list[LogLine] = []
    for number, piece in enumerate(pieces, 1):
        if not piece.strip():
            continue
        try:
            lines.append(_parse_line(piece))
        except ValueError as exc:
            if number == len(pieces) and not torn:
                break  # the last line, complete but unreadable: torn too
            raise VaultError(
                f"{path}, line {number}: not a knowledge log line ({exc}); "
                "it is left as it is — fix or move it"
            ) from exc
    return lines


def whole_size(path: Path) -> int:
    """The log's size in bytes once a torn last line is cut off (0: no log yet)."""
    if not path.exists():
        return 0
    try:
        with open(path, "r+b") as handle:
            _cut_torn_tail(handle, path)
            return handle.seek(0, os.SEEK_END)
    except OSError as exc:
        raise VaultError(f"cannot read {path}: {os_reason(exc)}") from exc


def append_log(path: Path, lines: Sequence[dict[str, Any]], at_size: int | None = None) -> None:
    """Append whole lines, fsynced, after cutting off a torn last line; with ``at_size``
    (a commit plan's), after cutting the log back to that size instead, so that a plan
    applied twice appends its lines once."""
    if not lines:
        return
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    make_folder(path.parent)
    new = not path.exists()
    try:
        with open(path, "a+b") as handle:
            if at_size is not None and handle.seek(0, os.SEEK_END) > at_size:
                handle.truncate(at_size)
            elif at_size is None:
                _cut_torn_tail(handle, path)
            handle.write(data.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise VaultError(f"cannot append to {path}: {os_reason(exc)}") from exc
    if new:
        fsync_folder(path.parent)


def change_line(
    pass_id: str, at: str, tier: str | None, change: ChangeLike, *, allow_fiction: bool = False
) -> dict[str, Any]:
    """The log line of one change, redacted (``allow_fiction``: see ``redact``)."""
    fiction = allow_fiction
    before = None if change.before is None else entry_json(change.before, allow_fiction=fiction)
    after = None if change.after is None else entry_json(change.after, allow_fiction=fiction)
    line = {
        "pass": pass_id,
        "at": at,
        "tier": tier,
        "op": op_name(change.op),
        "id": change.id,
        "before": before,
        "after": after,
        "candidate": redact_value(_jsonable(change.candidate), allow_fiction=fiction),
    }
    cut_from = getattr(change, "cut_from", None)
    if isinstance(cut_from, int):
        line["cut_from"] = cut_from
    return line


def rebase(
    bank: Sequence[Entry], changes: Sequence[ChangeLike]
) -> tuple[list[Entry], list[Change]]:
    """``changes`` replayed on ``bank`` (see the module): the new bank, and the changes
    that applied, each with the ``before`` it really replaced."""
    entries: list[Entry | None] = list(bank)
    where = {entry.id: position for position, entry in enumerate(bank)}
    applied: list[Change] = []
    for change in changes:
        op = op_name(change.op)
        at = where.get(change.id)
        now = None if at is None else entries[at]
        cut_from = getattr(change, "cut_from", None)
        cut = cut_from if isinstance(cut_from, int) else None
        candidate = change.candidate if isinstance(change.candidate, int) else None
        if op == "ADD" and change.after is not None and now is None:
            where[change.id] = len(entries)
            entries.append(change.after)
            applied.append(Change(op="ADD", id=change.id, after=change.after,
                                  candidate=candidate, cut_from=cut))  # fmt: skip
        elif at is not None and now is not None and op in ("UPDATE", "DELETE") \
                and _same(now, change.before):  # fmt: skip
            if op == "DELETE":
                entries[at] = None
                del where[change.id]
                applied.append(Change(op="DELETE", id=change.id, before=now))
            elif change.after is not None:
                after = change.after.model_copy(
                    update={"access_count": now.access_count, "last_access": now.last_access}
                )
                entries[at] = after
                applied.append(Change(op="UPDATE", id=change.id, before=now, after=after,
                                      cut_from=cut))  # fmt: skip
    return [entry for entry in entries if entry is not None], applied


def keep_displaced(
    bank: Sequence[Entry],
    changes: Sequence[ChangeLike],
    applied: Sequence[Change],
    candidates: Sequence[tuple[str, str, Sequence[str]]],
    *,
    pass_id: str,
    now: Stamp,
    source: Source,
) -> tuple[list[Entry], list[Change]]:
    """After ``rebase``: when a model's UPDATE did not apply, the candidates no applied
    ADD carried, added (see the module); else ``bank`` and ``applied`` as they are."""
    updated = {change.id for change in applied if change.op == "UPDATE"}
    lost = [
        change
        for change in changes
        if op_name(change.op) == "UPDATE" and change.id not in updated and not _a_cut(change)
    ]
    if not lost:
        return list(bank), list(applied)
    carried = {change.candidate for change in applied if change.candidate is not None}
    indexes, missing = [], []
    for index, (kind, content, tags) in enumerate(candidates):
        if index in carried:
            continue
        try:
            missing.append(Candidate.model_validate({"type": kind, "content": content,
                                                     "tags": list(tags)}))  # fmt: skip
        except ValidationError:
            continue
        indexes.append(index)
    extra = add_all(bank, missing, pass_id=pass_id, now=now, source=source, new_id=new_entry_id)
    added = [
        change.model_copy(update={"candidate": indexes[change.candidate]})
        if change.candidate is not None else change
        for change in extra.changes
    ]  # fmt: skip
    _log.info("pass %s: %d UPDATE(s) of entries an undo changed; %d candidate(s) added instead",
              pass_id, len(lost), sum(change.op == "ADD" for change in added))  # fmt: skip
    return extra.bank, [*applied, *added]


def _a_cut(change: ChangeLike) -> bool:
    """Whether ``change`` only cut an over-long entry to the cap (no candidate in it)."""
    before, after = change.before, change.after
    return before is not None and after is not None \
        and after.content == cut_content(before.content)  # fmt: skip


def _same(entry: Entry, seen: Entry | None) -> bool:
    return seen is not None and (entry.content, entry.tags) == (seen.content, seen.tags)


def undo_line(pass_id: str) -> dict[str, Any]:
    keys = ("tier", "id", "before", "after", "candidate")
    return {"pass": pass_id, "at": utc_now(), "op": UNDO} | dict.fromkeys(keys)


def entry_json(entry: Entry, *, allow_fiction: bool = False) -> dict[str, Any]:
    """``entry`` as the vault writes it: JSON, every string redacted but the id (never
    a secret, and what undo finds entries by)."""
    data = redact_value(entry.model_dump(mode="json"), allow_fiction=allow_fiction)
    data["id"] = entry.id
    if not entry.source.copied_from:  # only a seeded entry says whose it was
        data["source"].pop("copied_from", None)
    return data


def op_name(op: object) -> str:
    return str(getattr(op, "value", op))  # an Enum member's value, else the string


def first_problem(exc: ValidationError) -> str:
    """The first problem, in one line: ``entry 3, type: Input should be ... (got 'x')``."""
    error = exc.errors(include_url=False)[0]
    location = error["loc"]
    where = "the top level" if not location else ""
    if location and isinstance(location[0], int):
        where, location = f"entry {location[0] + 1}", location[1:]
    head = ", ".join(part for part in (where, ".".join(map(str, location))) if part)
    found, got = error.get("input"), ""
    if error["type"] not in ("missing", "extra_forbidden") and isinstance(
        found, str | int | float | bool
    ):
        got = f" (got {redact(repr(found)[:40])})"
    return f"{head}: {' '.join(error['msg'].split())}{got}"


def invert(bank: list[Entry], line: LogLine) -> tuple[int, int]:
    """Apply the inverse of one change to ``bank``: (entries restored, entries removed)."""
    index = next((i for i, entry in enumerate(bank) if entry.id == line.id), None)
    if line.op == "ADD":
        if index is None:
            return 0, 0
        del bank[index]
        return 0, 1
    before = line.before
    if before is None:
        return 0, 0  # not a change: LogLine makes sure an UPDATE or a DELETE has it
    if index is None:
        number = entry_number(before.id)  # where a bank kept in creation order had it
        place = next((i for i, e in enumerate(bank) if entry_number(e.id) > number), len(bank))
        bank.insert(place, before)
        return 1, 0
    if line.op == "UPDATE" and bank[index] != before:
        bank[index] = before
        return 1, 0
    return 0, 0


def _jsonable(value: object) -> object:
    """``value`` as JSON holds it: a model dumped, anything else JSON lacks as its text."""

    def dump(item: object) -> object:
        return item.model_dump(mode="json") if isinstance(item, BaseModel) else str(item)

    return json.loads(json.dumps(value, ensure_ascii=False, default=dump))


def _parse_line(raw: bytes) -> LogLine:
    """A log line, or ``ValueError`` saying what is wrong with it."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ValueError("not JSON") from exc
    try:
        return LogLine.model_validate(value)
    except ValidationError as exc:
        raise ValueError(first_problem(exc)) from exc


def _cut_torn_tail(handle: IO[bytes], path: Path) -> None:
    """Cut the last line off when it is torn (no newline, or not a log line)."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0:
        return
    start = _last_line_start(handle, end)
    handle.seek(start)
    last = handle.read(end - start)
    if last.endswith(b"\n"):
        try:
            _parse_line(last)
            return
        except ValueError:
            pass
    handle.truncate(start)
    _log.warning("%s: a torn last line (%d bytes) was cut off", path, end - start)


def _last_line_start(handle: IO[bytes], end: int) -> int:
    position = end - 1  # a newline as the last byte ends the last line
    while position > 0:
        start = max(0, position - _BLOCK)
        handle.seek(start)
        found = handle.read(position - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0
