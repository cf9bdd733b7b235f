"""The two steps of a compaction, each asked of the summarizer and judged, with their
fallbacks (``engine.agents.compactor`` runs them side by side).

- **merge**: the long-term summary L and the short-term S folded into a new L;
- **chunk**: the chunk's memories summarized into a new S.

A step's prompt is fitted to the summarizer's ``num_ctx`` in tokens first
(``prompt_budget``, counted by the model's tokenizer or a safe estimate): a chunk's
longest memory lines are cut, a merge's two summaries are cut; a prompt that cannot fit
even so is made extractively at once, with no call.

Every reply goes through the quality gate (``engine.memory.summary_quality``), with
what it must be grounded in and the length the agent's prompt shows whole (``limit``):
a chunk's summary, its raw memories; a merge, the old long-term summary (trusted:
``engine.agents.compaction_commit.trusted_older``) and the recent one with the raw
memories it covers; both, the agent's profile and the world's names (``names``).
While the summarizer is failing, or the memory bound outruns it (``use_model`` off:
``engine.agents.compactor``), both steps are made extractively with no call. A step fails by a *rejection* when the gate says no, or when the
model refused the request itself (an HTTP 4xx, a context overflow, the embedded
model's refusal: ``engine.errors.about_the_request``); errors about the server are
raised as they are (the compactor backs off and retries). Rejections are counted on
the character's memory state (``MemoryStream.rejections``, saved with it), so any
sequence of processes (``run``, ``do``, ``play``, ``serve``) reaches the fallback:
after ``MAX_REJECTIONS`` of one step, that step is made extractively
(``method: extractive``). A reply rejected only for its length is asked for again
once; a second one too long is compressed to its best sentences within the limit.

Requests carry the character's urgency (``urgent``: its memory is falling behind, so
its summaries go before every turn) and a player's patience (``PLAYER_PATIENCE``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from engine.agents.memory import MemoryStream
from engine.agents.supervisor import one_line
from engine.agents.thinker import Generator
from engine.errors import LLMError, LLMResponseError, about_the_request
from engine.llm.request import LLMRequest, Priority
from engine.memory.backpressure import PLAYER_PATIENCE
from engine.memory.extractive import extractive_compress, extractive_merge, extractive_summary
from engine.memory.summary_grammar import summary_constraint, unwrap_summary
from engine.memory.summary_prompts import (
    fitted_chunk_prompt,
    fitted_merge_prompt,
    prompt_budget,
    summary_budget,
)
from engine.memory.summary_quality import TOO_LONG, MergeParts, judge_summary
from engine.memory.tokens import counter_of
from engine.memory.waterfall import Chunk
from engine.vault.summaries import Method, Summary

MAX_REJECTIONS: Final = 3
"""Rejected replies for one step before it is done extractively."""


class SummaryRejectedError(LLMResponseError):
    """The summarizer answered, but not with a summary (the quality gate said no), or it
    refused the request itself."""

    def __init__(self, message: str, *, exhausted: bool) -> None:
        super().__init__(message)
        self.exhausted = exhausted
        """The step has had ``MAX_REJECTIONS``: its next try needs no model."""


class Calling(Protocol):
    """A compaction worker: how many of its calls are in progress."""

    mind: MemoryStream
    calling: int


@dataclass
class CompactionTally:
    """What this session's compactions did, for the run summary."""

    committed: int = 0
    failed: int = 0
    """Failed attempts, of every kind (rejections included)."""
    rejected: int = 0
    """Replies the quality gate rejected, and requests the model refused."""
    extractive: int = 0
    """Summaries (of a chunk, or merged) made without the model."""
    upgraded: int = 0
    """Extractive summaries a model's arriving later replaced."""


def extractive_budget(options: Mapping[str, Any], limit: int | None) -> int:
    """The length of an extractive summary: within ``num_predict`` and ``limit``."""
    budget = summary_budget(options)
    return budget if limit is None else min(budget, limit)


