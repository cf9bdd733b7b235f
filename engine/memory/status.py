"""What ``@memory-status`` and ``mudsim status`` report about one character (pure).

The JSON shape is a contract (the compaction issue): fields not built yet are null
or 0, and more keys may be added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.memory.waterfall import Windows, next_compaction_at, verbatim_count


@dataclass(frozen=True)
class SummaryInfo:
    covers_from: int
    covers_to: int
    chars: int
    updated: str
    method: str = "llm"
    """``llm``, or ``extractive``: picked from the memories without a model, after the
    summarizer's replies kept failing the quality gate."""

    def to_json(self) -> dict[str, Any]:
        return {
            "covers_from": self.covers_from,
            "covers_to": self.covers_to,
            "chars": self.chars,
            "updated": self.updated,
            "method": self.method,
        }


@dataclass(frozen=True)
class MemoryStatus:
    name: str
    type: str
    memories: int
    boundary: int
    windows: Windows
    in_flight: bool = False
    failures: int = 0
    last_error: str | None = None
    short_term: SummaryInfo | None = None
    long_term: SummaryInfo | None = None
    hidden_in_last_prompt: int | None = None
    """Memories the last turn prompt left out to fit ``num_ctx`` (None: no turn yet)."""

    @property
    def verbatim(self) -> int:
        return verbatim_count(self.memories, self.boundary, self.windows)

    @property
    def next_compaction_at(self) -> int:
        return next_compaction_at(self.memories, self.boundary, self.windows)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "memories": self.memories,
            "boundary": self.boundary,
            "verbatim": self.verbatim,
            "immediate_window": self.windows.immediate,
            "recent_window": self.windows.recent,
            "next_compaction_at": self.next_compaction_at,
            "in_flight": self.in_flight,
            "failures": self.failures,
            "last_error": self.last_error,
            "short_term": self.short_term.to_json() if self.short_term else None,
            "long_term": self.long_term.to_json() if self.long_term else None,
            "hidden_in_last_prompt": self.hidden_in_last_prompt,
        }

    def render(self) -> str:
        w = self.windows
        lines = [
            f"Memory of {self.name} ({self.type})",
            f"  memories recorded: {self.memories}; summarised below #{self.boundary}",
            f"  shown word for word: {self.verbatim} (windows: immediate {w.immediate}, recent {w.recent})",
            *_hidden(self.hidden_in_last_prompt),
            f"  short-term summary: {_summary(self.short_term)}",
            f"  long-term summary: {_summary(self.long_term)}",
            f"  next compaction at: {self.next_compaction_at} memories"
            + ("; one is in flight" if self.in_flight else ""),
            f"  failures: {self.failures}"
            + (f"; last error: {self.last_error}" if self.last_error else ""),
        ]
        return "\n".join(lines)


def _hidden(count: int | None) -> list[str]:
    if not count:
        return []
    noun = "memory" if count == 1 else "memories"
    return [f"  {count} older {noun} not shown in the last prompt (to fit num_ctx)"]


def _summary(info: SummaryInfo | None) -> str:
    if info is None:
        return "none yet"
    made = (
        "; extractive (the summarizer's replies were rejected)"
        if info.method == "extractive"
        else ""
    )
    return (
        f"{info.chars} chars covering #{info.covers_from}-#{info.covers_to - 1}, "
        f"updated {info.updated}{made}"
    )
