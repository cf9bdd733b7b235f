"""What a knowledge pass reads: everything an agent noted, lived and said since its last
pass (seed 000's "files, working memory, session histories", in a text world).

- notes written or changed since the last pass started, whole (its own notes folder
  only: its profile and the knowledge files are never notes);
- its working memory since: the short-term summaries committed since (each a history
  file), then the memories not summarized yet;
- its conversations: the speech memories (``MemoryRecord.speaker``) since, the last
  ``LINES_PER_PARTNER`` per partner.

Everything is redacted (``engine.memory.secrets``) before a prompt can see it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engine.agents.memory import MemoryStream
from engine.memory.knowledge_prompts import extraction_prompt
from engine.memory.record import MemoryRecord
from engine.memory.secrets import redact as redact_text
from engine.memory.tokens import CHARACTERS, TokenCounter, cut_text, fits
from engine.vault.journal_reader import read_tail
from engine.vault.notes import NoteStore

LINES_PER_PARTNER: Final = 20
LINE_CHARS: Final = 500
PART_SHARE: Final = 1 / 8
"""Over its budget, no memory, summary or line of talk takes more of the extraction
prompt than this (it is cut to it)."""
TALK_SCANNED: Final = 4_000
"""Conversations come from at most the newest this many memories (a first pass over a
long journal would otherwise read all of it for 20 lines a partner)."""


@dataclass(frozen=True)
class PassInputs:
    memories: tuple[int, int]
    """The half-open memory seq range this pass covers: from the last pass's end to M."""
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(title, whole body), oldest change first."""
    summaries: list[tuple[str, str]] = field(default_factory=list)
    """(history file name, text) of the short-term summaries committed since."""
    recent: list[str] = field(default_factory=list)
    """The memories since that no summary covers yet, oldest first."""
    conversations: dict[str, list[str]] = field(default_factory=dict)
    """Partner name -> lines said to or by the agent (the last ``LINES_PER_PARTNER``)."""

    @property
    def empty(self) -> bool:
        return not (self.notes or self.summaries or self.recent or self.conversations)


def gather_inputs(
    mind: MemoryStream,
    notes: NoteStore,
    journal: Path,
    *,
    since_seq: int,
    since_at: str | None,
    warn: Callable[[str], None],
    allow_fiction: bool = False,
) -> PassInputs:
    """What changed for ``mind`` since memory ``since_seq`` / wall time ``since_at``
    (None: since ever), redacted (``allow_fiction``: the world's ``fiction_secrets``). A
    summary file that does not read raises ``VaultError``."""
    end = mind.count

    def redact(text: str) -> str:
        return redact_text(text, allow_fiction=allow_fiction)

    changed = [n for n in notes.all() if since_at is None or n.updated > since_at]
    changed.sort(key=lambda note: note.updated)
    summaries = [
        (path.name, redact(summary.text))
        for path, summary in mind.store.history()
        if summary.covers_from >= since_seq
    ]
    recent = [redact(m.text) for m in mind.tail if m.seq >= since_seq]
    talk_from = max(since_seq, end - TALK_SCANNED)
    if talk_from >= mind.boundary:
        records = [m for m in mind.tail if m.seq >= talk_from]
    else:  # older memories are summarized and out of the tail: the journal has them
        records = read_tail(journal, talk_from, warn=warn)[1]
    return PassInputs(
        memories=(min(since_seq, end), end),
        notes=[(redact(n.title), redact(n.body)) for n in changed if n.body.strip()],
        summaries=summaries,
        recent=recent,
        conversations=conversations(records, mind.character.name, allow_fiction=allow_fiction),
    )


def conversations(
    records: list[MemoryRecord], name: str, *, allow_fiction: bool = False
) -> dict[str, list[str]]:
    """Speech to and by ``name``, by partner: who spoke to it, or, for its own words,
    everyone who heard them. Each line cut to ``LINE_CHARS``, the newest kept."""
    lines: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if record.speaker is None:
            continue
        line = redact_text(" ".join(record.text.split()), allow_fiction=allow_fiction)
        line = line[:LINE_CHARS]
        partners = record.occupants if record.speaker == name else [record.speaker]
        for partner in partners:  # words nobody heard are no conversation
            lines[partner].append(line)
    return {p: said[-LINES_PER_PARTNER:] for p, said in lines.items()}


def fit_extraction(
    name: str, now: str, inputs: PassInputs, budget: int, counter: TokenCounter = CHARACTERS
) -> str:
    """The extraction prompt within ``budget`` as ``counter`` counts it (the
    consolidator's tokens; ``CHARACTERS``: characters). Over it, every memory, summary
    and line of talk longer than ``PART_SHARE`` of the budget is cut to it first; then
    the oldest memories go, then the oldest conversation lines, then the summaries;
    notes are cut last, at their ends, and to nothing if need be. Only the instructions
    are never cut."""
    recent, summaries = list(inputs.recent), list(inputs.summaries)
    talk = {p: list(lines) for p, lines in inputs.conversations.items()}
    notes = list(inputs.notes)

    def render() -> str:
        return extraction_prompt(name, now, notes, [t for _, t in summaries], recent, talk)

    prompt = render()
    if fits(prompt, budget, counter):
        return prompt
    part = max(1, int(budget * PART_SHARE))

    def capped(text: str) -> str:
        return cut_text(text, part, counter)

    recent = [capped(m) for m in recent]
    summaries = [(file, capped(text)) for file, text in summaries]
    talk = {p: [capped(line) for line in lines] for p, lines in talk.items()}
    prompt = render()
    while not fits(prompt, budget, counter):
        if recent:
            del recent[: max(1, len(recent) // 4)]
        elif any(talk.values()):
            longest = max(talk, key=lambda p: len(talk[p]))
            del talk[longest][: max(1, len(talk[longest]) // 4)]
        elif summaries:
            del summaries[0]
        elif notes and any(len(body) > 200 for _, body in notes):
            i = max(range(len(notes)), key=lambda n: len(notes[n][1]))
            title, body = notes[i]
            notes[i] = (title, body[: len(body) * 3 // 4] + " (cut)")
        elif notes and any(body for _, body in notes):
            excess = counter.count(prompt) - budget
            notes = [(title, cut_text(body, counter.count(body) - excess, counter))
                     for title, body in notes]  # fmt: skip
            if not fits(render(), budget, counter):
                notes = [(cut_text(title, part, counter), "") for title, _ in notes]
        else:
            break  # the instructions alone are over the budget
        prompt = render()
    return prompt
