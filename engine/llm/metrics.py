"""Counters and latency percentiles for LLM calls (pure bookkeeping, no I/O).

One ``LLMMetrics`` per endpoint and one for the whole dispatcher; ``@llm-status``,
the run summary and the TUI read them.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

LATENCY_WINDOW = 1000
"""How many recent latencies the percentiles are taken over."""


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """The nearest-rank percentile (``fraction`` in [0, 1]) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass
class LLMMetrics:
    calls: int = 0
    """Requests finished, successfully or not (retries are not extra calls)."""
    failures: int = 0
    """Requests that failed after all their retries."""
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_total: float = 0.0
    queued: int = 0
    in_flight: int = 0
    last_error: str | None = None
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_WINDOW))

    def succeeded(self, prompt_tokens: int, completion_tokens: int, latency: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.latency_total += latency
        self.latencies.append(latency)

    def since(self, before: LLMMetrics) -> LLMMetrics:
        """The calls finished after ``before`` (a copy taken then): a fork's live part."""
        return LLMMetrics(
            calls=self.calls - before.calls, failures=self.failures - before.failures,
            retries=self.retries - before.retries,
            prompt_tokens=self.prompt_tokens - before.prompt_tokens,
            completion_tokens=self.completion_tokens - before.completion_tokens,
            latency_total=self.latency_total - before.latency_total,
        )  # fmt: skip

    def failed(self, error: str) -> None:
        self.calls += 1
        self.failures += 1
        self.last_error = error

    @property
    def mean_latency(self) -> float | None:
        succeeded = self.calls - self.failures
        return self.latency_total / succeeded if succeeded else None

    @property
    def tokens_per_second(self) -> float | None:
        """Completion tokens per second of generation, over every successful call."""
        return self.completion_tokens / self.latency_total if self.latency_total > 0 else None

    @property
    def p50(self) -> float | None:
        return percentile(self.latencies, 0.5)

    @property
    def p95(self) -> float | None:
        return percentile(self.latencies, 0.95)

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "failures": self.failures,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_mean": self.mean_latency,
            "latency_p50": self.p50,
            "latency_p95": self.p95,
            "queued": self.queued,
            "in_flight": self.in_flight,
            "last_error": self.last_error,
        }


def seconds(value: float | None) -> str:
    """``0.1234`` -> ``"0.12 s"``; None -> ``"-"``."""
    return "-" if value is None else f"{value:.2f} s"
