"""The probe's report (pure): per configuration, LongMemEval's scoring (accuracy on the
answerable questions, false abstention there; on abstention questions, correct
abstention and false answers; ``unparsed`` replies apart), per category with a 95%
interval, by the evidence's age, tokens; the baselines on the same questions; a paired
test for every two configurations; and the reader's ceiling with its verdict
(``engine.lab.probe.scoring``). ``report_table`` writes it for people.

"Scored" questions are all but ``present`` (whose gold the situation shows): ``overall``
and the paired tests are over them; ``answerable`` leaves abstention out too.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine.lab.probe.questions import Question
from engine.lab.probe.scoring import (
    ABSTENTION,
    BASELINES,
    PRESENT,
    Outcome,
    Situation,
    baseline_scores,
    ceiling_verdict,
    mean_baselines,
    paired,
    wilson,
)

AGE_EDGES: tuple[int, ...] = (0, 16, 64, 256, 1024)
"""Buckets of evidence age, in memories ago: [0, 16), [16, 64), ... [1024, and more)."""
CEILING = "evidence"
OUTCOMES = ("correct", "wrong", "abstained", "unparsed")
BARE_CONFIGS = frozenset({CEILING})
"""Configurations whose prompt shows no situation (their ``present`` baseline is "I
don't know" everywhere)."""


@dataclass(frozen=True)
class Answer:
    question_id: str
    config: str
    answer: str | None
    """The option the reply named; None: it named none (``unparsed``)."""
    outcome: Outcome
    prompt_tokens: int

    @property
    def correct(self) -> bool:
        return self.outcome == "correct"

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"correct": self.correct}


def bucket_of(age: int, edges: Sequence[int] = AGE_EDGES) -> str:
    for low, high in itertools.pairwise(edges):
        if low <= age < high:
            return f"{low}-{high - 1}"
    return f"{edges[-1]}+"


def _score(answers: Sequence[Answer]) -> dict[str, Any]:
    n = len(answers)
    right = sum(a.correct for a in answers)
    low, high = wilson(right, n)
    return {"n": n, "correct": right, "accuracy": right / n if n else None,
            "interval": [round(low, 4), round(high, 4)]}  # fmt: skip


def _share(answers: Sequence[Answer], outcome: str) -> float | None:
    return round(sum(a.outcome == outcome for a in answers) / len(answers), 4) if answers else None


def _answerable(answers: Sequence[Answer]) -> dict[str, Any]:
    return _score(answers) | {"false_abstention": _share(answers, "abstained"),
                              "unparsed": _share(answers, "unparsed")}  # fmt: skip


def _abstention(answers: Sequence[Answer]) -> dict[str, Any]:
    return {"n": len(answers), "correct_abstention": _share(answers, "correct"),
            "false_answer": _share(answers, "wrong"),
            "unparsed": _share(answers, "unparsed")}  # fmt: skip


def build_report(questions: Sequence[Question], answers: Sequence[Answer],
                 situations: Mapping[str, Situation] | None = None,
                 said_did: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """The report's JSON; ``situations``: what each agent's prompt shows of the present."""
    asked = {q.id: q for q in questions}
    by_config: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        by_config[answer.config].append(answer)
    configs: dict[str, Any] = {}
    baselines: dict[str, Any] = {}
    for config, given in by_config.items():
        configs[config] = _config(asked, given)
        bare = config in BARE_CONFIGS
        baselines[config] = _baselines(asked, given, {} if bare else dict(situations or {}))
    right = {c: {a.question_id: a.correct for a in given
                 if asked[a.question_id].category != PRESENT}
             for c, given in by_config.items()}  # fmt: skip
    pairs = [{"a": a, "b": b, "test": "mcnemar-exact"} | paired(right[a], right[b])
             for a, b in itertools.combinations(by_config, 2)]  # fmt: skip
    ceiling = _ceiling(configs, baselines)
    return {"configs": configs, "baselines": baselines, "paired": pairs, "ceiling": ceiling,
            "verdict": ceiling["verdict"], "said_vs_did": dict(said_did or {})}  # fmt: skip


def _config(asked: Mapping[str, Question], given: Sequence[Answer]) -> dict[str, Any]:
    categories: dict[str, list[Answer]] = defaultdict(list)
    ages: dict[str, list[Answer]] = defaultdict(list)
    for answer in given:
        question = asked[answer.question_id]
        categories[question.category].append(answer)
        if question.category not in (ABSTENTION, PRESENT):
            ages[bucket_of(question.age)].append(answer)
    scored = [a for a in given if asked[a.question_id].category != PRESENT]
    answerable = [a for a in scored if asked[a.question_id].category != ABSTENTION]
    tokens = sum(a.prompt_tokens for a in given)
    mean_tokens = tokens / len(given) if given else 0.0
    overall = _score(scored)
    per_k = (overall["accuracy"] or 0.0) / (mean_tokens / 1000) if mean_tokens else None
    return {
        "overall": overall,
        "answerable": _answerable(answerable),
        "abstention": _abstention(categories.get(ABSTENTION, [])),
        "outcomes": {o: sum(a.outcome == o for a in given) for o in OUTCOMES},
        "categories": {name: _score(c) for name, c in sorted(categories.items())},
        "by_age": {name: _score(ages[name]) for name in _age_order(ages)},
        "age_edges": list(AGE_EDGES),
        "mean_prompt_tokens": round(mean_tokens, 1),
        "accuracy_per_1000_tokens": round(per_k, 4) if per_k is not None else None,
    }


def _baselines(asked: Mapping[str, Question], given: Sequence[Answer],
               situations: Mapping[str, Situation]) -> dict[str, Any]:  # fmt: skip
    """Each baseline's accuracy on the questions this configuration was asked: over the
    scored ones, the answerable ones, and per category."""
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    for answer in given:
        q = asked[answer.question_id]
        score = baseline_scores(q.options, q.gold, situations.get(q.agent, Situation()))
        rows[q.category].append(score)
        if q.category != PRESENT:
            rows["overall"].append(score)
            if q.category != ABSTENTION:
                rows["answerable"].append(score)
    return {
        "overall": mean_baselines(rows["overall"]),
        "answerable": mean_baselines(rows["answerable"]),
        "categories": {
            name: mean_baselines(r)
            for name, r in sorted(rows.items())
            if name not in ("overall", "answerable")
        },
    }


def _ceiling(configs: Mapping[str, Any], baselines: Mapping[str, Any]) -> dict[str, Any]:
    """The reader's ceiling: ``evidence`` on the answerable questions against the best
    baseline there (``scoring.ceiling_verdict``)."""
    if CEILING not in configs:
        return {"config": CEILING, "verdict": ceiling_verdict(0, 0, None)}
    score = configs[CEILING]["answerable"]
    best = baselines[CEILING]["answerable"]
    known = {k: v for k, v in best.items() if v is not None}
    name = max(known, key=lambda k: known[k]) if known else None
    value = known[name] if name is not None else None
    return {"config": CEILING, "accuracy": score["accuracy"], "interval": score["interval"],
            "n": score["n"], "best_baseline": name, "best_baseline_accuracy": value,
            "verdict": ceiling_verdict(score["correct"], score["n"], value),
            "rule": "informative when the 95% Wilson lower bound of evidence's accuracy on "
                    "answerable questions is above the best baseline's accuracy there"}  # fmt: skip


def _age_order(ages: Mapping[str, object]) -> list[str]:
    order = [bucket_of(edge) for edge in AGE_EDGES]
    return [name for name in order if name in ages]


__all__ = ["AGE_EDGES", "BASELINES", "Answer", "bucket_of", "build_report", "wilson"]
