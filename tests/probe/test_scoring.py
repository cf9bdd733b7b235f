"""Scoring (pure): outcomes, what the situation gives away, the baselines' expectations,
McNemar's exact test, the ceiling's verdict, and age by the oldest evidence."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.lab.probe.questions import IDK
from engine.lab.probe.scoring import (
    Situation,
    baseline_scores,
    ceiling_verdict,
    leaks,
    mcnemar_exact,
    outcome,
    paired,
    present_choice,
    question_age,
    wilson,
)

OPTIONS = ("The Yard", IDK, "The Hall", "Bo", "Pat")


def test_outcomes() -> None:
    assert outcome("Bo", "Bo") == "correct"
    assert outcome("Pat", "Bo") == "wrong"
    assert outcome(IDK, "Bo") == "abstained"  # a false abstention
    assert outcome(IDK, IDK) == "correct"  # a correct abstention
    assert outcome("Bo", IDK) == "wrong"  # a false answer
    assert outcome(None, IDK) == "unparsed"  # silence is no abstention
    assert outcome(None, "Bo") == "unparsed"


def test_what_the_situation_gives_away() -> None:
    here = Situation("The Hall", ("Bo",), ("a brass lamp",))
    assert leaks("The Hall", here)
    assert leaks("bo", here)
    assert leaks("a brass lamp", here)
    assert not leaks("The Yard", here)
    assert not leaks(IDK, here)
    assert present_choice(OPTIONS, here) == "The Hall"  # the room first
    assert present_choice(("Pat", "Bo", IDK), here) == "Bo"
    assert present_choice(("Pat", "The Yard", IDK), here) == IDK
    assert present_choice(OPTIONS, Situation()) == IDK


def test_baselines_of_one_question() -> None:
    here = Situation("The Hall")
    assert baseline_scores(OPTIONS, "The Hall", here) == {
        "uniform": 0.2, "guess": 0.25, "dont_know": 0.0, "present": 1.0}  # fmt: skip
    assert baseline_scores(OPTIONS, IDK, here) == {
        "uniform": 0.2, "guess": 0.0, "dont_know": 1.0, "present": 0.0}  # fmt: skip


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(0, 0, 1.0), (5, 5, 1.0), (0, 5, 0.0625), (1, 9, 0.021484375), (3, 12, 0.03515625)],
)
def test_mcnemar_exact_known_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-3)


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_is_a_symmetric_probability(b: int, c: int) -> None:
    p = mcnemar_exact(b, c)
    assert 0.0 < p <= 1.0
    assert p == mcnemar_exact(c, b)
    n = b + c
    if n:  # the two-sided tail, by its definition
        tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
        assert p == pytest.approx(min(1.0, 2 * tail))
    if b == c:
        assert p == 1.0
    assert mcnemar_exact(b, c + 1) <= p or c + 1 <= b


def test_paired_counts_only_the_shared_questions() -> None:
    first = {"q1": True, "q2": True, "q3": False, "q4": True}
    second = {"q1": False, "q2": True, "q3": True, "q5": True}
    assert paired(first, second) == {"n": 3, "a_only": 1, "b_only": 1, "p_value": 1.0}


def test_the_ceilings_verdict() -> None:
    assert ceiling_verdict(30, 40, 0.25) == "informative"
    assert ceiling_verdict(12, 40, 0.25) == "uninformative"  # 30%, but its interval reaches 25%
    assert ceiling_verdict(0, 0, 0.25) == "not measured"


@given(st.integers(0, 200), st.integers(0, 200), st.floats(0, 1))
def test_informative_means_the_lower_bound_is_above(k: int, extra: int, best: float) -> None:
    n = k + extra
    verdict = ceiling_verdict(k, n, best)
    if n == 0:
        assert verdict == "not measured"
    else:
        assert (verdict == "informative") == (wilson(k, n)[0] > best)


@given(st.integers(0, 500), st.lists(st.integers(0, 499), max_size=5))
def test_age_by_the_oldest_evidence(count: int, evidence: list[int]) -> None:
    """Defect 5: age was the newest evidence's."""
    age, span = question_age(count + 500, evidence)
    if evidence:
        assert age == count + 500 - min(evidence)
        assert span == max(evidence) - min(evidence)
        assert age - span == count + 500 - max(evidence)  # the newest's age
    else:
        assert (age, span) == (count + 500, 0)
