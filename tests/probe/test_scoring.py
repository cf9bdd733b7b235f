"""Scoring (pure): outcomes, what the situation gives away, the baselines' expectations
(the present-aware one among them), McNemar's exact test, Holm's correction, the
ceiling's verdict, and age by the oldest evidence."""

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
    holm,
    leaks,
    mcnemar_exact,
    outcome,
    paired,
    present_aware,
    present_choice,
    question_age,
    room_scores,
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


def test_mcnemar_past_a_thousand_discordant_questions() -> None:
    """2**n was a float: past 1,023 questions apart it overflowed."""
    assert mcnemar_exact(600, 600) == 1.0
    assert 0.0 <= mcnemar_exact(0, 1200) < 1e-300


def test_what_readers_with_no_memory_expect_from_the_room() -> None:
    """Issue 43: outside ``present`` a shown option is never the gold, so a reader that
    avoids the room expects more than ``guess``, one drawn to it less."""
    here = Situation("The Hall", ("Bo",))
    # shown: The Hall and Bo; the others: The Yard and Pat
    assert room_scores(OPTIONS, "Pat", here) == (0.0, 0.25, 0.5)
    assert room_scores(OPTIONS, "The Hall", here) == (0.5, 0.25, 0.0)  # a present question
    assert room_scores(OPTIONS, IDK, here) == (0.0, 0.0, 0.0)  # abstention: never right
    assert room_scores(OPTIONS, "Pat", Situation("The Cellar")) == (0.25, 0.25, 0.25)
    everyone = Situation("The Yard", ("Bo", "Pat"), ("The Hall",))  # every option shown
    assert room_scores(OPTIONS, "Pat", everyone) == (0.25, 0.25, 0.25)


def test_the_present_aware_baseline_worked_out() -> None:
    """40 questions with two options shown (never the gold) and 40 with none: always
    picking a shown one expects 12.5%, never picking one 37.5%; each end is widened by
    1.96 times its standard error, sqrt(sum p(1 - p)) / n."""
    rows = [(0.0, 0.25, 0.5)] * 40 + [(0.25, 0.25, 0.25)] * 40
    aware = present_aware(rows)
    assert aware is not None
    assert aware["accuracy"] == 0.25
    assert (aware["always_shown"], aware["never_shown"]) == (0.125, 0.375)
    low = 0.125 - 1.96 * math.sqrt(40 * 0.1875) / 80
    high = 0.375 + 1.96 * math.sqrt(40 * 0.25 + 40 * 0.1875) / 80
    assert aware["interval"] == [round(low, 4), round(high, 4)] == [0.0579, 0.4775]
    assert present_aware([]) is None
    assert present_aware([(0.25, 0.25, 0.25)] * 10000)["interval"] == [0.2415, 0.2585]  # type: ignore[index]


_row = st.sampled_from([(0.0, 0.25, 0.5), (0.0, 0.25, 1 / 3), (0.25, 0.25, 0.25),
                        (0.0, 0.25, 1.0), (0.0, 0.0, 0.0)])  # fmt: skip


@given(st.lists(_row, min_size=1, max_size=300))
def test_the_present_aware_interval_holds_both_readers_and_guess(
    rows: list[tuple[float, float, float]],
) -> None:
    """With the gold never shown (the answerable questions), each question's ``guess``
    lies between the two readers', and so does the mean; the interval holds all three
    and is the same whatever the questions' order."""
    aware = present_aware(rows)
    assert aware is not None
    low, high = aware["interval"]
    assert 0.0 <= low <= aware["always_shown"] <= aware["accuracy"] + 1e-9
    assert aware["accuracy"] <= aware["never_shown"] + 1e-9 <= high + 2e-9 <= 1.0 + 2e-9
    assert present_aware(list(reversed(rows))) == aware


def test_holm_worked_out() -> None:
    """Sorted, 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 but
    never below 0.06, the value before it."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5]
    assert holm([]) == []
    assert holm([0.3, 0.3, 0.9]) == pytest.approx([0.9, 0.9, 0.9])
    assert holm([1e-10, 0.6, 0.6]) == pytest.approx([3e-10, 1.0, 1.0])  # capped at 1


def _step_down(p_values: list[float], alpha: float) -> set[int]:
    """Holm's procedure as written: reject the smallest while p(k) <= alpha / (m - k)."""
    m = len(p_values)
    rejected: set[int] = set()
    for k, i in enumerate(sorted(range(m), key=lambda i: (p_values[i], i))):
        if p_values[i] > alpha / (m - k):
            break
        rejected.add(i)
    return rejected


@given(st.lists(st.floats(0.0, 1.0), max_size=25), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_rejects_what_the_step_down_procedure_rejects(
    p_values: list[float], alpha: float
) -> None:
    adjusted = holm(p_values)
    assert len(adjusted) == len(p_values)
    m = len(p_values)
    for p, h in zip(p_values, adjusted, strict=True):
        assert p <= h <= 1.0
        assert h <= min(1.0, m * p) + 1e-12  # never more than Bonferroni's
    for i in range(m):  # the order of the p-values is kept
        for j in range(m):
            if p_values[i] <= p_values[j]:
                assert adjusted[i] <= adjusted[j]
    # adjusted p <= alpha: exactly the hypotheses the step-down procedure rejects (ties
    # at the boundary aside: a product may round across it)
    if all(abs(p * (m - k) - alpha) > 1e-9 for k in range(m) for p in p_values):
        assert {i for i, h in enumerate(adjusted) if h <= alpha} == _step_down(p_values, alpha)
    assert holm(list(reversed(p_values))) == list(reversed(adjusted))
