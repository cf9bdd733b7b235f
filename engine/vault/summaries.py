"""One character's summaries: ``agents/<Name>/summaries/``.

``recent.md`` holds the short-term summary S, ``longterm.md`` the long-term summary L,
and every compaction leaves a copy of its S as ``recent-YYYYMMDD-HHMMSS.md`` (UTC; a
same-second name taken by another range gets ``-2``, ``-3`` ...). Each file is YAML
front matter (``summary_type``, ``covers_from``, ``covers_to``, ``memory_count``,
``updated``, ``method``, ``grounded``, and, when so or known, ``upgraded``, ``sim`` and
``rooms``; memory seq ranges are half-open) and a markdown body: a heading, a blank
line, the text. ``method`` is ``llm`` (the summarizer wrote it) or ``extractive``
(picked from the memories without a model: the summarizer's replies kept failing the
quality gate, it failed, or the memory bound could not wait for it); a file without it
was written by the LLM. ``grounded: true`` says the summary was measured grounded in
its memories when it was stored (every summary stored since the gate measured it; an
older file lacks it, and is checked against its memories before a merge trusts it).
``upgraded: true`` marks a model's rewrite of a summary first made extractively
(``SummaryStore.upgrade``). A person may edit them; a file that does not read back
raises ``VaultError`` naming it.

The commit protocol (``SummaryStore.commit``), every write atomic:

1. Write the history file for S's range. A redo of an interrupted commit overwrites
   the history file that attempt wrote (found among the newest few by name, since a
   redo only concerns the latest commit), so one range never has two history files.
2. Write ``longterm.md`` (when L changes).
3. Write ``recent.md`` last: it is the commit point, and the boundary b is its
   ``covers_to``.

The crash points ``summary-after-history`` and ``summary-after-longterm``
(``engine.faults``) sit after steps 1 and 2.

A crash before step 3 leaves ``recent.md`` at the old S, so b is unchanged and the
caller redoes the compaction. If step 2 happened, ``longterm.md`` already covers
[0, old b): L has absorbed S. ``Summaries.merge_needed`` is False then
(``longterm.covers_to >= recent.covers_to``) and the redo skips the merge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from engine import wallclock
from engine.errors import VaultError
from engine.faults import crash_point
from engine.vault.files import read_front_matter, write_front_matter

SummaryType = Literal["recent", "longterm"]
Method = Literal["llm", "extractive"]
METHODS: Final[tuple[Method, ...]] = ("llm", "extractive")

RECENT_FILE: Final = "recent.md"
LONGTERM_FILE: Final = "longterm.md"
HEADINGS: Final[dict[SummaryType, str]] = {
    "recent": "# Short-term summary",
    "longterm": "# Long-term summary",
}
HISTORY_LOOKBACK: Final = 3
"""How many of the newest history files (by name) a commit reads to find a redo's."""

_HISTORY_NAME = re.compile(r"^recent-(\d{8}-\d{6})(?:-(\d+))?\.md$")
_INT_FIELDS: Final = ("covers_from", "covers_to", "memory_count")


@dataclass(frozen=True)
class Summary:
    text: str
    covers_from: int
    """Memory seq range covered, half-open: [covers_from, covers_to)."""
    covers_to: int
    memory_count: int
    """M, the memories recorded, at commit time."""
    updated: str
    """UTC, ISO 8601 with a ``Z`` (``engine.memory.record.utc_now()``)."""
    method: Method = "llm"
    """How it was made: by the summarizer, or extracted without a model."""
    sim: str | None = None
    """The world clock when its last memory was recorded (None: written before the
    field existed, or no memory had a reading)."""
    rooms: tuple[str, ...] = ()
    """The ids of the rooms its memories happened in, most frequent first (retrieval
    brings a summary back in those rooms)."""
    grounded: bool = False
    """Measured grounded in its memories when stored (False: a file from before the
    gate measured it)."""
    upgraded: bool = False
    """A model's rewrite of a summary first made extractively."""


@dataclass(frozen=True)
class Summaries:
    recent: Summary | None
    """S, from ``recent.md``."""
    longterm: Summary | None
    """L, from ``longterm.md``."""

    @property
    def boundary(self) -> int:
        """b: memories [0, b) are covered by summaries."""
        if self.recent is not None:
            return self.recent.covers_to
        return self.longterm.covers_to if self.longterm is not None else 0

    def merge_needed(self) -> bool:
        """Whether the next compaction must fold S into L first (False when a commit
        wrote L but crashed before ``recent.md``: L already includes S)."""
        if self.recent is None:
            return False
        return self.longterm is None or self.longterm.covers_to < self.recent.covers_to


