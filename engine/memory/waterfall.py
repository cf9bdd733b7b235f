"""The compaction schedule of DESIGN.md ("The stream and the waterfall"), as pure
arithmetic on M (memories recorded), b (the boundary) and the windows I and R.

Memories [0, b) are covered by summaries, [b, M) are shown verbatim. A chunk is due
whenever M - b > I + R; with I = R = 64 that is at M = 129, 193, 257 ...

A chunk is a half-open range of sequence numbers [start, end). Automatic chunks are
exactly R long and fixed by index (b only moves on a commit, so a failed chunk is the
same chunk when retried); @compact-memories compacts [b, M - I) in chunks of at most R.
"""

from __future__ import annotations

from dataclasses import dataclass

Chunk = tuple[int, int]
"""A half-open range of memory sequence numbers [start, end)."""


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
    """How many memories the prompt shows word for word.

    All of [b, M) while that is at most I + R. In a backlog (M - b > I + R: the
    summarizer is behind) the shown block starts R, 2R, ... memories past b, at the
    first such start that leaves at most I + R: between I + 1 and I + R memories. Its
    start then stays put for R new memories (and does not move when the chunk being
    summarized commits), so a server's cached prompt prefix keeps serving; a block
    sliding by one memory at a time would make every turn evaluate the whole prompt."""
    uncovered = max(0, memories - boundary)
    over = uncovered - windows.span
    if over <= 0:
        return uncovered
    steps = -(-over // windows.recent)
    return uncovered - steps * windows.recent


def backlog(memories: int, boundary: int, windows: Windows) -> int:
    """Memories past the boundary that the prompt does not show (0 unless M - b > I + R)."""
    return max(0, memories - boundary) - verbatim_count(memories, boundary, windows)


def due_chunk(memories: int, boundary: int, windows: Windows) -> Chunk | None:
    """The automatic chunk [b, b + R) when M - b > I + R, else None."""
    if compaction_due(memories, boundary, windows):
        return (boundary, boundary + windows.recent)
    return None


def forced_target(memories: int, boundary: int, windows: Windows) -> int | None:
    """@compact-memories: compact up to M - I (exclusive); None when M - I <= b."""
    target = memories - windows.immediate
    return target if target > boundary else None


def next_chunk(
    memories: int, boundary: int, windows: Windows, target: int | None = None
) -> Chunk | None:
    """What a compaction worker does next: the automatic due chunk [b, b + R) if there
    is one; else, with a forced target above b, [b, min(b + R, target)); else None.

    The due chunk wins because a forced target is fixed when the command is given: if
    the stream has since grown past the trigger, the full chunk covers the target's
    part too, so a stale target never makes a needlessly short, off-grid chunk."""
    due = due_chunk(memories, boundary, windows)
    if due is not None or target is None or target <= boundary:
        return due
    return (boundary, min(boundary + windows.recent, target))
