"""A knowledge pass's planning: what it reads, its two LLM calls and what they make of the
bank, up to (not including) the commit, which ``engine.agents.knowledge_pass`` makes
along with the pass's record and its worker's bookkeeping.

- ``pass_inputs``: the agent's notes, memories and summaries since its last pass.
- ``extract``: the inputs -> candidate entries (redacted, at most ``CANDIDATES_MAX``),
  plus facts made from the notes none of them carries; ``PassFailed`` when no reply
  parses.
- ``changes``: the candidates and the bank, with its capacity tier -> the operations
  (``consolidate``), the notes kept, no growth at HEAVY_CUT; consolidation that fails
  falls back to adding every candidate.

Each call's prompt is fitted to the consolidator's ``num_ctx`` (as configured: never
raised) less its reply (``prompt_tokens``), counted as its model counts
(``engine.memory.tokens``), and asked again once (``ASKS``) when its reply does not
parse. A prompt that cannot fit even so (a window smaller than the instructions) is
never sent: the extraction fails the pass (``PassFailed``), the consolidation falls
back to adding every candidate.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from engine.agents.knowledge_consolidation import applied_reply, keep_notes, pass_source
from engine.agents.knowledge_inputs import PassInputs, fit_extraction, gather_inputs
from engine.agents.memory import MemoryStream
from engine.agents.supervisor import one_line
from engine.errors import LLMError
from engine.memory.constraint import Constraint
from engine.memory.json_reply import ReplyUnparseable
from engine.memory.knowledge import Entry, Stamp, new_entry_id
from engine.memory.knowledge_grammar import CANDIDATES_MAX, OPERATIONS_MAX, TAG_MAX, TAGS_MAX
from engine.memory.knowledge_guards import no_growth
from engine.memory.knowledge_ops import (
    Applied,
    Candidate,
    Capacity,
    add_all,
    candidates_from_reply,
    capacity,
    note_candidates,
    shown_entries,
    shown_json,
    substantive,
)
from engine.memory.knowledge_prompts import (
    consolidation_constraint,
    consolidation_prompt,
    extraction_constraint,
)
from engine.memory.record import utc_now
from engine.memory.secrets import redact
from engine.memory.tokens import ESTIMATE, TokenCounter, cut_text, fits, prompt_room
from engine.vault.knowledge_store import PassRecord
from engine.vault.vault import Vault

ASKS: Final = 2
"""Each call is asked once more when its reply does not parse."""
DEFAULT_CTX: Final = 8192
DEFAULT_REPLY: Final = 1200
"""The consolidator's ``num_ctx`` and ``num_predict`` when its options give none."""

_log = logging.getLogger("mudsim.knowledge")

Ask = Callable[[str, Callable[[], Constraint], str], Awaitable[str]]
"""Sends a prompt to the agent's consolidator under a constraint, for a purpose
("extraction", "consolidation"): the reply's text (``LLMError`` when there is none)."""


class PassFailed(Exception):
    """A pass could not extract anything (no reply, or nothing parseable)."""


@dataclass(frozen=True)
class Changes:
    """What a pass makes of the bank, for its commit and its record."""

    applied: Applied
    tier: str = "GENEROUS"
    fallback: str | None = None
    """Why every candidate was added instead (None: the consolidation reply was used)."""
    cap: Capacity | None = None
    """The bank's capacity (None: no candidates, so it was not measured)."""


def pass_inputs(
    vault: Vault, mind: MemoryStream, last: PassRecord | None, warn: Callable[[str], None]
) -> PassInputs:
    """What the agent noted, lived and said since ``last`` (None: since the start)."""
    folder = mind.character.folder
    return gather_inputs(
        mind,
        vault.notes(folder),
        vault.journal_path(folder),
        since_seq=last.memories[1] if last is not None and last.memories else 0,
        since_at=last.started.at if last is not None else None,
        warn=warn,
        allow_fiction=vault.fiction_secrets,
    )


def prompt_tokens(options: Mapping[str, Any]) -> int:
    """The tokens a prompt may take: the window less the reply (``prompt_room``)."""
    room = prompt_room({"num_ctx": DEFAULT_CTX, **options}, default_reply=DEFAULT_REPLY)
    return room if room is not None else 0


async def extract(
    ask: Ask,
    name: str,
    now: str,
    inputs: PassInputs,
    options: Mapping[str, Any],
    *,
    allow_fiction: bool,
    tokens: TokenCounter = ESTIMATE,
) -> tuple[list[Candidate], list[Candidate]]:
    """(the model's candidates that read as knowledge, redacted; the facts made from
    notes none of them carries). ``PassFailed`` when no reply parses. ``tokens``: how the
    consolidator counts tokens (its prompt is fitted by it)."""
    room = prompt_tokens(options)
    prompt = fit_extraction(name, now, inputs, room, tokens)
    if not fits(prompt, room, tokens):
        raise PassFailed(f"the extraction prompt cannot fit ({_too_long(prompt, room, tokens)})")
    problem = "no reply"
    for _ in range(ASKS):
        text = await ask(prompt, extraction_constraint, "extraction")
        try:
            found = candidates_from_reply(text)
        except ReplyUnparseable as exc:
            problem = f"the extraction reply did not parse ({exc})"
            continue
        kept = [  # a model may repeat a secret it saw: it goes no further
            Candidate(
                type=c.type,
                content=redact(c.content, allow_fiction=allow_fiction),
                tags=[redact(t, allow_fiction=allow_fiction) for t in c.tags],
            )
            for c in found
            if substantive(c.content)
        ][:CANDIDATES_MAX]  # an unconstrained reply may list more than it was asked
        return kept, note_candidates(inputs.notes, kept)
    raise PassFailed(problem)


