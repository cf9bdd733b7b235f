"""Questions that share evidence, and the paired tests between configurations (pure).

- **Shared evidence.** Two questions about the same memory (who said it, where, what
  came next) are not independent draws, yet McNemar's test and the Wilson interval
  assume they are. Most answerable questions share an evidence memory (an agent's
  ``(agent, seq)``) with another, and the questions joined by shared memories form a
  few large clusters (about one an agent), too few for a cluster bootstrap. So the
  probe keeps **one question per evidence memory**: the answerable questions taken in
  a fixed order (fewest evidence memories first, then by id), each kept when none of its
  memories is a kept question's (``one_per_evidence``). No two kept questions share a
  memory; which are kept depends on the questions alone, never on the answers. Tests
  and the answerable ``one_per_evidence`` intervals are over them; ``sharing`` says how
  many questions share a memory and in how many clusters they fall.
- **Paired tests** (``paired_tests``): for every two configurations, McNemar's exact
  test in two families apart, ``answerable`` (the kept questions) and ``abstention``
  (questions with no evidence, each its own); ``present`` in neither. Each entry holds
  the raw ``p_value`` and ``p_holm``, Holm's adjustment within its family; ``all`` has
  the counts over every question of the family, shared evidence or not (no test).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from engine.lab.probe.questions import Question
from engine.lab.probe.scoring import ABSTENTION, PRESENT, holm, paired

ANSWERABLE: Final = "answerable"
FAMILIES: Final = (ANSWERABLE, ABSTENTION)
"""The families of paired tests, each Holm-corrected on its own."""
RULE: Final = ("McNemar exact on one question per evidence memory (no two share one), "
               "Holm-corrected within each family")  # fmt: skip

Memory = tuple[str, int]


def family(question: Question) -> str | None:
    """``answerable``, ``abstention``, or None (``present``: in no family)."""
    if question.category == PRESENT:
        return None
    return ABSTENTION if question.category == ABSTENTION else ANSWERABLE


def _memories(question: Question) -> list[Memory]:
    return [(question.agent, seq) for seq in sorted(set(question.evidence))]


def one_per_evidence(questions: Iterable[Question]) -> frozenset[str]:
    """The ids of questions no two of which share an evidence memory, taken fewest
    memories first, then by id; a question with no evidence is always kept."""
    taken: set[Memory] = set()
    kept: set[str] = set()
    for question in sorted(questions, key=lambda q: (len(set(q.evidence)), q.id)):
        memories = set(_memories(question))
        if not memories & taken:
            taken |= memories
            kept.add(question.id)
    return frozenset(kept)


def clusters(questions: Sequence[Question]) -> int:
    """How many groups the questions fall in, two joined when they share an evidence
    memory (a question with no evidence is a group of its own)."""
    parent: dict[Memory, Memory] = {}

    def root(item: Memory) -> Memory:
        while parent.setdefault(item, item) != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    alone = 0
    for question in questions:
        memories = _memories(question)
        if not memories:
            alone += 1
            continue
        for other in memories[1:]:
            parent[root(other)] = root(memories[0])
        root(memories[0])
    return alone + len({root(m) for m in list(parent)})


def sharing(questions: Sequence[Question]) -> dict[str, int]:
    """The answerable questions: how many, how many share an evidence memory with
    another, in how many clusters they fall, and how many ``one_per_evidence`` keeps."""
    answerable = [q for q in questions if family(q) == ANSWERABLE]
    uses = Counter(m for q in answerable for m in _memories(q))
    shared = sum(1 for q in answerable if any(uses[m] > 1 for m in _memories(q)))
    return {"questions": len(answerable), "sharing": shared, "clusters": clusters(answerable),
            "one_per_evidence": len(one_per_evidence(answerable))}  # fmt: skip


def paired_tests(questions: Mapping[str, Question],
                 right: Mapping[str, Mapping[str, bool]]) -> list[dict[str, Any]]:  # fmt: skip
    """Every two configurations of ``right`` (configuration -> question id -> right), in
    its order, tested in each family (``FAMILIES``) on its kept questions, with Holm's
    adjustment within the family."""
    out: list[dict[str, Any]] = []
    answered = sorted({q for given in right.values() for q in given})
    for name in FAMILIES:
        members = [questions[q] for q in answered if family(questions[q]) == name]
        every = {q.id for q in members}
        kept = one_per_evidence(members)
        rows: list[dict[str, Any]] = []
        for a, b in itertools.combinations(right, 2):
            test = paired(_only(right[a], kept), _only(right[b], kept))
            whole = paired(_only(right[a], every), _only(right[b], every))
            rows.append({"a": a, "b": b, "questions": name, "test": "mcnemar-exact", **test,
                         "all": {k: whole[k] for k in ("n", "a_only", "b_only")}})  # fmt: skip
        for row, adjusted in zip(rows, holm([float(r["p_value"]) for r in rows]), strict=True):
            row["p_holm"] = adjusted
        out += rows
    return out


def _only(given: Mapping[str, bool], ids: frozenset[str] | set[str]) -> dict[str, bool]:
    return {q: ok for q, ok in given.items() if q in ids}


__all__ = ["FAMILIES", "RULE", "clusters", "family", "one_per_evidence", "paired_tests",
           "sharing"]  # fmt: skip
