"""A knowledge pass's record, ``agents/<Name>/knowledge/passes/<id>.md`` (for
``engine.vault.knowledge_store``): front matter (``PassRecord``), then what the pass
extracted and what it applied, a line each (``pass_body``).

A record stays within ``RECORD_BYTES`` (32 KiB) however many candidates and changes,
and however long the model wrote them: each candidate is cut as an entry is
(``cut_content``, ``CONTENT_MAX`` characters, saying ``(cut from N characters)``), its
tags to ``TAGS_CHARS``, each change's texts so too; the body is then kept within
``BODY_BYTES`` (the rest is for the front matter, whose error and fallback are cut to
``REASON_CHARS``): each of its two lists gets half, a list that needs less leaving the
rest to the other, and a list over its part keeps its first lines and ends on one
saying how many were left out (the log, ``log.jsonl``, has every change whole)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine.memory.knowledge import Stamp, cut_content
from engine.vault.knowledge_log import ChangeLike, op_name

PASS_ID_PATTERN: Final = r"^\d{8}-\d{6}(?:-\d+)?$"
_PASS_ID = re.compile(r"^(\d{8}-\d{6})(?:-(\d+))?$")

Candidate = tuple[str, str, Sequence[str]]
"""What Phase 1 extracted: (type, content, tags)."""
RECORD_BYTES: Final = 32_768
BODY_BYTES: Final = 28_672
"""The body's UTF-8 bytes at most: 4 KiB of ``RECORD_BYTES`` left to the front matter."""
TAGS_CHARS: Final = 200
REASON_CHARS: Final = 1_000
"""An error or a fallback in the front matter, at most."""


class PassRecord(BaseModel):
    """A pass record's front matter; ``pass`` is ``pass_id`` in Python."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pass_id: str = Field(alias="pass", pattern=PASS_ID_PATTERN)
    status: Literal["changed", "unchanged", "failed"]
    started: Stamp
    finished: Stamp
    memories: tuple[int, int] | None = None
    """The half-open memory seq range read."""
    notes: list[str] = Field(default_factory=list)
    """Titles of the notes read."""
    summaries: list[str] = Field(default_factory=list)
    """Names of the summary history files read."""
    candidates: int = Field(default=0, ge=0)
    operations: dict[str, int] = Field(default_factory=dict)
    """How many of each operation (``{"ADD": 2, "UPDATE": 1}``)."""
    tier: str | None = None
    capacity_tokens: int | None = Field(default=None, ge=0)
    capacity_percent: float | None = None
    fallback: str | None = None
    """Why a fallback was taken (``consolidation unparseable: every candidate added``)."""
    error: str | None = None

    @field_validator("error", "fallback")
    @classmethod
    def _short(cls, reason: str | None) -> str | None:
        return None if reason is None else cut_content(reason, REASON_CHARS)

    @model_validator(mode="after")
    def _range(self) -> PassRecord:
        if self.memories is not None and not 0 <= self.memories[0] <= self.memories[1]:
            raise ValueError(f"memories {list(self.memories)} is not a range [from, to)")
        return self


def pass_body(pass_id: str, candidates: Sequence[Candidate], changes: Sequence[ChangeLike]) -> str:
    """The record's body within ``BODY_BYTES`` (see the module)."""
    extracted = [_candidate_text(kind, content, tags) for kind, content, tags in candidates]
    applied = [_change_text(change) for change in changes]
    head = [f"# Knowledge pass {pass_id}", "", "## Extracted", ""]
    middle = ["", "## Operations", ""]
    room = BODY_BYTES - _bytes("\n".join([*head, *middle])) - 2 * LEFT_OUT_BYTES
    first, second = _halves(_bytes("\n".join(extracted)), _bytes("\n".join(applied)), room)
    lines = [*head, *(_first_lines(extracted, first, "candidates") or ["Nothing."])]
    lines += [*middle, *(_first_lines(applied, second, "operations") or ["None."])]
    return "\n".join(lines)


LEFT_OUT_BYTES: Final = 120
"""Kept for each list's last line when it is cut."""


def _candidate_text(kind: str, content: str, tags: Sequence[str]) -> str:
    tagged = f" [tags: {cut_content(', '.join(tags), TAGS_CHARS)}]" if tags else ""
    return f"- ({kind}) {_cut(content)}{tagged}"


def _change_text(change: ChangeLike) -> str:
    op, before, after = op_name(change.op), change.before, change.after
    text = f"- {op} {change.id}"
    entry = after or before
    if before is not None and after is not None:
        text = f"{text}: {_cut(before.content)} -> {_cut(after.content)}"
    elif entry is not None:
        text = f"{text}: {_cut(entry.content)}"
    cut_from = getattr(change, "cut_from", None)
    return f"{text} (cut from {cut_from} characters)" if isinstance(cut_from, int) else text


def _cut(text: str) -> str:
    """``text`` on one line, cut as an entry is, saying from how long when it was."""
    line = _one_line(text)
    shown = cut_content(line)
    return shown if shown == line else f"{shown} (cut from {len(text)} characters)"


def _halves(first: int, second: int, room: int) -> tuple[int, int]:
    """``room`` split in two, a part that needs less than half leaving the rest."""
    half = max(0, room) // 2
    if first <= half:
        return first, max(0, room) - first
    if second <= half:
        return max(0, room) - second, second
    return half, half


def _first_lines(lines: list[str], room: int, what: str) -> list[str]:
    """The first ``lines`` within ``room`` bytes, then one saying how many are left out."""
    kept, used = [], 0
    for line in lines:
        used += _bytes(line) + 1
        if used > room + 1:
            break
        kept.append(line)
    if len(kept) < len(lines):
        kept.append(f"({len(lines) - len(kept)} more {what} left out: a record is kept"
                    f" within {RECORD_BYTES:,} bytes; log.jsonl has every change)")  # fmt: skip
    return kept


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def id_key(pass_id: str) -> tuple[str, int, str]:
    match = _PASS_ID.match(pass_id)
    return ("", 0, pass_id) if match is None else (match[1], int(match[2] or 1), pass_id)
