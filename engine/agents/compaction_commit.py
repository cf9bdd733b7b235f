"""What a compaction commits, made with or without a model (``engine.agents.compactor``
runs them).

- ``compose``: the long-term and short-term ``Summary`` a compaction of a chunk
  commits, from the texts its two steps made (``Made``);
- ``made_at_once``: both steps made extractively, with no model and no wait: what
  the memory bound commits the moment a memory would take a character past it;
- ``upgrade``: a model's summary that arrives after its chunk was committed
  extractively replaces that summary while it is still the current one
  (``upgraded: true``); a later one is dropped;
- ``trusted_older``: the old long-term summary a merge may build on: one stored before
  the gate measured grounding is read against its raw memories first, and replaced by
  an extractive summary of them if it is not grounded in them (stored junk never
  vouches for new junk).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from engine.agents.memory import MemoryStream, happened
from engine.memory.extractive import extractive_merge, extractive_summary
from engine.memory.grounding import grounding
from engine.memory.language import foreign
from engine.memory.record import MemoryRecord, utc_now
from engine.memory.waterfall import Chunk
from engine.vault.summaries import Method, Summary


@dataclass(frozen=True)
class Made:
    """A step's text and how it was made."""

    text: str
    method: Method
    grounded: bool = True
    """Measured grounded in its memories (a copy of an older file may not have been)."""


def compose(
    mind: MemoryStream, chunk: Chunk, records: Sequence[MemoryRecord], merged: Made | None,
    summarized: Made, count: int, now: str,
) -> tuple[Summary | None, Summary]:  # fmt: skip
    """(L, S) of a compaction of ``chunk`` (``records`` its memories) that read the
    summaries ``mind`` holds now; ``count``: M at the commit."""
    old = mind.summaries
    start, end = chunk
    longterm = old.longterm
    if merged is not None and old.recent is not None:
        longterm = Summary(merged.text, 0, old.recent.covers_to, count, now, merged.method,
                           grounded=merged.grounded)  # fmt: skip
    sim = next((m.sim for m in reversed(records) if m.sim), None)
    rooms = tuple(r for r, _ in Counter(m.location for m in records if m.location).most_common())
    recent = Summary(summarized.text, start, end, count, now, summarized.method, sim, rooms,
                     grounded=summarized.grounded)  # fmt: skip
    return longterm, recent


def made_at_once(mind: MemoryStream, chunk: Chunk, budget: int) -> tuple[Made | None, Made]:
    """Both steps of a compaction of ``chunk`` made extractively (no model; no I/O but,
    after a restart, reading the short-term summary's memories back once)."""
    old = mind.summaries
    records = mind.memories(*chunk)
    summarized = Made(extractive_summary(happened(records), budget), "extractive")
    recent, longterm = old.recent, old.longterm
    if recent is None or not old.merge_needed():
        return None, summarized
    if longterm is None:
        return Made(recent.text, recent.method, recent.grounded), summarized
    memories = mind.memory_texts(recent.covers_from, recent.covers_to)
    text = extractive_merge(longterm.text, recent.text, budget, memories)
    return Made(text, "extractive", longterm.grounded and recent.grounded), summarized


def upgrade(
    mind: MemoryStream, chunk: Chunk, merged_over: int | None, merged: Made | None,
    summarized: Made | None,
) -> list[str]:  # fmt: skip
    """Put a model's ``summarized`` (of ``chunk``) and ``merged`` (the long-term summary
    up to ``merged_over``) in place of the extractive summaries committed for the same
    ranges meanwhile, where those are still the current ones. Which were upgraded
    (``recent``, ``longterm``)."""
    done = []
    now = utc_now()
    recent = mind.summaries.recent
    if (
        summarized is not None and summarized.method == "llm" and recent is not None
        and (recent.covers_from, recent.covers_to) == chunk and recent.method == "extractive"
    ):  # fmt: skip
        mind.upgrade(_rewritten(recent, summarized, now), "recent")
        done.append("recent")
    longterm = mind.summaries.longterm
    if (
        merged is not None and merged.method == "llm" and longterm is not None
        and longterm.covers_to == merged_over and longterm.method == "extractive"
    ):  # fmt: skip
        mind.upgrade(_rewritten(longterm, merged, now), "longterm")
        done.append("longterm")
    return done


def _rewritten(summary: Summary, made: Made, now: str) -> Summary:
    return replace(summary, text=made.text, method="llm", upgraded=True, updated=now,
                   grounded=made.grounded)  # fmt: skip


def trusted_older(
    longterm: Summary, budget: int, names: Sequence[str], read: Callable[[int, int], list[str]]
) -> Summary:
    """``longterm`` when it was measured grounded when stored (or is extractive); else
    read against its raw memories (``read(start, end)``): kept if grounded in them,
    otherwise replaced by an extractive summary of them, marked grounded."""
    if longterm.grounded or longterm.method == "extractive":
        return longterm
    memories = read(longterm.covers_from, longterm.covers_to)
    if not memories:
        return longterm
    if not foreign(longterm.text, memories) and grounding(longterm.text, memories, names).grounded:
        return replace(longterm, grounded=True)
    text = extractive_summary(memories, budget)
    return replace(longterm, text=text, method="extractive", grounded=True)