async def changes(
    ask: Ask,
    name: str,
    bank: list[Entry],
    candidates: list[Candidate],
    from_notes: list[Candidate],
    pass_id: str,
    inputs: PassInputs,
    *,
    clock: Callable[[], str],
    options: Mapping[str, Any],
    context_tokens: int | None,
    tokens: TokenCounter = ESTIMATE,
) -> Changes:
    """The consolidation of ``candidates`` into ``bank`` at its capacity tier, with the
    facts from notes kept and, at HEAVY_CUT, no growth; no change without candidates."""
    if not candidates:
        return Changes(Applied(bank=bank, changes=[]))
    cap = capacity(shown_json(bank), context_tokens)
    tier = cap.tier
    applied, fallback = await consolidate(ask, name, bank, candidates, cap, pass_id, inputs,
                                          clock=clock, options=options, tokens=tokens)  # fmt: skip
    now = Stamp(sim=clock(), at=utc_now())
    applied = keep_notes(applied, candidates, from_notes, pass_id=pass_id, now=now,
                         source=pass_source(inputs))  # fmt: skip
    if tier == "HEAVY_CUT":
        applied = no_growth(applied, len(bank))
    return Changes(applied, tier, fallback, cap)


async def consolidate(
    ask: Ask,
    name: str,
    bank: list[Entry],
    candidates: list[Candidate],
    cap: Capacity,
    pass_id: str,
    inputs: PassInputs,
    *,
    clock: Callable[[], str],
    options: Mapping[str, Any],
    tokens: TokenCounter = ESTIMATE,
) -> tuple[Applied, str | None]:
    """(the bank with the reply's operations applied; None) or, when no reply parses,
    the call fails or its prompt cannot fit, (every candidate added; why)."""
    now = Stamp(sim=clock(), at=utc_now())
    source = pass_source(inputs)
    room = prompt_tokens(options)
    prompt, shown = fit_consolidation(name, cap, bank, candidates, room, tokens)
    ids = {k: entry.id for k, entry in shown}

    sendable = fits(prompt, room, tokens)  # else never sent: a server would cut it
    problem = "no reply"
    if not sendable:
        problem = f"the consolidation prompt cannot fit ({_too_long(prompt, room, tokens)})"
    for _ in range(ASKS if sendable else 0):
        try:
            text = await ask(prompt, consolidation_constraint, "consolidation")
        except LLMError as exc:
            problem = f"the consolidation call failed ({one_line(exc)})"
            break
        try:
            applied, ignored = applied_reply(text, ids, bank, candidates, cap.tier,
                                             pass_id=pass_id, now=now, source=source)  # fmt: skip
        except ReplyUnparseable as exc:
            problem = f"the consolidation reply did not parse ({exc})"
            continue
        for why in ignored:
            _log.info("knowledge pass of %s: ignored %s", name, why)
        return applied, None
    applied = add_all(bank, candidates, pass_id=pass_id, now=now, source=source,
                      new_id=new_entry_id)  # fmt: skip
    return applied, f"{problem}: every candidate added"


def fit_consolidation(
    name: str, cap: Capacity, bank: list[Entry], candidates: list[Candidate], room: int,
    tokens: TokenCounter,
) -> tuple[str, list[tuple[int, Entry]]]:  # fmt: skip
    """The consolidation prompt within ``room`` tokens, and the entries it shows: at
    most half the room of entries (the nearest to the candidates first); over the room,
    each candidate is shown cut to its share (a quarter of the room in all; its tags to
    ``TAGS_MAX`` of ``TAG_MAX`` characters; the reply's ADD keeps it whole), then fewer
    entries, halving, down to none, then the candidates' shares halved down to
    ``SHARE_MIN`` tokens. Over the room even so (the instructions alone), the caller
    does not send it."""
    answerable = OPERATIONS_MAX - len(candidates)  # a reply answers each shown entry
    budget = room // 2
    shown, left_out = shown_entries(bank, candidates, budget, answerable, tokens)
    prompt = consolidation_prompt(name, cap, shown, left_out, candidates)
    if fits(prompt, room, tokens):
        return prompt, shown
    share = max(1, room // (4 * max(1, len(candidates))))  # a quarter of the room in all
    while True:
        seen = [_cut_candidate(c, share, tokens) for c in candidates]
        prompt = consolidation_prompt(name, cap, shown, left_out, seen)
        if fits(prompt, room, tokens):
            return prompt, shown
        if shown:
            budget //= 2
            shown, left_out = shown_entries(bank, candidates, budget, answerable, tokens)
        elif share > SHARE_MIN:
            share //= 2
        else:
            return prompt, shown


SHARE_MIN: Final = 16
"""Tokens a candidate is cut to at the least."""


def _cut_candidate(candidate: Candidate, share: int, tokens: TokenCounter) -> Candidate:
    tags = [tag[:TAG_MAX] for tag in candidate.tags[:TAGS_MAX]]
    return candidate.model_copy(
        update={"content": cut_text(candidate.content, share, tokens), "tags": tags}
    )


def _too_long(prompt: str, room: int, tokens: TokenCounter) -> str:
    return (
        f"it takes {tokens.count(prompt)} tokens, and the consolidator's num_ctx less its"
        f" reply leaves {room}"
    )
