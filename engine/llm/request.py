"""What the engine asks a language model for, and what comes back (no I/O).

The prompt is a *factory*, called when the request is dispatched rather than when it
is queued, so an agent's prompt is as fresh as possible.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal

from engine.memory.constraint import Constraint

Role = Literal["actor", "summarizer", "consolidator", "handbook", "dream", "warm"]
"""``warm``: a prompt evaluated ahead of a turn, for a prefix cache (one token, discarded);
``handbook``: writing an agent's handbook, ``dream``: an agent's dream (both with the
consolidator's model and options)."""


class Priority(IntEnum):
    """Lower runs first: agent turns before summaries before consolidation."""

    TURN = 0
    SUMMARY = 1
    CONSOLIDATION = 2


@dataclass(frozen=True)
class LLMRequest:
    prompt: Callable[[], str]
    """Called at dispatch; returns the completion-style prompt."""
    model: str
    options: Mapping[str, Any] = field(default_factory=dict)
    """Ollama options: stop, temperature, num_predict, num_ctx, seed ..."""
    system: str | None = None
    raw: bool = True
    """Completion-style prompt sent verbatim (no chat template)."""
    keep_alive: str | None = None
    agent: str | None = None
    role: Role = "actor"
    priority: Priority = Priority.TURN
    patience: int = 1
    """Waiting, it ages: after ``patience`` times ``bypass_limit`` better-priority grants
    it goes first (a player's summary, which no prompt waits for, is more patient than
    an agent's: ``engine.llm.fair_queue``)."""
    urgent: Callable[[], bool] | None = None
    """Asked while it waits: True puts it before every other request (a compaction of a
    character whose memory is too far behind: ``engine.memory.backpressure``)."""
    constraint: Callable[[], Constraint] | None = None
    """Called at dispatch, like the prompt: what a valid reply looks like now."""
    purpose: str | None = None
    """What the call is for, as the run record keys it: ``turn``, ``summary``, ``merge``,
    ``extraction``, ``consolidation``, ``handbook``, ``dream``, ``warm`` (None: from the
    role)."""
    on_send: Callable[[], Awaitable[None]] | None = None
    """Awaited by the dispatcher before it hands the request to a backend (the run
    record's ``send`` gate, ``engine.sim.sequencer``)."""
    record_key: str | None = None
    """The call's key in the run record (``agent|turn|kind|index``): a replay's tape
    serves the recorded reply by it."""
    constrain: bool | None = None
    """Use ``constraint``: None lets the backend decide (the embedded model does; Ollama
    does for a model under a billion parameters; the OpenAI-style backend never does); a
    profile's ``constrain: true`` or ``false`` says so for all."""


@dataclass(frozen=True)
class Generation:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: float = 0.0
    """Seconds from dispatch to the last token."""
    done_reason: str | None = None
    """Why the model stopped, as the backend said it: Ollama's ``done_reason``, an
    OpenAI server's (or llama.cpp's) ``finish_reason``: "stop", "length" ..."""
    cached_tokens: int = 0
    """Prompt tokens served from a cache instead of evaluated (the embedded model's
    prefix cache says; other backends leave it 0)."""
    endpoint: str = ""
    """Which endpoint answered (the dispatcher says)."""
    retries: int = 0
    """Attempts before the one that answered (the dispatcher says)."""
    memory_wait: float = 0.0
    """Seconds a turn's call (``Priority.TURN``) waited in the dispatcher's queue, all its
    attempts together, when urgent requests (compactions of characters whose memory is behind) went before it
    while it waited; 0 when none did (the dispatcher says; a replay's tape serves the
    recorded figure). A turn's is what it waited for memory (``held_for_memory``)."""

    @property
    def truncated(self) -> bool:
        """True when the reply was cut off by the token limit (``num_predict``)."""
        return self.done_reason == "length"
