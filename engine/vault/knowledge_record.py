"""A knowledge pass's record, ``agents/<Name>/knowledge/passes/<id>.md`` (for
``engine.vault.knowledge_store``): front matter (``PassRecord``), then what the pass
extracted and what it applied, a line each (``pass_body``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine.memory.knowledge import Stamp
from engine.vault.knowledge_log import ChangeLike, op_name

PASS_ID_PATTERN: Final = r"^\d{8}-\d{6}(?:-\d+)?$"
_PASS_ID = re.compile(r"^(\d{8}-\d{6})(?:-(\d+))?$")

Candidate = tuple[str, str, Sequence[str]]
"""What Phase 1 extracted: (type, content, tags)."""


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

    @model_validator(mode="after")
    def _range(self) -> PassRecord:
        if self.memories is not None and not 0 <= self.memories[0] <= self.memories[1]:
            raise ValueError(f"memories {list(self.memories)} is not a range [from, to)")
        return self


def pass_body(pass_id: str, candidates: Sequence[Candidate], changes: Sequence[ChangeLike]) -> str:
    lines = [f"# Knowledge pass {pass_id}", "", "## Extracted", ""]
    for kind, content, tags in candidates:
        tagged = f" [tags: {', '.join(tags)}]" if tags else ""
        lines.append(f"- ({kind}) {_one_line(content)}{tagged}")
    if not candidates:
        lines.append("Nothing.")
    lines += ["", "## Operations", ""]
    lines += [_change_text(change) for change in changes] or ["None."]
    return "\n".join(lines)


def _change_text(change: ChangeLike) -> str:
    op, before, after = op_name(change.op), change.before, change.after
    text = f"- {op} {change.id}"
    entry = after or before
    if before is not None and after is not None:
        text = f"{text}: {_one_line(before.content)} -> {_one_line(after.content)}"
    elif entry is not None:
        text = f"{text}: {_one_line(entry.content)}"
    cut_from = getattr(change, "cut_from", None)
    return f"{text} (cut from {cut_from} characters)" if isinstance(cut_from, int) else text


def _one_line(text: str) -> str:
    return " ".join(text.split())


def id_key(pass_id: str) -> tuple[str, int, str]:
    match = _PASS_ID.match(pass_id)
    return ("", 0, pass_id) if match is None else (match[1], int(match[2] or 1), pass_id)