class SummaryStore:
    """One character's summaries folder (``.../agents/<Name>/summaries``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def recent_path(self) -> Path:
        return self.folder / RECENT_FILE

    @property
    def longterm_path(self) -> Path:
        return self.folder / LONGTERM_FILE

    def load(self) -> Summaries:
        return Summaries(
            recent=_read_if_exists(self.recent_path, "recent"),
            longterm=_read_if_exists(self.longterm_path, "longterm"),
        )

    def commit(
        self, longterm: Summary | None, recent: Summary, *, now: datetime | None = None
    ) -> Path:
        """Commit a compaction (see the module docstring); ``longterm=None`` leaves
        ``longterm.md`` as it is. Returns the history file written."""
        _check_commit(longterm, recent)
        history = self._history_path_for(recent, now or wallclock.now())
        _write(history, recent, "recent")
        crash_point("summary-after-history")
        if longterm is not None:
            _write(self.longterm_path, longterm, "longterm")
            crash_point("summary-after-longterm")
        _write(self.recent_path, recent, "recent")
        return history

    def upgrade(self, summary: Summary, kind: SummaryType) -> None:
        """Replace the current ``kind`` summary, which covers the same range, with
        ``summary`` (a model's rewrite of an extractive one: ``upgraded``); a short-term
        one's history file too, first. Nothing moves b."""
        current = self.load().recent if kind == "recent" else self.load().longterm
        if current is None or (current.covers_from, current.covers_to) != (
            summary.covers_from,
            summary.covers_to,
        ):
            raise ValueError(f"no current {kind} summary covers that range to upgrade")
        _check_summary(summary, kind)
        if kind == "recent":
            for path in self._history_files()[-HISTORY_LOOKBACK:]:
                if _same_attempt(_read_history(path), summary):
                    _write(path, summary, "recent")
            _write(self.recent_path, summary, "recent")
        else:
            _write(self.longterm_path, summary, "longterm")

    def history(self) -> list[tuple[Path, Summary]]:
        """Every history file, ordered by ``covers_to`` (not by name). A file read before
        and not written since (same size and modification time) is not parsed again:
        retrieval reads the history at every turn after a commit."""
        entries = [(path, _read_history(path)) for path in self._history_files()]
        entries.sort(key=lambda e: (e[1].covers_to, e[1].covers_from, _name_key(e[0])))
        return entries

    def _history_files(self) -> list[Path]:
        """History files, oldest name first (``-2`` after the unsuffixed name)."""
        return sorted(self.folder.glob("recent-*.md"), key=_name_key)

    def _history_path_for(self, recent: Summary, now: datetime) -> Path:
        """An earlier attempt's file for this commit, else a new name for ``now``."""
        for path in self._history_files()[-HISTORY_LOOKBACK:]:
            if _same_attempt(_read_history(path), recent):
                return path
        base = f"recent-{_utc(now):%Y%m%d-%H%M%S}"
        suffix = 1
        while True:
            path = self.folder / (f"{base}.md" if suffix == 1 else f"{base}-{suffix}.md")
            if not path.exists() or _same_attempt(_read_history(path), recent):
                return path
            suffix += 1


def _same_attempt(existing: Summary, recent: Summary) -> bool:
    """A history file starting where ``recent`` starts was written by an interrupted
    attempt at this same commit: committed ones all start before the boundary."""
    return existing.covers_from == recent.covers_from


def _name_key(path: Path) -> tuple[str, int, str]:
    match = _HISTORY_NAME.match(path.name)
    if match is None:
        return ("", 0, path.name)  # a hand-made name: oldest
    return (match[1], int(match[2] or 1), path.name)


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    return moment.astimezone(UTC)


def _check_commit(longterm: Summary | None, recent: Summary) -> None:
    _check_summary(recent, "recent")
    if longterm is None:
        return
    _check_summary(longterm, "longterm")
    if longterm.covers_from != 0 or longterm.covers_to != recent.covers_from:
        raise ValueError(
            f"longterm must cover [0, {recent.covers_from}), "
            f"not [{longterm.covers_from}, {longterm.covers_to})"
        )


def _check_summary(summary: Summary, kind: SummaryType) -> None:
    if not 0 <= summary.covers_from < summary.covers_to <= summary.memory_count:
        raise ValueError(
            f"{kind} covers [{summary.covers_from}, {summary.covers_to}) of "
            f"{summary.memory_count} memories: need 0 <= from < to <= memory_count"
        )
    if not summary.text.strip():
        raise ValueError(f"{kind} summary text is empty")


def _write(path: Path, summary: Summary, kind: SummaryType) -> None:
    meta: dict[str, object] = {
        "summary_type": kind,
        "covers_from": summary.covers_from,
        "covers_to": summary.covers_to,
        "memory_count": summary.memory_count,
        "updated": summary.updated,
        "method": summary.method,
        "grounded": summary.grounded,
    }
    if summary.upgraded:
        meta["upgraded"] = True
    if summary.sim:
        meta["sim"] = summary.sim
    if summary.rooms:
        meta["rooms"] = list(summary.rooms)
    write_front_matter(path, meta, f"{HEADINGS[kind]}\n\n{summary.text.strip()}")


def _read_if_exists(path: Path, kind: SummaryType) -> Summary | None:
    return _read(path, kind) if path.exists() else None


_PARSED: dict[str, tuple[tuple[int, int], Summary]] = {}
"""History file -> (its size and modification time when parsed, what it held)."""
_PARSED_MAX: Final = 4096


def _read_history(path: Path) -> Summary:
    try:
        info = path.stat()
    except OSError:
        return _read(path, "recent")  # (which says what is wrong)
    stamp = (info.st_size, info.st_mtime_ns)
    found = _PARSED.get(str(path))
    if found is not None and found[0] == stamp:
        return found[1]
    summary = _read(path, "recent")
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[str(path)] = (stamp, summary)
    return summary


def _read(path: Path, kind: SummaryType) -> Summary:
    meta, body = read_front_matter(path)
    found = meta.get("summary_type")
    if found is None:
        raise VaultError(f"{path}: missing summary_type")
    if found != kind:
        raise VaultError(f"{path}: summary_type must be {kind!r}, not {found!r}")
    numbers = [_int_field(path, meta, key) for key in _INT_FIELDS]
    covers_from, covers_to, memory_count = numbers
    if not 0 <= covers_from <= covers_to <= memory_count:
        raise VaultError(
            f"{path}: need 0 <= covers_from <= covers_to <= memory_count, "
            f"got {covers_from}, {covers_to}, {memory_count}"
        )
    return Summary(
        text=_strip_heading(body, HEADINGS[kind]),
        covers_from=covers_from,
        covers_to=covers_to,
        memory_count=memory_count,
        updated=_updated_field(path, meta),
        method=_method_field(path, meta),
        sim=meta["sim"] if isinstance(meta.get("sim"), str) else None,
        rooms=tuple(r for r in meta.get("rooms") or () if isinstance(r, str))
        if isinstance(meta.get("rooms"), list)
        else (),
        grounded=meta.get("grounded") is True,
        upgraded=meta.get("upgraded") is True,
    )


def _int_field(path: Path, meta: dict[str, Any], key: str) -> int:
    value = meta.get(key)
    if value is None:
        raise VaultError(f"{path}: missing {key}")
    if isinstance(value, bool) or not isinstance(value, int):
        raise VaultError(f"{path}: {key} must be an integer, not {value!r}")
    return value


def _updated_field(path: Path, meta: dict[str, Any]) -> str:
    """A string; an unquoted timestamp (YAML reads it as a datetime) is accepted too."""
    value = meta.get("updated")
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return moment.isoformat(timespec="microseconds")[:-6] + "Z"
    if not isinstance(value, str) or not value.strip():
        raise VaultError(f"{path}: updated must be a UTC timestamp, not {value!r}")
    return value


def _method_field(path: Path, meta: dict[str, Any]) -> Method:
    """``llm`` or ``extractive``; a file from before the field existed is ``llm``."""
    value = meta.get("method", "llm")
    for method in METHODS:
        if value == method:
            return method
    raise VaultError(f"{path}: method must be 'llm' or 'extractive', not {value!r}")


def _strip_heading(body: str, heading: str) -> str:
    first, _, rest = body.partition("\n")
    return rest.strip() if first.strip() == heading else body.strip()
