"""Latency percentiles and call counters (pure bookkeeping)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.llm.metrics import LLMMetrics, percentile, seconds

latencies = st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=1)


@given(latencies, st.floats(min_value=0, max_value=1))
def test_a_percentile_is_one_of_the_values_and_within_their_range(
    values: list[float], fraction: float
) -> None:
    found = percentile(values, fraction)
    assert found in values
    assert min(values) <= found <= max(values)


@given(latencies, st.floats(min_value=0, max_value=1), st.floats(min_value=0, max_value=1))
def test_percentiles_grow_with_the_fraction(values: list[float], a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert percentile(values, low) <= percentile(values, high)  # type: ignore[operator]


def test_nearest_rank_examples() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.95) == 95.0
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([], 0.5) is None


def test_counters_and_means() -> None:
    metrics = LLMMetrics()
    metrics.succeeded(10, 2, 0.5)
    metrics.succeeded(20, 4, 1.5)
    metrics.failed("HTTP 500: boom")
    assert (metrics.calls, metrics.failures) == (3, 1)
    assert (metrics.prompt_tokens, metrics.completion_tokens) == (30, 6)
    assert metrics.mean_latency == 1.0
    assert metrics.to_json()["last_error"] == "HTTP 500: boom"
    assert seconds(metrics.mean_latency) == "1.00 s"
    assert seconds(LLMMetrics().mean_latency) == "-"
