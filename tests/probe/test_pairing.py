"""Questions that share evidence, and the paired tests (pure): one question per evidence
memory, the clusters shared memories join questions into, and McNemar's test per family
(answerable, abstention) with Holm's correction within each."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.lab.probe.pairing import clusters, one_per_evidence, paired_tests, sharing
from engine.lab.probe.questions import IDK, Question
from engine.lab.probe.scoring import holm, mcnemar_exact

OPTIONS = ("Bo", "The Hall", IDK, "Pat", "The Yard")


def _q(qid: str, evidence: tuple[int, ...], category: str = "single-hop",
       agent: str = "Ada") -> Question:  # fmt: skip
    gold = IDK if category == "abstention" else "Bo"
    return Question(qid, agent, category, f"{qid}?", OPTIONS, gold, evidence, 3)


def test_one_question_per_evidence_memory_worked_out() -> None:
    questions = [
        _q("a", (1, 2)),  # shares 2 with b and 1 with d
        _q("b", (2,)),
        _q("c", (3,)),
        _q("d", (1, 4)),
        _q("e", (2,), agent="Bo"),  # Bo's memory 2 is not Ada's
        _q("f", (), "abstention"),
        _q("g", (), "abstention"),
    ]
    # fewest memories first: b, c, e, f, g (one or none), then a (2 taken), d (1 free, 4 free)
    assert one_per_evidence(questions) == {"b", "c", "d", "e", "f", "g"}
    assert one_per_evidence(list(reversed(questions))) == one_per_evidence(questions)
    # a-b-d share memories (one cluster), c, e, f and g are alone
    assert clusters(questions) == 5
    assert sharing(questions) == {"questions": 5, "sharing": 3, "clusters": 3,
                                  "one_per_evidence": 4}  # fmt: skip


_evidence = st.lists(st.integers(0, 30), min_size=1, max_size=4, unique=True)


@given(st.lists(st.tuples(st.sampled_from(["Ada", "Bo"]), _evidence), max_size=60),
       st.randoms(use_true_random=False))  # fmt: skip
def test_kept_questions_never_share_and_every_other_one_does(
    drawn: list[tuple[str, list[int]]], rng: object
) -> None:
    questions = [_q(f"q{n}", tuple(e), agent=a) for n, (a, e) in enumerate(drawn)]
    kept = one_per_evidence(questions)
    memories = {q.id: {(q.agent, s) for s in q.evidence} for q in questions}
    for one in kept:
        for other in kept - {one}:
            assert not memories[one] & memories[other]
    taken = set().union(*(memories[k] for k in kept)) if kept else set()
    for q in questions:  # maximal: a question left out shares a memory with one kept
        assert q.id in kept or memories[q.id] & taken
    shuffled = list(questions)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    assert one_per_evidence(shuffled) == kept  # the questions' order does not matter
    assert clusters(shuffled) == clusters(questions) <= len(questions)
    assert len(kept) >= clusters(questions) or not questions


def test_paired_tests_by_family_on_one_question_per_evidence_with_holm() -> None:
    questions = {q.id: q for q in [
        _q("a1", (1,)), _q("a2", (1,)), _q("a3", (2,)), _q("a4", (3,)), _q("a5", (4,)),
        _q("x1", (), "abstention"), _q("x2", (), "abstention"),
        _q("p1", (5,), "present"),
    ]}  # fmt: skip
    right = {
        "full": {"a1": True, "a2": True, "a3": True, "a4": True, "a5": False,
                 "x1": False, "x2": False, "p1": True},
        "none": {"a1": False, "a2": False, "a3": False, "a4": False, "a5": False,
                 "x1": True, "x2": True, "p1": False},
        "window": {"a1": True, "a2": True, "a3": True, "a4": False, "a5": False,
                   "x1": True, "x2": False, "p1": False},
    }  # fmt: skip
    pairs = paired_tests(questions, right)
    assert [(p["questions"], p["a"], p["b"]) for p in pairs] == [
        ("answerable", "full", "none"), ("answerable", "full", "window"),
        ("answerable", "none", "window"), ("abstention", "full", "none"),
        ("abstention", "full", "window"), ("abstention", "none", "window"),
    ]  # fmt: skip
    full_none = pairs[0]
    # a2 shares memory 1 with a1, which is kept (fewest memories, then by id): 4 kept
    assert (full_none["n"], full_none["a_only"], full_none["b_only"]) == (4, 3, 0)
    assert full_none["all"] == {"n": 5, "a_only": 4, "b_only": 0}
    assert full_none["p_value"] == mcnemar_exact(3, 0)
    assert full_none["test"] == "mcnemar-exact"
    assert (pairs[3]["a_only"], pairs[3]["b_only"], pairs[3]["n"]) == (0, 2, 2)
    for family in ("answerable", "abstention"):
        mine = [p for p in pairs if p["questions"] == family]
        assert [p["p_holm"] for p in mine] == holm([p["p_value"] for p in mine])
    assert all(p["p_value"] <= p["p_holm"] <= 1.0 for p in pairs)
    assert paired_tests(questions, {"full": right["full"]}) == []


@pytest.mark.parametrize("n", [1, 3, 7])
def test_one_config_pair_per_family_and_holm_is_the_raw_p_alone(n: int) -> None:
    questions = {f"q{i}": _q(f"q{i}", (i,)) for i in range(n)}
    right = {"a": {q: True for q in questions}, "b": {q: False for q in questions}}
    (pair, abstaining) = paired_tests(questions, right)
    assert pair["p_holm"] == pair["p_value"] == mcnemar_exact(n, 0)
    assert abstaining["n"] == 0
    assert abstaining["p_value"] == abstaining["p_holm"] == 1.0