@dataclass
class SummarySteps:
    llm: Generator
    models: Mapping[str, str]
    options: Mapping[str, Any]
    constrain: bool | None
    limit: int | None
    """The most characters a summary may have: what the agent's prompt shows whole
    (the actor's ``summary_tokens``); None: no limit but ``num_predict``."""
    urgent: Callable[[MemoryStream], bool]
    tally: CompactionTally
    names: Sequence[str] = ()
    """What a summary may name besides its memories: the agent's profile, the world's
    rooms, objects and people (``engine.memory.grounding``)."""
    use_model: bool = True
    """False while the summarizer is failing (``SummarizerHealth``): both steps are
    made extractively, with no call."""
    answered: Callable[[], None] = field(default=lambda: None)
    """Told when the summarizer answers (even with a reply the gate rejects)."""

    @property
    def budget(self) -> int:
        """The length of an extractive summary (``extractive_budget``)."""
        return extractive_budget(self.options, self.limit)

    async def merge(
        self, worker: Calling, longterm: Summary, recent: Summary, recent_memories: list[str]
    ) -> tuple[str, Method]:
        """L and S folded into one summary (``recent_memories``: the raw memories S covers,
        what the merge's new material is measured against)."""
        mind = worker.mind
        key = f"merge@{recent.covers_to}"
        prompt = fitted_merge_prompt(mind.character.name, longterm.text, recent.text, self.limit,
                                     prompt_budget(self.options), counter_of(self.llm))  # fmt: skip
        if not self.use_model or mind.rejections.get(key, 0) >= MAX_REJECTIONS or prompt is None:
            text = extractive_merge(longterm.text, recent.text, self.budget, recent_memories)
            return text, "extractive"
        parts = MergeParts(longterm.text, recent.text, recent_memories)
        return await self._ask(worker, prompt, key, "merge into the long-term summary",
                               purpose="merge", sources=[], merge=parts)  # fmt: skip

    async def chunk(self, worker: Calling, chunk: Chunk, memories: list[str]) -> tuple[str, Method]:
        """The chunk's memories summarized."""
        mind = worker.mind
        start, end = chunk
        key = f"chunk@{start}"
        prompt = fitted_chunk_prompt(mind.character.name, memories, prompt_budget(self.options),
                                     counter_of(self.llm))  # fmt: skip
        if (
            not memories  # (nothing happened in it but recalling)
            or not self.use_model
            or prompt is None
            or mind.rejections.get(key, 0) >= MAX_REJECTIONS
        ):
            return extractive_summary(memories, self.budget), "extractive"
        return await self._ask(worker, prompt, key, f"summary of #{start}-#{end - 1}",
                               purpose="summary", sources=memories)  # fmt: skip

    async def _ask(
        self, worker: Calling, prompt: str, key: str, what: str, *, purpose: str,
        sources: list[str], merge: MergeParts | None = None,
    ) -> tuple[str, Method]:  # fmt: skip
        mind = worker.mind
        player = mind.character.type != "agent"
        request = LLMRequest(
            prompt=lambda: prompt,
            model=self.models.get(mind.character.id, ""),
            options=self.options,
            agent=mind.character.name,
            role="summarizer",
            purpose=purpose,
            priority=Priority.SUMMARY,
            # an agent's next prompts wait for its summaries; a player's prompt is a
            # person, so its summaries let more turns go first (never without limit)
            patience=PLAYER_PATIENCE if player else 1,
            urgent=lambda: self.urgent(mind),
            constraint=summary_constraint,
            constrain=self.constrain,
        )
        worker.calling += 1
        try:
            reply = await self.llm.generate(request)
        except LLMError as exc:
            if not about_the_request(exc):
                raise
            self.answered()
            problem = f"the summarizer refused the request ({one_line(exc)})"
            raise self._rejected(mind, key, f"{what} rejected: {problem}") from exc
        finally:
            worker.calling -= 1
        self.answered()
        verdict = judge_summary(
            unwrap_summary(reply.text), prompt, sources=sources, names=self.names,
            limit=self.limit, merge=merge, truncated=reply.truncated,
        )  # fmt: skip
        if verdict.summary is not None:
            return verdict.summary, "llm"
        if verdict.problem == TOO_LONG and verdict.cleaned and self.limit is not None:
            longer = f"long {key}"
            if mind.rejections.get(longer, 0) >= 1:  # asked again, too long again
                return extractive_compress(verdict.cleaned, self.limit), "extractive"
            mind.rejections[longer] = mind.rejections.get(longer, 0) + 1
        raise self._rejected(mind, key, f"{what} rejected: {verdict.problem}")

    def _rejected(self, mind: MemoryStream, key: str, message: str) -> SummaryRejectedError:
        count = mind.rejections[key] = mind.rejections.get(key, 0) + 1
        self.tally.rejected += 1
        return SummaryRejectedError(message, exhausted=count >= MAX_REJECTIONS)
