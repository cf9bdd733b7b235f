"""The probe's report (pure): accuracy per configuration and category with a 95%
interval, accuracy by the evidence's age, prompt tokens, accuracy per 1,000 prompt
tokens; and the table people read."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

AGE_EDGES: tuple[int, ...] = (0, 16, 64, 256, 1024)
"""Buckets of evidence age, in memories ago: [0, 16), [16, 64), ... [1024, and more)."""


@dataclass(frozen=True)
class Answer:
    question_id: str
    config: str
    answer: str
    correct: bool
    prompt_tokens: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``correct`` out of ``n`` (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


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


def build_report(questions: Mapping[str, Mapping[str, Any]], answers: Sequence[Answer],
                 said_did: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    """``questions``: id -> its JSON (category, age); the report's JSON."""
    by_config: dict[str, list[Answer]] = defaultdict(list)
    for answer in answers:
        by_config[answer.config].append(answer)
    configs: dict[str, Any] = {}
    for config, given in by_config.items():
        categories: dict[str, list[Answer]] = defaultdict(list)
        ages: dict[str, list[Answer]] = defaultdict(list)
        for answer in given:
            question = questions[answer.question_id]
            categories[str(question["category"])].append(answer)
            if question["category"] != "abstention":
                ages[bucket_of(int(question["age"]))].append(answer)
        tokens = sum(a.prompt_tokens for a in given)
        mean_tokens = tokens / len(given) if given else 0.0
        overall = _score(given)
        per_k = (overall["accuracy"] or 0.0) / (mean_tokens / 1000) if mean_tokens else None
        configs[config] = {
            "overall": overall,
            "categories": {name: _score(c) for name, c in sorted(categories.items())},
            "by_age": {name: _score(ages[name]) for name in _age_order(ages)},
            "age_edges": list(AGE_EDGES),
            "mean_prompt_tokens": round(mean_tokens, 1),
            "accuracy_per_1000_tokens": round(per_k, 4) if per_k is not None else None,
        }
    return {"configs": configs, "said_vs_did": dict(said_did or {})}


def _age_order(ages: Mapping[str, object]) -> list[str]:
    order = [bucket_of(edge) for edge in AGE_EDGES]
    return [name for name in order if name in ages]


def table(report: Mapping[str, Any]) -> str:
    """The report for people: one row per configuration, a column per category."""
    configs: Mapping[str, Any] = report["configs"]
    categories = sorted({c for v in configs.values() for c in v["categories"]})
    head = ["config", "overall", *categories, "tokens", "acc/1k tok"]
    rows = [head]
    for name, value in configs.items():
        cells = [name, _cell(value["overall"])]
        cells += [_cell(value["categories"].get(c)) for c in categories]
        per_k = value["accuracy_per_1000_tokens"]
        cells += [f"{value['mean_prompt_tokens']:.0f}", "-" if per_k is None else f"{per_k:.3f}"]
        rows.append(cells)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
             for row in rows]  # fmt: skip
    ages = [f"{name}: " + ", ".join(f"{bucket} {_pct(s)}" for bucket, s in v["by_age"].items())
            for name, v in configs.items()]  # fmt: skip
    lines += ["", "Accuracy by evidence age (memories ago):", *ages]
    said = report.get("said_vs_did") or {}
    if said:
        lines += ["", "Said vs did (intentions kept within the horizon):"]
        lines += [f"{agent}: {s.get('kept', 0)}/{s.get('found', 0)}" for agent, s in said.items()]
    return "\n".join(line.rstrip() for line in lines)


def _cell(score: Mapping[str, Any] | None) -> str:
    if not score or not score["n"]:
        return "-"
    low, high = score["interval"]
    return f"{_pct(score)} [{low * 100:.0f}-{high * 100:.0f}] n={score['n']}"


def _pct(score: Mapping[str, Any]) -> str:
    return "-" if score["accuracy"] is None else f"{score['accuracy'] * 100:.0f}%"
