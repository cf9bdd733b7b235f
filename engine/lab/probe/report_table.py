"""The probe's report for people (pure): one row per configuration (LongMemEval's
scoring, then each category), the baselines and ``none`` against the present-aware one,
answerable accuracy on one question per evidence memory, the paired tests (answerable
and abstention apart, raw and Holm-corrected p), accuracy by evidence age, the reader's
ceiling and its verdict in words, and said vs did."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.lab.probe.scoring import (
    ABSTENTION,
    BASELINES,
    INFORMATIVE,
    NOT_MEASURED,
    UNINFORMATIVE,
)

VERDICT_WORDS = {
    UNINFORMATIVE: "UNINFORMATIVE: the reader is not clearly above its baselines even when "
    "handed the evidence, so these figures say nothing about the memory configurations",
    INFORMATIVE: "informative: the reader uses the evidence when it has it",
}
NONE_WORDS = {
    "within": "within: with no memory the reader scores what the room alone allows",
    "above": "ABOVE: with no memory the reader beats what the room alone allows (the "
    "prompt gives answers away)",
    "below": "below: the reader abstains, or does worse than always picking what the room shows",
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
        lines += ["", "Baselines on the same questions (scored / answerable; present-aware: "
                  "answerable, from always to never picking what the room shows):"]  # fmt: skip
        for name, value in baselines.items():
            lines.append(f"{name}: " + ", ".join(
                f"{b} {_rate(value['overall'][b])} / {_rate(value['answerable'][b])}"
                for b in BASELINES) + _aware(value["answerable"].get("present_aware")))  # fmt: skip
    lines += _none_check(report.get("none_check") or {})
    lines += _independent(configs, report.get("sharing") or {})
    lines += _pairs(report.get("paired") or [])
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


def _aware(aware: Mapping[str, Any] | None) -> str:
    if not aware:
        return ""
    low, high = aware["interval"]
    return f", present-aware {_rate(aware['accuracy'])} [{low * 100:.0f}-{high * 100:.0f}]"


def _none_check(check: Mapping[str, Any]) -> list[str]:
    if check.get("verdict", NOT_MEASURED) == NOT_MEASURED:
        return []
    low, high = check["interval"]
    return ["", f"{check['config']} on answerable questions: {_rate(check['accuracy'])}, "
            f"present-aware baseline [{low * 100:.0f}-{high * 100:.0f}]: "
            f"{NONE_WORDS.get(check['verdict'], check['verdict'])}"]  # fmt: skip


def _independent(configs: Mapping[str, Any], sharing: Mapping[str, Any]) -> list[str]:
    if not sharing.get("questions"):
        return []
    head = (f"Answerable, one question per evidence memory ({sharing['one_per_evidence']} of "
            f"{sharing['questions']}; {sharing['sharing']} share a memory with another, in "
            f"{sharing['clusters']} clusters):")  # fmt: skip
    cells = [f"{name} {_cell(value['answerable'].get('one_per_evidence'), n=False)}"
             for name, value in configs.items()]  # fmt: skip
    return ["", head, ", ".join(cells)]


def _pairs(pairs: list[Mapping[str, Any]]) -> list[str]:
    if not pairs:
        return []
    lines = ["", "Paired (McNemar exact on one question per evidence memory; right only under "
             "a / only b; p raw, p Holm-corrected within each family):"]  # fmt: skip
    for family in dict.fromkeys(p["questions"] for p in pairs):
        lines.append(f"{family}:")
        lines += [f"  {p['a']} vs {p['b']}: {p['a_only']} / {p['b_only']} of {p['n']} "
                  f"(all {p['all']['n']}: {p['all']['a_only']} / {p['all']['b_only']}), "
                  f"p={p['p_value']:.3g}, Holm p={p['p_holm']:.3g}"
                  for p in pairs if p["questions"] == family]  # fmt: skip
    return lines


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
