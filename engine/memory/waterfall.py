"""The compaction schedule of DESIGN.md ("The stream and the waterfall"), as pure
arithmetic on M (memories recorded), b (the boundary) and the windows I and R.

Memories [0, b) are covered by summaries, [b, M) are shown verbatim. A chunk is due
whenever M - b > I + R; with I = R = 64 that is at M = 129, 193, 257 ...
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Windows:
    immediate: int = 64
    recent: int = 64

    def __post_init__(self) -> None:
        if self.immediate < 1 or self.recent < 1:
            raise ValueError("both windows must be at least 1")

    @property
    def span(self) -> int:
        return self.immediate + self.recent


def compaction_due(memories: int, boundary: int, windows: Windows) -> bool:
    """True when the uncovered tail is longer than I + R."""
    return memories - boundary > windows.span


def next_compaction_at(memories: int, boundary: int, windows: Windows) -> int:
    """The M at which the next chunk is due; the current M while a backlog waits."""
    if compaction_due(memories, boundary, windows):
        return memories
    return boundary + windows.span + 1


def verbatim_count(memories: int, boundary: int, windows: Windows) -> int:
    """How many memories the prompt shows word for word (at most I + R in a backlog)."""
    return max(0, min(memories - boundary, windows.span))
