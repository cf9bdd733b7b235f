"""One character's knowledge bank: ``agents/<Name>/knowledge/``.

``long-term-memory.json`` is the bank (a JSON array of ``Entry``); ``log.jsonl`` has a
line per change a pass made (``{"pass", "at", "tier", "op", "id", "before", "after",
"candidate"}``) and an ``UNDO`` line per undone pass: it is the truth about what
changed (a DELETE's tombstone lives there, not in the bank), and its torn last line, if
a kill left one, is ignored and cut off before the next append. ``passes/<id>.md`` is
each pass's record: front matter (``PassRecord``), then what it extracted and did.

``commit_pass`` is a pass's one commit point, and ``undo`` is an undo's. Each first
writes its plan (``engine.vault.knowledge_commit``), ``.committing.json`` (the log lines, the whole new bank, the pass
record, the log's size before), atomically: that write is the commit. Then it applies
the plan (the log cut back to its old size and the lines appended, the bank written,
the record written) and removes it. A kill before the plan is written leaves the pass
(or undo) wholly out; a kill after, wholly in: whoever next opens the folder finds the
plan and applies it again (``recover``; applying twice is applying once). Bank, log,
pass record and the memories the pass read (its record's range, where the next pass
starts) so move together. The crash points between the steps are ``knowledge-after-plan``,
``knowledge-after-log``, ``knowledge-after-bank`` and ``knowledge-after-record`` for a
pass, ``undo-after-plan``, ``undo-after-log`` and ``undo-after-bank`` for an undo. The
commits of one folder take its lock (``.lock``), so a process reading it never applies a
plan that the process writing it is applying.

A pass's changes are replayed on the bank as it is at the commit (``rebase``), not
written over it: an undo while the pass waited on its model stays undone, and uses
counted meanwhile stay counted. A bank that does not load is never overwritten (every
write checks the file first and raises ``load``'s ``VaultError``). Everything written
here is redacted first (``engine.memory.secrets``). ``undo`` applies the inverse of the
newest pass not undone yet, newest change first and idempotently (ADD: remove the id if
present; UPDATE: put ``before`` back; DELETE: re-insert ``before`` if absent).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, NamedTuple

from pydantic import ValidationError

from engine import wallclock
from engine.errors import VaultError
from engine.memory.knowledge import BANK, KNOWLEDGE_TYPES, Entry, Source, Stamp
from engine.memory.record import utc_now
from engine.memory.secrets import redact, redact_value
from engine.vault.files import (
    atomic_write_text,
    os_reason,
    read_front_matter,
    write_front_matter,
)
from engine.vault.knowledge_commit import (
    PLAN_FILE,
    Plan,
    apply_plan,
    finish_pending,
    folder_lock,
    write_plan,
)
from engine.vault.knowledge_log import (
    CHANGE_OPS,
    UNDO,
    ChangeLike,
    LogLine,
    change_line,
    entry_json,
    first_problem,
    invert,
    keep_displaced,
    read_log,
    rebase,
    undo_line,
    whole_size,
)
from engine.vault.knowledge_record import Candidate, PassRecord, id_key, pass_body

__all__ = [
    "BANK_FILE",
    "LOG_FILE",
    "PASSES_FOLDER",
    "BankSummary",
    "Candidate",
    "ChangeLike",
    "KnowledgeStore",
    "LogLine",
    "PassRecord",
    "UndoOutcome",
]

BANK_FILE: Final = "long-term-memory.json"
LOG_FILE: Final = "log.jsonl"
PASSES_FOLDER: Final = "passes"

_log = logging.getLogger("mudsim.vault")
_EXTRACTED = re.compile(r"^- \((?P<kind>\w+)\) (?P<content>.*?)(?: \[tags: [^\]]*\])?$")


@dataclasses.dataclass(frozen=True)
class UndoOutcome:
    pass_id: str
    restored: int
    """Entries put back (an UPDATE's or a DELETE's ``before``)."""
    removed: int
    """Entries taken out (an ADD's)."""


class BankSummary(NamedTuple):
    entries: int
    by_type: dict[str, int]
    """Counts of the types present, mistakes first."""
    chars: int
    """The bank file's length in characters."""


class KnowledgeStore:
    """One character's knowledge folder (``.../agents/<Name>/knowledge``)."""

    def __init__(self, folder: Path, *, allow_fiction: bool = False) -> None:
        self.folder = folder
        self.allow_fiction = allow_fiction
        """Keep the secrets the story tells in prose (``fiction_secrets``) when writing."""

    @property
    def bank_path(self) -> Path:
        return self.folder / BANK_FILE

    @property
    def log_path(self) -> Path:
        return self.folder / LOG_FILE

    @property
    def passes_folder(self) -> Path:
        return self.folder / PASSES_FOLDER

    # -- the bank ------------------------------------------------------------------------

    def load(self) -> list[Entry]:
        """The bank; a missing file is an empty bank. ``VaultError`` if it is invalid."""
        self.recover()
        text = self._read_bank_text()
        return [] if text is None else _parse_bank(self.bank_path, text)

    def save(self, bank: Sequence[Entry]) -> None:
        """Write the bank atomically (after checking the one on disk loads)."""
        _check_ids(bank)
        with folder_lock(self.folder):
            finish_pending(self.folder)  # (load then finds no plan: the lock is not taken twice)
            self.load()
            self._write_bank(bank)

    def record_access(self, accesses: Mapping[str, tuple[int, str]]) -> int:
        """Add ``accesses`` (entry id -> (times a prompt showed it, the world time of the
        last)) to the bank's ``access_count`` and ``last_access``, in one atomic write;
        ids no longer in the bank are passed over. How many entries changed."""
        if not accesses:
            return 0
        with folder_lock(self.folder):  # every write of the bank holds the commit lock
            finish_pending(self.folder)
            bank = self.load()
            changed = 0
            for position, entry in enumerate(bank):
                seen = accesses.get(entry.id)
                if seen is None:
                    continue
                count, sim = seen
                bank[position] = entry.model_copy(update={
                    "access_count": entry.access_count + count,
                    "last_access": Stamp(sim=sim, at=utc_now()),
                })  # fmt: skip
                changed += 1
            if changed:
                self._write_bank(bank)
        return changed

    def bank_summary(self) -> BankSummary:
        self.recover()
        text = self._read_bank_text()
        if text is None:
            return BankSummary(0, {}, 0)
        counts = Counter(entry.type for entry in _parse_bank(self.bank_path, text))
        by_type: dict[str, int] = {k: counts[k] for k in KNOWLEDGE_TYPES if counts[k]}
        return BankSummary(sum(counts.values()), by_type, len(text))

    def _read_bank_text(self) -> str | None:
        try:
            return self.bank_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError as exc:
            raise _invalid(self.bank_path, "not UTF-8 text") from exc
        except OSError as exc:
            raise VaultError(f"cannot read {self.bank_path}: {os_reason(exc)}") from exc

    def _write_bank(self, bank: Sequence[Entry]) -> None:
        data = [entry_json(entry, allow_fiction=self.allow_fiction) for entry in bank]
        _write(self.bank_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    # -- a pass --------------------------------------------------------------------------

    def new_pass_id(self, now: datetime | None = None) -> str:
        """``YYYYMMDD-HHMMSS`` (UTC), with ``-2``, ``-3`` ... when a record or log line
        already has that id."""
        moment = now or wallclock.now()
        if moment.tzinfo is None:
            raise ValueError("now must be timezone-aware")
        base = f"{moment.astimezone(UTC):%Y%m%d-%H%M%S}"
        taken = {path.stem for path in self.passes_folder.glob("*.md")}
        with contextlib.suppress(VaultError):  # a log to fix is no reason to refuse an id
            taken |= {line.pass_id for line in self.log()}  # a pass killed before its record
        suffix = 1
        while (pass_id := base if suffix == 1 else f"{base}-{suffix}") in taken:
            suffix += 1
        return pass_id

    def commit_pass(
        self,
        pass_id: str,
        tier: str,
        changes: Sequence[ChangeLike],
        record: PassRecord,
        candidates: Sequence[Candidate],
    ) -> Path:
        """A pass's one commit point (see the module): ``changes`` replayed on the bank as
        it is now; the record's status and operation counts say what really applied.
        Returns the record's path."""
        _same_pass(pass_id, record)
        with folder_lock(self.folder):
            finish_pending(self.folder)
            apply_plan(self.folder, self._plan_pass(pass_id, tier, changes, record, candidates))
        return self.passes_folder / f"{pass_id}.md"

    def plan_pass(
        self,
        pass_id: str,
        tier: str,
        changes: Sequence[ChangeLike],
        record: PassRecord,
        candidates: Sequence[Candidate],
    ) -> None:
        """``commit_pass`` up to its commit point: the plan is written, and the next
        reader (``recover``) applies it. ``agent new`` writes its seed so, before the new
        character's own commit."""
        _same_pass(pass_id, record)
        with folder_lock(self.folder):
            finish_pending(self.folder)
            self._plan_pass(pass_id, tier, changes, record, candidates)

    def _plan_pass(
        self,
        pass_id: str,
        tier: str,
        changes: Sequence[ChangeLike],
        record: PassRecord,
        candidates: Sequence[Candidate],
    ) -> Plan:
        bank, applied = rebase(self.load(), changes)
        bank, applied = keep_displaced(bank, changes, applied, candidates, pass_id=pass_id,
                                       now=record.finished, source=_source_of(record))  # fmt: skip
        _check_ids(bank)
        counts = Counter(change.op for change in applied)
        done = record.model_copy(update={
            "status": "changed" if applied else "unchanged",
            "operations": {op: counts[op] for op in CHANGE_OPS if counts[op]},
        })  # fmt: skip
        at, fiction = utc_now(), self.allow_fiction
        plan: Plan = {
            "what": "pass",
            "pass": pass_id,
            "log_size": whole_size(self.log_path),
            "log": [change_line(pass_id, at, tier, c, allow_fiction=fiction) for c in applied],
            "bank": [entry_json(entry, allow_fiction=fiction) for entry in bank],
            "record": {
                "meta": redact_value(
                    done.model_dump(mode="json", by_alias=True), allow_fiction=fiction
                ),
                "body": redact(pass_body(pass_id, candidates, applied), allow_fiction=fiction),
            },
        }
        write_plan(self.folder, plan)
        return plan

    def recover(self) -> bool:
        """Apply a commit a kill interrupted (its plan is still here); whether there was one."""
        if not self.plan_path.exists():
            return False
        with folder_lock(self.folder):
            return finish_pending(self.folder)

    @property
    def plan_path(self) -> Path:
        return self.folder / PLAN_FILE

    def write_pass(
        self, record: PassRecord, candidates: Sequence[Candidate], changes: Sequence[ChangeLike]
    ) -> Path:
        """Write ``passes/<pass id>.md`` atomically (a failed pass's record too)."""
        path = self.passes_folder / f"{record.pass_id}.md"
        fiction = self.allow_fiction
        meta = redact_value(record.model_dump(mode="json", by_alias=True), allow_fiction=fiction)
        body = redact(pass_body(record.pass_id, candidates, changes), allow_fiction=fiction)
        try:
            write_front_matter(path, meta, body)
        except OSError as exc:
            raise VaultError(f"cannot write {path}: {os_reason(exc)}") from exc
        return path

    def passes(self) -> list[PassRecord]:
        """Every pass record, oldest first; one that does not read is skipped, warned."""
        self.recover()
        records: list[PassRecord] = []
        for path in sorted(self.passes_folder.glob("*.md")):
            try:
                meta, _ = read_front_matter(path)
                record = PassRecord.model_validate(meta)
            except VaultError as exc:
                _log.warning("%s is skipped: %s", path, exc)
                continue
            except ValidationError as exc:
                _log.warning("%s is skipped: not a pass record (%s)", path, first_problem(exc))
                continue
            if record.pass_id != path.stem:
                _log.warning("%s is skipped: it records pass %s", path, record.pass_id)
                continue
            records.append(record)
        return sorted(records, key=lambda record: id_key(record.pass_id))

    def applied_text(self, record: PassRecord) -> str:
        """The "Operations" part of a pass record's body: what the pass applied, one
        line each ("" when the record is gone or has none)."""
        try:
            _, body = read_front_matter(self.passes_folder / f"{record.pass_id}.md")
        except (OSError, VaultError):
            return ""
        _, found, applied = body.partition("## Operations")
        return applied.strip() if found else ""

    def record_text(self, record: PassRecord) -> str:
        """A pass record's body ("" when it cannot be read): what it extracted and did."""
        try:
            _, body = read_front_matter(self.passes_folder / f"{record.pass_id}.md")
        except (OSError, VaultError):
            return ""
        return body.strip()

    def extracted(self, record: PassRecord) -> list[tuple[str, str]]:
        """(type, content) of each candidate the pass record lists under "Extracted"."""
        found = []
        _, _, rest = self.record_text(record).partition("## Extracted")
        for line in rest.partition("## Operations")[0].splitlines():
            match = _EXTRACTED.match(line)
            if match:
                found.append((match["kind"], match["content"]))
        return found

    def last_pass(self, completed_only: bool = True) -> PassRecord | None:
        """The newest record (whose status is not ``failed``, with ``completed_only``)."""
        records = [r for r in self.passes() if not completed_only or r.status != "failed"]
        return records[-1] if records else None

    # -- the log and undo ----------------------------------------------------------------

    def log(self) -> list[LogLine]:
        """The log's lines, oldest first; a torn last line is left out."""
        self.recover()
        return read_log(self.log_path)

    def undone_passes(self) -> set[str]:
        return {line.pass_id for line in self.log() if line.op == UNDO}

    def undo(self) -> UndoOutcome | None:
        """Put the bank back as it was before the newest pass that changed it and is not
        undone yet, in one commit (see the module); ``None`` when there is none."""
        with folder_lock(self.folder):
            finish_pending(self.folder)
            lines = self.log()
            undone = {line.pass_id for line in lines if line.op == UNDO}
            changed = [line for line in lines if line.op in CHANGE_OPS]
            target = next((x.pass_id for x in reversed(changed) if x.pass_id not in undone), None)
            if target is None:
                return None
            bank = self.load()
            restored = removed = 0
            for line in reversed([x for x in changed if x.pass_id == target]):
                put, taken = invert(bank, line)
                restored, removed = restored + put, removed + taken
            _check_ids(bank)
            plan: Plan = {
                "what": "undo",
                "pass": target,
                "log_size": whole_size(self.log_path),
                "log": [undo_line(target)],
                "bank": [entry_json(entry, allow_fiction=self.allow_fiction) for entry in bank],
                "record": None,
            }
            write_plan(self.folder, plan)
            apply_plan(self.folder, plan)
        return UndoOutcome(target, restored, removed)


# -- the bank's file -------------------------------------------------------------------


def _parse_bank(path: Path, text: str) -> list[Entry]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _invalid(path, f"not JSON: {exc.msg}, line {exc.lineno}") from exc
    except RecursionError as exc:
        raise _invalid(path, "not JSON: nested too deep") from exc
    try:
        entries = BANK.validate_python(data)
    except ValidationError as exc:
        raise _invalid(path, first_problem(exc)) from exc
    seen: set[str] = set()
    for number, entry in enumerate(entries, 1):
        if entry.id in seen:
            raise _invalid(path, f"entry {number}: the id {entry.id} is used twice")
        seen.add(entry.id)
    return entries


def _invalid(path: Path, problem: str) -> VaultError:
    return VaultError(
        f"{path} is not a valid knowledge bank ({problem}); it is left as it is — fix or move it"
    )


def _same_pass(pass_id: str, record: PassRecord) -> None:
    if record.pass_id != pass_id:
        raise ValueError(f"the record is pass {record.pass_id}, not {pass_id}")


def _check_ids(bank: Sequence[Entry]) -> None:
    ids = [entry.id for entry in bank]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"the bank holds the id(s) {', '.join(twice)} more than once")


def _write(path: Path, text: str) -> None:
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise VaultError(f"cannot write {path}: {os_reason(exc)}") from exc


def _source_of(record: PassRecord) -> Source:
    """What a pass read, as its entries' ``source`` says it (the pass id is added on add)."""
    ranges = (
        [record.memories] if record.memories and record.memories[1] > record.memories[0] else []
    )
    return Source(memories=ranges, notes=list(record.notes))
