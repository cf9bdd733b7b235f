"""The probe's report (pure): per configuration, LongMemEval's scoring (accuracy on the
answerable questions, false abstention there; on abstention questions, correct
abstention and false answers; ``unparsed`` replies apart), per category with a 95%
interval, by the evidence's age, tokens; the baselines on the same questions, the
present-aware one among them, and ``none`` judged against it (``none_check``); the
paired tests for every two configurations, answerable and abstention apart,
Holm-corrected, on one question per evidence memory (``pairing``; ``sharing`` says how
much the questions share); and the reader's ceiling with its verdict
(``engine.lab.probe.scoring``). ``report_table`` writes it for people.

"Scored" questions are all but ``present`` (whose gold the situation shows): ``overall``
is over them; ``answerable`` leaves abstention out too. Wilson intervals assume
independent questions: the answerable ``one_per_evidence`` score is over questions no
two of which share an evidence memory.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine.lab.probe.pairing import RULE, one_per_evidence, paired_tests, sharing
from engine.lab.probe.questions import Question
from engine.lab.probe.scoring import (
    ABSTENTION,
    BASELINES,
    NOT_MEASURED,
    PRESENT,
    Outcome,
    Situation,
    baseline_scores,
    ceiling_verdict,
    mean_baselines,
    present_aware,
    room_scores,
    wilson,
)

AGE_EDGES: tuple[int, ...] = (0, 16, 64, 256, 1024)
"""Buckets of evidence age, in memories ago: [0, 16), [16, 64), ... [1024, and more)."""
CEILING = "evidence"
NONE = "none"
"""The configuration with no memory, judged against the present-aware baseline."""
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
    answered = [asked[q] for q in sorted({a.question_id for a in answers})]
    kept = one_per_evidence(q for q in answered if q.category not in (ABSTENTION, PRESENT))
    configs: dict[str, Any] = {}
    baselines: dict[str, Any] = {}
    for config, given in by_config.items():
        configs[config] = _config(asked, given, kept)
        bare = config in BARE_CONFIGS
        baselines[config] = _baselines(asked, given, {} if bare else dict(situations or {}))
    right = {c: {a.question_id: a.correct for a in given} for c, given in by_config.items()}
    ceiling = _ceiling(configs, baselines)
    return {"configs": configs, "baselines": baselines,
            "none_check": _none_check(configs, baselines), "paired": paired_tests(asked, right),
            "paired_rule": RULE, "sharing": sharing(answered), "ceiling": ceiling,
            "verdict": ceiling["verdict"], "said_vs_did": dict(said_did or {})}  # fmt: skip


def _config(asked: Mapping[str, Question], given: Sequence[Answer],
            kept: frozenset[str]) -> dict[str, Any]:  # fmt: skip
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
        "answerable": _answerable(answerable)
        | {"one_per_evidence": _score([a for a in answerable if a.question_id in kept])},
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
    """Each baseline's accuracy on the questions this configuration was asked, and the
    present-aware baseline (``present_aware``): over the scored ones, the answerable
    ones, and per category."""
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    rooms: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for answer in given:
        q = asked[answer.question_id]
        situation = situations.get(q.agent, Situation())
        score, room = (
            baseline_scores(q.options, q.gold, situation),
            room_scores(q.options, q.gold, situation),
        )
        groups = [q.category]
        if q.category != PRESENT:
            groups.append("overall")
            if q.category != ABSTENTION:
                groups.append("answerable")
        for group in groups:
            rows[group].append(score)
            rooms[group].append(room)

    def both(group: str) -> dict[str, Any]:
        return {**mean_baselines(rows[group]), "present_aware": present_aware(rooms[group])}

    return {
        "overall": both("overall"),
        "answerable": both("answerable"),
        "categories": {
            name: both(name) for name in sorted(rows) if name not in ("overall", "answerable")
        },
    }


def _none_check(configs: Mapping[str, Any], baselines: Mapping[str, Any]) -> dict[str, Any]:
    """``none`` on the answerable questions against its present-aware baseline:
    ``within`` its interval, ``above`` (the prompt gives answers away) or ``below`` (the
    reader abstains, or does worse than even one that always picks what the room
    shows); ``not measured`` without ``none`` or answerable questions."""
    score = configs.get(NONE, {}).get("answerable", {})
    aware = baselines.get(NONE, {}).get("answerable", {}).get("present_aware")
    if not score.get("n") or aware is None:
        return {"config": NONE, "verdict": NOT_MEASURED}
    low, high = aware["interval"]
    accuracy = score["accuracy"]
    verdict = "within" if low <= accuracy <= high else "above" if accuracy > high else "below"
    return {"config": NONE, "accuracy": round(accuracy, 4), "interval": [low, high],
            "baseline": "present_aware", "verdict": verdict}  # fmt: skip


def _ceiling(configs: Mapping[str, Any], baselines: Mapping[str, Any]) -> dict[str, Any]:
    """The reader's ceiling: ``evidence`` on the answerable questions against the best
    baseline there (``scoring.ceiling_verdict``)."""
    if CEILING not in configs:
        return {"config": CEILING, "verdict": ceiling_verdict(0, 0, None)}
    score = configs[CEILING]["answerable"]
    best = baselines[CEILING]["answerable"]
    known = {k: best[k] for k in BASELINES if best.get(k) is not None}
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
