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
class KnowledgeInfo:
    """The knowledge bank and its passes (read from ``knowledge/``)."""

    entries: int = 0
    tier: str | None = None
    """The last pass's capacity tier (None: no pass has consolidated yet)."""
    capacity_percent: float | None = None
    passes: int = 0
    """Pass records, failed ones included."""
    last_pass: str | None = None
    last_status: str | None = None
    """``changed`` / ``unchanged`` / ``failed``."""
    last_sim: str | None = None
    """When the last pass ended, in simulation time."""
    next_at: int | None = None
    """The memory count at which the next automatic pass starts."""
    in_flight: bool = False
    failures: int = 0
    """Failed passes in a row (the newest records)."""
    last_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "tier": self.tier,
            "capacity_percent": self.capacity_percent,
            "passes": self.passes,
            "last_pass": self.last_pass,
            "last_status": self.last_status,
            "last_sim": self.last_sim,
            "next_at": self.next_at,
            "in_flight": self.in_flight,
            "failures": self.failures,
            "last_error": self.last_error,
        }

    def render(self) -> list[str]:
        size = f"{self.entries} entr{'ies' if self.entries != 1 else 'y'}"
        if self.tier is not None:
            used = (
                f", {self.capacity_percent:.0f}% full" if self.capacity_percent is not None else ""
            )
            size += f" (tier {self.tier}{used})"
        last = "none yet"
        if self.last_pass is not None:
            last = f"{self.last_pass}, {self.last_status}" + (
                f", ended {self.last_sim} world time" if self.last_sim else ""
            )
        lines = [f"  knowledge bank: {size}; last pass: {last}"]
        nxt = f"next pass at {self.next_at} memories" if self.next_at is not None else ""
        if self.in_flight:
            nxt = "a pass is in flight" + (f"; {nxt}" if nxt else "")
        if nxt:
            lines.append(f"  knowledge: {nxt}")
        if self.failures:
            lines.append(
                f"  knowledge passes failed: {self.failures}"
                + (f"; last error: {self.last_error}" if self.last_error else "")
            )
        elif self.last_error:
            lines.append(f"  knowledge problem: {self.last_error}")
        return lines


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
    cut_in_last_prompt: tuple[str, ...] = ()
    """The parts the last turn prompt cut short to fit ``num_ctx``, in words ("room
    description", "2 memories")."""
    dropped_from_last_prompt: tuple[str, ...] = ()
    """The parts the last turn prompt left out whole to fit ``num_ctx``, in words
    ("3 notes", "recent summary")."""
    knowledge: KnowledgeInfo | None = None
    held_turns: int = 0
    """Turns of this character held at the memory gate for memory to catch up
    (back-pressure)."""
    held_seconds: float = 0.0
    """How long those holds lasted in all."""
    queued_turns: int = 0
    """Turns whose model calls waited in the dispatcher's queue while urgent compactions
    (of characters whose memory is behind) went first."""
    queued_seconds: float = 0.0
    """How long those calls waited in the queue in all."""
    summaries: str | None = None
    """Why this character's summaries are made extractively now (None: by the model as
    usual): the summarizer failing, or memories coming faster than it folds them."""
    in_flight_stale: bool = False
    """``memory-state.json`` says a compaction is in flight, but no live process holds
    the vault (one was killed): nothing is in flight, and the next process to take the
    vault clears the mark."""

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
            "in_flight_stale": self.in_flight_stale,
            "failures": self.failures,
            "last_error": self.last_error,
            "summaries": self.summaries,
            "short_term": self.short_term.to_json() if self.short_term else None,
            "long_term": self.long_term.to_json() if self.long_term else None,
            "hidden_in_last_prompt": self.hidden_in_last_prompt,
            "cut_in_last_prompt": list(self.cut_in_last_prompt),
            "dropped_from_last_prompt": list(self.dropped_from_last_prompt),
            "knowledge": self.knowledge.to_json() if self.knowledge else None,
            "held_for_memory": {
                "turns": self.held_turns,
                "seconds": round(self.held_seconds, 3),
                "queued_turns": self.queued_turns,
                "queued_seconds": round(self.queued_seconds, 3),
            },
        }

    def render(self) -> str:
        w = self.windows
        lines = [
            f"Memory of {self.name} ({self.type})",
            f"  memories recorded: {self.memories}; summarised below #{self.boundary}",
            f"  shown word for word: {self.verbatim} (windows: immediate {w.immediate}, recent {w.recent})",
            *_hidden(self.hidden_in_last_prompt),
            *_left_out(self.cut_in_last_prompt, self.dropped_from_last_prompt),
            f"  short-term summary: {_summary(self.short_term)}",
            f"  long-term summary: {_summary(self.long_term)}",
            f"  next compaction at: {self.next_compaction_at} memories"
            + ("; one is in flight" if self.in_flight else "")
            + (STALE if self.in_flight_stale else ""),
            f"  failures: {self.failures}"
            + (f"; last error: {self.last_error}" if self.last_error else ""),
            *([f"  summaries now: {self.summaries}"] if self.summaries else []),
            *_held(self.held_turns, self.held_seconds, self.queued_turns, self.queued_seconds),
            *(self.knowledge.render() if self.knowledge else []),
        ]
        return "\n".join(lines)


STALE = (
    "; memory-state.json says one is in flight, but no process holds the vault: the mark "
    "is stale (left by a process that is gone; the next run, do or repair clears it)"
)


def _held(
    turns: int, seconds: float, queued_turns: int = 0, queued_seconds: float = 0.0
) -> list[str]:
    """Every wait for memory, the total first: turns held at the gate, turns whose calls
    queued behind urgent compactions."""
    if not turns and not queued_turns:
        return []
    if not queued_turns:
        return [f"  held for memory: {_turns(turns)} waited {seconds:.1f} s in all for summaries"]
    parts = [f"{_turns(turns)} held at the gate {seconds:.1f} s"] if turns else []
    parts.append(f"{_turns(queued_turns)} queued behind urgent summaries {queued_seconds:.1f} s")
    return [f"  held for memory: {seconds + queued_seconds:.1f} s in all for summaries "
            f"({'; '.join(parts)})"]  # fmt: skip


def _turns(count: int) -> str:
    return f"{count} turn" if count == 1 else f"{count} turns"


def _hidden(count: int | None) -> list[str]:
    if not count:
        return []
    noun = "memory" if count == 1 else "memories"
    return [f"  {count} older {noun} not shown in the last prompt (to fit num_ctx)"]


def _left_out(cut: tuple[str, ...], dropped: tuple[str, ...]) -> list[str]:
    """What else the last prompt left out to fit, one line each: what it cut short,
    what it dropped."""
    lines = [f"  the last prompt cut short: {', '.join(cut)} (to fit num_ctx)"] if cut else []
    if dropped:
        lines.append(f"  the last prompt left out: {', '.join(dropped)} (to fit num_ctx)")
    return lines


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
