"""What ``@llm-status`` prints (pure rendering of the dispatcher's metrics and of the
agents' turns: a turn skipped for a reason that is not the LLM's, such as a prompt
that could not be built, shows here and never in the LLM's failures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from engine.llm.dispatcher import Dispatcher
from engine.llm.metrics import seconds


class TurnCounts(Protocol):
    """What the status reads of an agent's thinker (``engine.agents.thinker.Thinker``)."""

    @property
    def name(self) -> str: ...
    @property
    def turns(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def last_error(self) -> str | None: ...


def render_llm_status(
    dispatcher: Dispatcher, models: Sequence[str], thinkers: Sequence[TurnCounts] = ()
) -> str:
    total = dispatcher.metrics
    lines = [
        f"Model: {', '.join(sorted(set(models))) or '-'}",
        f"Queue: {total.queued} waiting, {total.in_flight} in flight",
        f"Calls: {total.calls} ({total.failures} failed, {total.retries} retries); "
        f"tokens {total.prompt_tokens} in, {total.completion_tokens} out",
        f"Latency: mean {seconds(total.mean_latency)}, p50 {seconds(total.p50)}, "
        f"p95 {seconds(total.p95)}",
        f"Last error: {total.last_error or 'none'}",
    ]
    lines.append("Endpoints:")
    for endpoint in dispatcher.endpoints:
        m = endpoint.metrics
        lines.append(
            f"- {endpoint.name}: {m.in_flight}/{endpoint.slots} slots busy, {m.calls} calls, "
            f"{m.failures} failed, p50 {seconds(m.p50)}"
            + (f", last error: {m.last_error}" if m.last_error else "")
        )
    return "\n".join(["LLM status", *lines, *_turn_lines(thinkers)])


def _turn_lines(thinkers: Sequence[TurnCounts]) -> list[str]:
    if not thinkers:
        return []
    turns = sum(t.turns for t in thinkers)
    skipped = sum(t.skipped for t in thinkers)
    lines = [f"Turns: {turns} ({skipped} skipped)"]
    lines += [
        f"- {t.name} skipped {t.skipped} of {t.turns} turns; last: {t.last_error}"
        for t in thinkers
        if t.skipped and t.last_error
    ]
    return lines
