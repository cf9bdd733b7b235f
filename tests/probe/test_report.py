"""The report (pure): accuracy with a Wilson interval, by category and by evidence age,
tokens per question, accuracy per 1,000 tokens, and a table people read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.lab.probe.report import Answer, bucket_of, build_report, table, wilson

QUESTIONS = {
    "q1": {"category": "single-hop", "age": 3},
    "q2": {"category": "single-hop", "age": 100},
    "q3": {"category": "temporal", "age": 20},
    "q4": {"category": "abstention", "age": 0},
}


def test_accuracy_categories_ages_and_tokens() -> None:
    answers = [Answer("q1", "full", "x", True, 1000), Answer("q2", "full", "x", False, 3000),
               Answer("q3", "full", "x", True, 1000), Answer("q4", "full", "x", True, 1000),
               Answer("q1", "none", "x", False, 100)]  # fmt: skip
    report = build_report(QUESTIONS, answers, {"Ada": {"found": 2, "kept": 1}})
    full = report["configs"]["full"]
    assert full["overall"]["accuracy"] == 0.75
    assert full["categories"]["single-hop"]["n"] == 2
    assert full["categories"]["single-hop"]["accuracy"] == 0.5
    assert list(full["by_age"]) == ["0-15", "16-63", "64-255"]  # abstention has no age
    assert full["by_age"]["64-255"]["accuracy"] == 0.0
    assert full["mean_prompt_tokens"] == 1500
    assert full["accuracy_per_1000_tokens"] == 0.5
    assert report["configs"]["none"]["overall"]["accuracy"] == 0.0
    text = table(report)
    assert text.splitlines()[0].split()[:2] == ["config", "overall"]
    assert "75% [" in text
    assert "Ada: 1/2" in text


def test_the_wilson_interval() -> None:
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-3)
    assert high == pytest.approx(0.9433, abs=1e-3)
    assert wilson(0, 0) == (0.0, 1.0)


@given(st.integers(0, 500), st.integers(0, 500))
def test_the_interval_holds_the_estimate(k: int, extra: int) -> None:
    n = k + extra
    low, high = wilson(k, n)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low <= k / n + 1e-9
        assert k / n <= high + 1e-9


@given(st.integers(0, 10_000))
def test_every_age_has_one_bucket(age: int) -> None:
    name = bucket_of(age)
    if age >= 1024:
        assert name == "1024+"
    else:
        low, high = map(int, name.split("-"))
        assert low <= age <= high
