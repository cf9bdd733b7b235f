"""The report (pure): LongMemEval's scoring (answerable and abstention apart, unparsed
its own outcome), accuracy with a Wilson interval, by category and by the oldest
evidence's age, tokens, the baselines, the paired tests, the reader's ceiling and its
verdict, and a table people read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.lab.probe.questions import IDK, Question
from engine.lab.probe.report import Answer, bucket_of, build_report, wilson
from engine.lab.probe.report_table import table
from engine.lab.probe.scoring import Situation

OPTIONS = ("Bo", "The Hall", IDK, "Pat", "The Yard")


def _q(qid: str, category: str, gold: str, age: int = 3) -> Question:
    evidence = () if gold == IDK else (1,)
    return Question(qid, "Ada", category, f"{qid}?", OPTIONS, gold, evidence, age)


QUESTIONS = [_q("q1", "single-hop", "Bo", 3), _q("q2", "single-hop", "Pat", 100),
             _q("q3", "temporal", "The Yard", 20), _q("q4", "abstention", IDK, 0),
             _q("q5", "present", "The Hall", 2)]  # fmt: skip
HERE = {"Ada": Situation("The Hall", ("Bo",), ())}


def test_accuracy_categories_ages_and_tokens() -> None:
    answers = [Answer("q1", "full", "Bo", "correct", 1000),
               Answer("q2", "full", "Bo", "wrong", 3000),
               Answer("q3", "full", "The Yard", "correct", 1000),
               Answer("q4", "full", IDK, "correct", 1000),
               Answer("q5", "full", "The Hall", "correct", 1000),
               Answer("q1", "none", None, "unparsed", 100)]  # fmt: skip
    report = build_report(QUESTIONS, answers, HERE, {"Ada": {"found": 2, "kept": 1}})
    full = report["configs"]["full"]
    assert full["overall"]["accuracy"] == 0.75  # present is not scored
    assert full["answerable"]["accuracy"] == pytest.approx(2 / 3)
    assert full["abstention"]["correct_abstention"] == 1.0
    assert full["categories"]["single-hop"]["accuracy"] == 0.5
    assert full["categories"]["present"]["accuracy"] == 1.0
    assert list(full["by_age"]) == ["0-15", "16-63", "64-255"]  # abstention has no age
    assert full["by_age"]["64-255"]["accuracy"] == 0.0
    assert full["mean_prompt_tokens"] == 1400
    none = report["configs"]["none"]
    assert none["overall"]["accuracy"] == 0.0
    assert none["outcomes"]["unparsed"] == 1
    text = table(report)
    assert text.splitlines()[0].split()[:3] == ["config", "scored", "answerable"]
    assert "75% [" in text
    assert "Ada: 1/2" in text
    assert "answerable:\n  full vs none: 1 / 0 of 1 (all 1: 1 / 0), p=1, Holm p=1" in text
    assert "abstention:\n  full vs none: 0 / 0 of 0" in text


def test_unparsed_is_never_i_dont_know() -> None:
    """Defect 2: silence scored as abstention. A reply that names no option is its own
    outcome: on an abstention question it is no correct abstention."""
    answers = [Answer(q.id, "full", None, "unparsed", 10) for q in QUESTIONS]
    full = build_report(QUESTIONS, answers, HERE)["configs"]["full"]
    assert full["overall"]["accuracy"] == 0.0
    assert full["abstention"] == {"n": 1, "correct_abstention": 0.0, "false_answer": 0.0,
                                  "unparsed": 1.0}  # fmt: skip
    assert full["answerable"]["unparsed"] == 1.0
    assert full["answerable"]["false_abstention"] == 0.0


def test_baselines_per_configuration() -> None:
    answers = [Answer(q.id, c, IDK, "abstained", 10) for q in QUESTIONS
               for c in ("none", "evidence")]  # fmt: skip
    report = build_report(QUESTIONS, answers, HERE)
    none = report["baselines"]["none"]
    assert none["overall"]["uniform"] == 0.2
    assert none["answerable"]["guess"] == 0.25
    assert none["overall"]["dont_know"] == 0.25  # one abstention of four scored
    assert none["categories"]["present"]["present"] == 1.0  # the room is the gold
    assert none["categories"]["single-hop"]["present"] == 0.0  # the room first, not Bo
    # evidence shows no situation: its present rule always says "I don't know"
    assert report["baselines"]["evidence"]["categories"]["present"]["present"] == 0.0


def test_the_present_aware_baseline_and_none_judged_against_it() -> None:
    """Issue 43: Ada is in The Hall with Bo, both options of every question; outside
    ``present`` neither is ever the gold, so a reader with no memory that never picks
    them expects 1/2, one that always does 0."""
    asked = [_q("r1", "single-hop", "Pat"), _q("r2", "temporal", "The Yard"),
             _q("r3", "multi-hop", "Pat"), _q("r4", "abstention", IDK),
             _q("r5", "present", "The Hall")]  # fmt: skip
    answers = [Answer(q.id, "none", "Bo", "wrong", 10) for q in asked]
    report = build_report(asked, answers, HERE)
    aware = report["baselines"]["none"]["answerable"]["present_aware"]
    assert (aware["accuracy"], aware["always_shown"], aware["never_shown"]) == (0.25, 0.0, 0.5)
    low, high = aware["interval"]
    assert low == 0.0
    assert high == pytest.approx(min(1.0, 0.5 + 1.96 * (3 * 0.25) ** 0.5 / 3), abs=1e-4)
    assert report["none_check"] == {"config": "none", "accuracy": 0.0, "interval": [low, high],
                                    "baseline": "present_aware", "verdict": "within"}  # fmt: skip
    # the present question: the room is the gold, so the room reader expects 1/2 there
    present = report["baselines"]["none"]["categories"]["present"]["present_aware"]
    assert (present["always_shown"], present["never_shown"]) == (0.5, 0.0)
    many = [_q(f"a{n}", "single-hop", "Pat") for n in range(60)]
    right = [Answer(q.id, "none", "Pat", "correct", 10) for q in many]
    above = build_report(many, right, HERE)
    assert above["none_check"]["verdict"] == "above"  # no memory, always right: a leak
    assert "ABOVE" in table(above)
    # Cy's prompt shows none of the options: always abstaining is below guessing
    elsewhere = [Question(f"c{n}", "Cy", "single-hop", f"c{n}?", OPTIONS, "Pat", (1,), 3)
                 for n in range(60)]  # fmt: skip
    idk = [Answer(q.id, "none", IDK, "abstained", 10) for q in elsewhere]
    assert build_report(elsewhere, idk, HERE)["none_check"]["verdict"] == "below"
    # where every question offers what the room shows, always picking it scores 0
    idk = [Answer(q.id, "none", IDK, "abstained", 10) for q in many]
    assert build_report(many, idk, HERE)["none_check"]["verdict"] == "within"
    assert build_report(many, [], HERE)["none_check"] == {"config": "none",
                                                          "verdict": "not measured"}  # fmt: skip


def test_answerable_accuracy_on_one_question_per_evidence_memory() -> None:
    shared = [Question(f"s{n}", "Ada", "single-hop", f"s{n}?", OPTIONS, "Bo", (n // 3,), 3)
              for n in range(9)]  # fmt: skip
    answers = [Answer(q.id, "full", "Bo", "correct", 10) for q in shared[:3]]
    answers += [Answer(q.id, "full", "Pat", "wrong", 10) for q in shared[3:]]
    report = build_report(shared, answers, HERE)
    full = report["configs"]["full"]["answerable"]
    assert (full["n"], full["correct"]) == (9, 3)
    assert full["one_per_evidence"]["n"] == 3  # s0, s3, s6: one a memory
    assert full["one_per_evidence"]["correct"] == 1
    assert report["sharing"] == {"questions": 9, "sharing": 9, "clusters": 3,
                                 "one_per_evidence": 3}  # fmt: skip
    assert "one question per evidence memory (3 of 9; 9 share" in table(report)


def test_the_verdict_is_uninformative_when_the_ceiling_is_not_clearly_above() -> None:
    many = [_q(f"a{n}", "single-hop", "Bo") for n in range(40)]
    guessing = [Answer(q.id, "evidence", "Bo" if n % 4 == 0 else "Pat",
                       "correct" if n % 4 == 0 else "wrong", 10) for n, q in enumerate(many)]  # fmt: skip
    report = build_report(many, guessing, {})
    assert report["verdict"] == "uninformative"
    assert report["ceiling"]["best_baseline"] == "guess"
    assert "UNINFORMATIVE" in table(report)
    right = [Answer(q.id, "evidence", "Bo", "correct", 10) for q in many]
    assert build_report(many, right, {})["verdict"] == "informative"
    assert build_report(many, [], {})["verdict"] == "not measured"


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
