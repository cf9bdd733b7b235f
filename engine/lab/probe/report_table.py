"""The probe's report for people (pure): one row per configuration (LongMemEval's
scoring, then each category), the baselines, the paired tests, accuracy by evidence age,
the reader's ceiling and its verdict in words, and said vs did."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.lab.probe.scoring import ABSTENTION, BASELINES, INFORMATIVE, UNINFORMATIVE

VERDICT_WORDS = {
    UNINFORMATIVE: "UNINFORMATIVE: the reader is not clearly above its baselines even when "
    "handed the evidence, so these figures say nothing about the memory configurations",
    INFORMATIVE: "informative: the reader uses the evidence when it has it",
}


def table(report: Mapping[str, Any]) -> str:
    configs: Mapping[str, Any] = report["configs"]
    categories = sorted({c for v in configs.values() for c in v["categories"]} - {ABSTENTION})
    head = ["config", "scored", "answerable", "false abst.", "abstention ok", "unparsed",
            *categories, "tokens"]  # fmt: skip
    rows = [head]
    for name, value in configs.items():
        answerable, abstention = value["answerable"], value["abstention"]
        unparsed = value["outcomes"]["unparsed"]
        total = sum(value["outcomes"].values())
        cells = [name, _cell(value["overall"], n=False), _cell(answerable),
                 _rate(answerable["false_abstention"]), _rate(abstention["correct_abstention"]),
                 _rate(unparsed / total if total else None)]  # fmt: skip
        cells += [_cell(value["categories"].get(c), n=False) for c in categories]
        cells.append(f"{value['mean_prompt_tokens']:.0f}")
        rows.append(cells)
    lines = _columns(rows)
    baselines: Mapping[str, Any] = report.get("baselines") or {}
    if baselines:
        lines += ["", "Baselines on the same questions (scored / answerable):"]
        for name, value in baselines.items():
            lines.append(f"{name}: " + ", ".join(
                f"{b} {_rate(value['overall'][b])} / {_rate(value['answerable'][b])}"
                for b in BASELINES))  # fmt: skip
    pairs = report.get("paired") or []
    if pairs:
        lines += ["", "Paired (McNemar exact, scored questions; right only under a / only b, p):"]
        lines += [f"{p['a']} vs {p['b']}: {p['a_only']} / {p['b_only']}, p={p['p_value']:.3g}"
                  for p in pairs]  # fmt: skip
    ages = [f"{name}: " + ", ".join(f"{bucket} {_pct(s)}" for bucket, s in v["by_age"].items())
            for name, v in configs.items()]  # fmt: skip
    lines += ["", "Accuracy by the oldest evidence's age (memories ago, answerable):", *ages]
    ceiling = report.get("ceiling") or {}
    if ceiling.get("accuracy") is not None:
        low, high = ceiling["interval"]
        lines += ["", f"Reader ceiling ({ceiling['config']}): {_rate(ceiling['accuracy'])} "
                  f"[{low * 100:.0f}-{high * 100:.0f}] on {ceiling['n']} answerable; best "
                  f"baseline {ceiling['best_baseline']} {_rate(ceiling['best_baseline_accuracy'])}"
                  f": {VERDICT_WORDS.get(ceiling['verdict'], ceiling['verdict'])}"]  # fmt: skip
    said = report.get("said_vs_did") or {}
    if said:
        lines += ["", "Said vs did (intentions kept within the horizon):"]
        lines += [f"{agent}: {s.get('kept', 0)}/{s.get('found', 0)}" for agent, s in said.items()]
    return "\n".join(line.rstrip() for line in lines)


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
            for row in rows]  # fmt: skip


def _cell(score: Mapping[str, Any] | None, *, n: bool = True) -> str:
    if not score or not score["n"]:
        return "-"
    low, high = score["interval"]
    size = f" n={score['n']}" if n else ""
    return f"{_pct(score)} [{low * 100:.0f}-{high * 100:.0f}]{size}"


def _pct(score: Mapping[str, Any]) -> str:
    return "-" if score["accuracy"] is None else f"{score['accuracy'] * 100:.0f}%"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"
