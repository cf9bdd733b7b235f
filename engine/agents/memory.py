"""A character's memory component: its journal, its summaries and the bookkeeping
around them.

Every memory is appended to the journal (flushed at once) before anything else
happens. Memories [0, b) are covered by the summaries (L covers [0, S.from), S the
last chunk up to b); only the tail [b, M) is kept in memory, and only it is read
from the journal on a restart. ``b`` comes from the committed short-term summary.

A journal holding fewer memories than the summaries cover is refused at load
(``engine.vault.repair``: ``mudsim repair`` rolls the summaries back). A new
character's Miniworld memory files are imported at its first load, resumably
(``engine.vault.miniworld_import``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from pathlib import Path

from engine.faults import crash_point
from engine.memory.record import MemoryKind, MemoryRecord, utc_now
from engine.memory.status import MemoryStatus, SummaryInfo
from engine.memory.waterfall import Windows
from engine.vault.journal import Journal
from engine.vault.journal_reader import read_tail
from engine.vault.miniworld_import import mark_imported, memories_to_import
from engine.vault.repair import check_journal_covers
from engine.vault.summaries import Summaries, Summary, SummaryStore, SummaryType
from engine.vault.vault import HeldForMemory, LastPrompt, MemoryState, Vault
from engine.world.model import Character


class MemoryStream:
    def __init__(
        self,
        character: Character,
        journal: Journal,
        tail: list[MemoryRecord],
        state: MemoryState,
        windows: Windows,
        summaries: Summaries,
        store: SummaryStore,
    ) -> None:
        self.character = character
        self.journal = journal
        self.tail = tail
        """Memories [b, M), oldest first."""
        self.summaries = summaries
        self.store = store
        self.boundary = summaries.boundary
        """b (never past M: ``open`` refuses a journal shorter than its summaries)."""
        self.failures = state.failures
        self.last_error = state.last_error
        self.rejections: dict[str, int] = dict(state.rejections)
        """Rejected tries of each step of the next compaction (``engine.agents.compactor``)."""
        held = state.held_for_memory
        self.held_turns = held.turns
        self.held_seconds = held.seconds
        """Turns of this agent held at the memory gate, and how long in all (``MemoryGate``)."""
        self.queued_turns = held.queued_turns
        self.queued_seconds = held.queued_seconds
        """Turns of this agent whose calls waited in the dispatcher's queue while urgent
        compactions went first, and how long in all (``MemoryGate.counting``)."""
        self.in_flight = False
        self.summaries_note: str | None = state.summaries
        """Why its summaries are made extractively now (``MemoryState.summaries``)."""
        self._last_chunk: list[MemoryRecord] = []
        """The memories the last commit took out of the tail (what S covers), kept for
        the next merge's grounding (``memory_texts``)."""
        self.windows = windows
        last = state.last_prompt
        self.hidden_in_last_prompt: int | None = last.hidden if last is not None else None
        """Memories the last turn prompt left out to fit ``num_ctx`` (set by the prompt
        builder; None: no turn prompt yet)."""
        self.cut_in_last_prompt: tuple[str, ...] = tuple(last.cut) if last is not None else ()
        """The parts the last turn prompt cut short to fit, in words."""
        self.dropped_from_last_prompt: tuple[str, ...] = (
            tuple(last.dropped) if last is not None else ()
        )
        """The parts the last turn prompt left out whole to fit, in words."""

    @classmethod
    def open(
        cls, vault: Vault, character: Character, windows: Windows, *, warn: Callable[[str], None]
    ) -> MemoryStream:
        store = vault.summaries(character.folder)
        summaries = store.load()
        state = vault.read_state(character.folder)
        journal, tail = Journal.open(
            vault.journal_path(character.folder),
            warn=warn,
            start=summaries.boundary,
            check=lambda count: check_journal_covers(vault, character, count, summaries, state),
        )
        if state.memories > journal.count:
            warn(
                f"{journal.path} holds {journal.count} memories, "
                f"{vault.agent_dir(character.folder) / 'memory-state.json'} recorded "
                f"{state.memories}: the last {state.memories - journal.count} were lost "
                f"(a power cut before they reached the disk?)"
            )
        stream = cls(character, journal, tail, state, windows, summaries, store)
        try:
            stream._import_miniworld(vault.agent_dir(character.folder) / "memories")
        except BaseException:
            journal.close()
            raise
        return stream

    def _import_miniworld(self, folder: Path) -> None:
        """Import (or finish importing) a new character's Miniworld memory files: those
        not in the journal yet, after the ones that are; then mark the folder done."""
        if not folder.is_dir() or self.boundary > 0:
            return
        if any(memory.kind != MemoryKind.IMPORTED for memory in self.tail):
            return  # not a new character: its files are not memories of this journal
        for memory in memories_to_import(folder, [m.text for m in self.tail]):
            self.record(MemoryKind.IMPORTED, memory.text, location=None, occupants=[], at=memory.at)
            crash_point("miniworld-import-mid")
        self.journal.sync()
        mark_imported(folder)

    @property
    def count(self) -> int:
        """M: memories recorded, ever."""
        return self.journal.count

    def record(
        self,
        kind: MemoryKind,
        text: str,
        *,
        location: str | None,
        occupants: list[str],
        command: str | None = None,
        reason: str | None = None,
        failed: bool = False,
        at: str | None = None,
        sim: str | None = None,
        speaker: str | None = None,
    ) -> MemoryRecord:
        """Append one memory; ``sim`` is the world clock's reading, ``speaker`` who
        spoke (speech only)."""
        memory = MemoryRecord(
            seq=self.journal.count,
            at=at or utc_now(),
            kind=kind,
            text=text,
            location=location,
            occupants=occupants,
            command=command,
            reason=reason,
            failed=failed,
            sim=sim,
            speaker=speaker,
        )
        self.journal.append(memory)
        self.tail.append(memory)
        return memory

    def memories(self, start: int, end: int) -> list[MemoryRecord]:
        """Memories [start, end), which must lie in the tail [b, M)."""
        if start < self.boundary or end > self.count:
            raise ValueError(
                f"[{start}, {end}) is outside the tail [{self.boundary}, {self.count})"
            )
        return self.tail[start - self.boundary : end - self.boundary]

    def memory_texts(self, start: int, end: int) -> list[str]:
        """What happened in memories [start, end) (``happened``): from the tail when it
        holds them, else read from the journal (a merge's sources: the raw memories its
        summaries cover)."""
        if start >= self.boundary:
            return happened(self.memories(start, end))
        span = self._last_chunk
        if span and span[0].seq <= start and end <= span[-1].seq + 1:
            return happened(span[start - span[0].seq : end - span[0].seq])
        _, records = read_tail(self.journal.path, start, warn=lambda _: None)
        return happened(records[: end - start])

    def commit(self, longterm: Summary | None, recent: Summary) -> None:
        """Save a compaction (the vault first), then move b to the end of its chunk."""
        self.store.commit(longterm, recent)
        self.summaries = Summaries(recent=recent, longterm=longterm)
        self._last_chunk = self.tail[: recent.covers_to - self.boundary]
        del self.tail[: recent.covers_to - self.boundary]
        self.boundary = recent.covers_to

    def upgrade(self, summary: Summary, kind: SummaryType) -> None:
        """Put a model's rewrite of the current ``kind`` summary in its place (the same
        range: b does not move)."""
        self.store.upgrade(summary, kind)
        if kind == "recent":
            self.summaries = Summaries(recent=summary, longterm=self.summaries.longterm)
        else:
            self.summaries = Summaries(recent=self.summaries.recent, longterm=summary)

    def as_committed(self, longterm: Summary | None, recent: Summary) -> MemoryStream:
        """A copy that reads as this stream will after ``commit(longterm, recent)``,
        with nothing written: what the agent's next prompt will show (prompt warming)."""
        view = copy.copy(self)
        view.summaries = Summaries(recent=recent, longterm=longterm)
        view.tail = self.tail[max(0, recent.covers_to - self.boundary) :]
        view.boundary = recent.covers_to
        return view

    def state(self) -> MemoryState:
        return MemoryState(
            memories=self.count,
            boundary=self.boundary,
            in_flight=self.in_flight,
            failures=self.failures,
            last_error=self.last_error,
            rejections=dict(self.rejections),
            held_for_memory=HeldForMemory(
                turns=self.held_turns,
                seconds=round(self.held_seconds, 3),
                queued_turns=self.queued_turns,
                queued_seconds=round(self.queued_seconds, 3),
            ),
            last_prompt=None
            if self.hidden_in_last_prompt is None
            else LastPrompt(
                hidden=self.hidden_in_last_prompt,
                cut=list(self.cut_in_last_prompt),
                dropped=list(self.dropped_from_last_prompt),
            ),
            summaries=self.summaries_note,
        )

    def status(self) -> MemoryStatus:
        return MemoryStatus(
            name=self.character.name,
            type=self.character.type,
            memories=self.count,
            boundary=self.boundary,
            windows=self.windows,
            in_flight=self.in_flight,
            failures=self.failures,
            last_error=self.last_error,
            short_term=summary_info(self.summaries.recent),
            long_term=summary_info(self.summaries.longterm),
            hidden_in_last_prompt=self.hidden_in_last_prompt,
            cut_in_last_prompt=self.cut_in_last_prompt,
            dropped_from_last_prompt=self.dropped_from_last_prompt,
            held_turns=self.held_turns,
            held_seconds=self.held_seconds,
            summaries=self.summaries_note,
            queued_turns=self.queued_turns,
            queued_seconds=self.queued_seconds,
        )


def happened(records: Iterable[MemoryRecord]) -> list[str]:
    """The texts of ``records`` a summary summarizes: all but what the agent recalled
    (a ``recall``'s result quotes its summaries and notes, which may hold what a model
    once invented: it is no source of facts, and not summarized again)."""
    return [m.text for m in records if not (m.command or "").lower().startswith("recall")]


def summary_info(summary: Summary | None) -> SummaryInfo | None:
    if summary is None:
        return None
    return SummaryInfo(
        summary.covers_from, summary.covers_to, len(summary.text), summary.updated, summary.method
    )
