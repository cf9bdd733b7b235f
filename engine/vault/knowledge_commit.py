"""A knowledge folder's commit plans (for ``engine.vault.knowledge_store``).

A pass, an undo and ``agent new``'s seeding each commit by writing one plan,
``knowledge/.committing.json``, atomically: the log lines to append, the log's size
before them, the whole new bank and (for a pass) its record. That write is the commit.
``apply_plan`` then appends the lines (the log cut back to its old size first, so a plan
applied twice appends them once), writes the bank and the record, and removes the plan;
a kill anywhere in between leaves a plan that the next ``apply_plan`` finishes. The
crash points between the steps are named after what the plan is (``knowledge-...`` or
``undo-...``, see ``engine.faults``). Commits of one folder hold its ``.lock``
(``folder_lock``), so a process that reads a folder never applies a plan another process
is applying.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from filelock import FileLock, Timeout

from engine.errors import VaultError
from engine.faults import crash_point
from engine.memory.knowledge import BANK
from engine.vault.files import (
    atomic_write_text,
    fsync_folder,
    make_folder,
    os_reason,
    write_front_matter,
)
from engine.vault.knowledge_log import append_log

PLAN_FILE: Final = ".committing.json"
LOCK_FILE: Final = ".lock"
LOCK_WAIT: Final = 30.0
"""Seconds a commit waits for another process's commit of the same folder."""
BANK_FILE: Final = "long-term-memory.json"
LOG_FILE: Final = "log.jsonl"
PASSES_FOLDER: Final = "passes"

Plan = dict[str, Any]
"""``{"what": "pass" | "undo", "pass", "log_size", "log": [lines], "bank": [entries],
"record": {"meta", "body"} | None}``: everything redacted already."""

_log = logging.getLogger("mudsim.vault")


def write_plan(folder: Path, plan: Plan) -> None:
    """The commit: the plan, written atomically."""
    path = folder / PLAN_FILE
    try:
        atomic_write_text(path, json.dumps(plan, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise VaultError(f"cannot write {path}: {os_reason(exc)}") from exc
    crash_point(f"{_kind(plan)}-after-plan")


def pending_plan(folder: Path) -> Plan | None:
    """The plan a kill left in ``folder`` (None: none). ``VaultError`` when it does not read."""
    path = folder / PLAN_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise VaultError(f"cannot read {path}: {exc}") from exc
    try:
        plan = json.loads(text)
        _check(plan)
    except (ValueError, KeyError, TypeError) as exc:
        raise VaultError(
            f"{path} is an interrupted knowledge commit that cannot be read ({exc}); "
            "it is left as it is: move it away to drop that commit"
        ) from exc
    return plan  # type: ignore[no-any-return]


def apply_plan(folder: Path, plan: Plan) -> None:
    """The plan's steps, each safe to do twice, then the plan removed."""
    kind = _kind(plan)
    append_log(folder / LOG_FILE, plan["log"], at_size=plan["log_size"])
    crash_point(f"{kind}-after-log")
    bank = folder / BANK_FILE
    try:
        atomic_write_text(bank, json.dumps(plan["bank"], indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise VaultError(f"cannot write {bank}: {os_reason(exc)}") from exc
    crash_point(f"{kind}-after-bank")
    if plan.get("record") is not None:
        path = folder / PASSES_FOLDER / f"{plan['pass']}.md"
        try:
            write_front_matter(path, plan["record"]["meta"], plan["record"]["body"])
        except OSError as exc:
            raise VaultError(f"cannot write {path}: {os_reason(exc)}") from exc
        crash_point(f"{kind}-after-record")
    path = folder / PLAN_FILE
    try:
        path.unlink()
        fsync_folder(folder)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise VaultError(f"cannot remove {path}: {os_reason(exc)}") from exc


def finish_pending(folder: Path) -> bool:
    """Apply the plan a kill left (the caller holds the lock); whether there was one."""
    plan = pending_plan(folder)
    if plan is None:
        return False
    _log.warning("%s: finishing an interrupted knowledge %s (%s)", folder, plan["what"],
                 plan["pass"])  # fmt: skip
    apply_plan(folder, plan)
    return True


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """``folder``'s commit lock, waited for ``LOCK_WAIT`` s; a ``VaultError`` after that."""
    try:
        make_folder(folder)
    except OSError as exc:
        raise VaultError(f"cannot create {folder}: {os_reason(exc)}") from exc
    path = folder / LOCK_FILE
    lock = FileLock(path, timeout=LOCK_WAIT)
    try:
        lock.acquire()
    except Timeout as exc:
        raise VaultError(
            f"{path} is held by another process for over {LOCK_WAIT:.0f} s; "
            "is a mudsim process stuck?"
        ) from exc
    try:
        yield
    finally:
        lock.release()


def _kind(plan: Plan) -> str:
    return "undo" if plan["what"] == "undo" else "knowledge"


def _check(plan: Any) -> None:
    if not isinstance(plan, dict) or plan.get("what") not in ("pass", "undo"):
        raise ValueError("not a commit plan")
    if not isinstance(plan["log"], list) or not isinstance(plan["bank"], list):
        raise ValueError("its log lines or its bank are missing")
    if not isinstance(plan["log_size"], int) or not isinstance(plan["pass"], str):
        raise ValueError("its log size or its pass is missing")
    BANK.validate_python(plan["bank"])
