"""``mudsim sweep report OUT [--by SETTING ...]``: the results grouped by configuration,
each figure's mean and 95% interval over the seeds, and a chart per figure.

The grouping and the intervals are pure (``group``, ``estimate``): a group is the runs
that share the values of the ``--by`` settings (default: every setting the sweep file
sweeps, and the world when there are several), its failed runs counted but left out of
the figures. The interval is Student's t over the group's runs: mean +- t(0.975, n-1) *
s / sqrt(n) (none for a single run). ``report`` reads ``OUT/results.parquet`` (or
``.csv``) and ``OUT/plan.json``, prints the tables and writes ``OUT/report/summary.csv``
and ``OUT/report/<figure>.png`` (matplotlib, in the ``analysis`` extra). In a chart a
group with no finished run (so no mean) has no bar, its label says "no finished run",
never a bar of 0; each PNG's ``Description`` text says every bar's value, or its absence.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from engine.errors import UsageError
from engine.lab.sweep.plan import slug
from engine.lab.sweep.results import IDENTITY, PROVENANCE, TRAILER, read_results
from engine.lab.sweep.store import PLAN
from engine.vault.files import atomic_write_text, make_folder

REPORT: Final = "report"
T_DF: Final = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
               22, 23, 24, 25, 26, 27, 28, 29, 30, 40, 60, 120)  # fmt: skip
T_975: Final = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
                2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074,
                2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042, 2.021, 2.000, 1.980)  # fmt: skip
"""Student's t at 0.975 by degrees of freedom (between two, the smaller df's: wider)."""
NORMAL_975: Final = 1.960
MISSING_CHARTS: Final = "Charts: need matplotlib: pip install 'mudsim[analysis]'"


def t_975(df: int) -> float:
    """The two-sided 95% critical value of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom start at 1")
    if df > T_DF[-1]:
        return NORMAL_975
    return T_975[bisect.bisect_right(T_DF, df) - 1]


@dataclass(frozen=True)
class Estimate:
    n: int
    mean: float | None = None
    low: float | None = None
    high: float | None = None
    """The 95% interval (None with fewer than two values)."""


def estimate(values: Sequence[float]) -> Estimate:
    if not values:
        return Estimate(0)
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Estimate(len(values), mean)
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return Estimate(len(values), mean, mean - half, mean + half)


@dataclass(frozen=True)
class Group:
    values: tuple[Any, ...]
    """The ``by`` settings' values of its runs."""
    finished: int
    failed: int
    estimates: Mapping[str, Estimate]

    def label(self, by: Sequence[str]) -> str:
        return ", ".join(f"{name}={value}" for name, value in zip(by, self.values, strict=True))


def metric_names(rows: Sequence[Mapping[str, Any]], settings: Sequence[str]) -> list[str]:
    """The numeric columns that are figures (not the run's identity or settings)."""
    skip = {*IDENTITY, *PROVENANCE, *TRAILER, *settings}
    names = list(dict.fromkeys(name for row in rows for name in row if name not in skip))
    return [n for n in names if any(_number(row.get(n)) is not None for row in rows)]


def group(rows: Sequence[Mapping[str, Any]], by: Sequence[str],
          metrics: Sequence[str]) -> list[Group]:  # fmt: skip
    """The rows by their ``by`` values (in order of appearance), each figure estimated
    over the group's finished runs."""
    found: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in rows:
        found.setdefault(tuple(row.get(name) for name in by), []).append(row)
    groups = []
    for values, members in found.items():
        done = [r for r in members if r.get("status") == "finished"]
        estimates = {m: estimate([v for r in done if (v := _number(r.get(m))) is not None])
                     for m in metrics}  # fmt: skip
        groups.append(Group(values, len(done), len(members) - len(done), estimates))
    return groups


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def shown(value: float | None) -> str:
    if value is None:
        return "-"
    if value == int(value) and abs(value) < 1000:
        return str(int(value))
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3f}"


def table(groups: Sequence[Group], by: Sequence[str], metric: str) -> str:
    head = [*by, "n", "mean", "95% interval"]
    body = []
    for g in groups:
        e = g.estimates[metric]
        interval = "-" if e.low is None else f"{shown(e.low)} - {shown(e.high)}"
        failed = f" ({g.failed} failed)" if g.failed else ""
        body.append([*(str(v) for v in g.values), f"{e.n}{failed}", shown(e.mean), interval])
    rows = [head, *body]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]  # fmt: skip
    return "\n".join([metric, *("  " + line for line in lines)])


def summary_csv(groups: Sequence[Group], by: Sequence[str], metrics: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*by, "finished", "failed",
                     *(f"{m}_{part}" for m in metrics for part in ("n", "mean", "low", "high"))])  # fmt: skip
    for g in groups:
        cells: list[Any] = [*g.values, g.finished, g.failed]
        for m in metrics:
            e = g.estimates[m]
            cells += [e.n, e.mean, e.low, e.high]
        writer.writerow(cells)
    return buffer.getvalue()


MADE_BY: Final = ("git_commit", "git_dirty", "model_digest")
"""What a group's runs must share for its mean to be of one thing."""


def mixtures(rows: Sequence[Mapping[str, Any]], by: Sequence[str]) -> list[str]:
    """A line for each group whose finished runs were made by more than one commit or
    model digest (their means are averaged over both: said, never silent)."""
    found: dict[tuple[Any, ...], dict[str, set[str]]] = {}
    for row in rows:
        if row.get("status") == "finished":
            made = found.setdefault(tuple(row.get(name) for name in by), {})
            for column in MADE_BY:
                made.setdefault(column, set()).add(str(row.get(column)))
    lines = []
    for values, made in found.items():
        mixed = [f"{len(kinds)} {column} values ({', '.join(sorted(kinds))})"
                 for column, kinds in made.items() if len(kinds) > 1]  # fmt: skip
        if mixed:
            label = ", ".join(f"{n}={v}" for n, v in zip(by, values, strict=True)) or "all runs"
            lines.append(f"Warning: {label} averages runs of {'; '.join(mixed)}")
    return lines


def report(out: Path, by: Sequence[str] | None = None) -> str:
    """Read OUT's results, write ``OUT/report/``, and return the text to print."""
    rows = read_results(out)
    plan = _plan(out)
    settings = [str(s) for s in plan.get("settings", [])]
    default = (["world"] if len(plan.get("worlds", [])) > 1 else []) + settings
    chosen = list(by) if by else default
    columns = set(rows[0]) if rows else set()
    unknown = [name for name in chosen if name not in columns]
    if unknown:
        raise UsageError(f"--by {unknown[0]}: no such column; the settings are "
                         f"{', '.join(settings) or '(none)'}")  # fmt: skip
    metrics = metric_names(rows, settings)
    groups = group(rows, chosen, metrics)
    folder = out / REPORT
    make_folder(folder)
    atomic_write_text(folder / "summary.csv", summary_csv(groups, chosen, metrics))
    charts = write_charts(groups, chosen, metrics, folder)
    failed = sum(g.failed for g in groups)
    grouping = ", ".join(chosen) if chosen else "nothing (one group)"
    lines = [f"Sweep {out}: {len(rows)} runs ({len(rows) - failed} finished, {failed} failed); "
             f"mean and 95% interval over seeds, by {grouping}", *mixtures(rows, chosen),
             ""]  # fmt: skip
    lines += [table(groups, chosen, m) + "\n" for m in metrics]
    lines.append(f"Summary: {folder / 'summary.csv'}")
    lines.append(charts)
    return "\n".join(lines)


def _plan(out: Path) -> dict[str, Any]:
    try:
        value = json.loads((out / PLAN).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{out / PLAN} does not read ({exc}); give the --out of a sweep") from exc
    return value if isinstance(value, dict) else {}


NO_RUN: Final = "no finished run"


@dataclass(frozen=True)
class Bar:
    """One group's bar in a figure's chart: its mean (None: no finished run, no bar) and
    how far its interval reaches below and above it."""

    label: str
    mean: float | None
    below: float = 0.0
    above: float = 0.0


def bars(groups: Sequence[Group], by: Sequence[str], metric: str) -> list[Bar]:
    found = []
    for g in groups:
        e = g.estimates[metric]
        label = g.label(by) or "all runs"
        if e.mean is None:
            found.append(Bar(f"{label}\n({NO_RUN})", None))
            continue
        low, high = (
            (e.low, e.high) if e.low is not None and e.high is not None else (e.mean, e.mean)
        )
        found.append(Bar(label, e.mean, e.mean - low, high - e.mean))
    return found


def description(metric: str, drawn: Sequence[Bar]) -> str:
    """What a chart shows, as text (its PNG's ``Description``)."""
    shown_bars = [f"{b.label.splitlines()[0]}: " + (NO_RUN if b.mean is None else shown(b.mean))
                  for b in drawn]  # fmt: skip
    return f"{metric}, mean over seeds by group: " + "; ".join(shown_bars)


def write_charts(groups: Sequence[Group], by: Sequence[str], metrics: Sequence[str],
                 folder: Path) -> str:  # fmt: skip
    """One bar chart per figure (each group's mean, its interval as an error bar; a group
    with no finished run has no bar, and says so)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return MISSING_CHARTS
    for metric in metrics:
        drawn = bars(groups, by, metric)
        figure, axes = plt.subplots(figsize=(max(5.0, 1.2 * len(groups) + 2), 4))
        here = [i for i, b in enumerate(drawn) if b.mean is not None]
        axes.bar(here, [drawn[i].mean or 0.0 for i in here], capsize=4, color="#4c72b0",
                 yerr=[[drawn[i].below for i in here], [drawn[i].above for i in here]])  # fmt: skip
        for i, b in enumerate(drawn):
            if b.mean is None:
                axes.annotate(NO_RUN, (i, 0), ha="center", va="bottom", color="#888888",
                              fontsize=8, rotation=90)  # fmt: skip
        axes.set_xticks(range(len(drawn)), [b.label for b in drawn], rotation=30, ha="right",
                        fontsize=8)  # fmt: skip
        axes.set_xlim(-0.6, len(drawn) - 0.4)
        axes.set_ylabel(metric)
        axes.set_title(f"{metric}: mean and 95% interval over seeds")
        figure.tight_layout()
        figure.savefig(folder / f"{slug(metric)}.png", dpi=100,
                       metadata={"Description": description(metric, drawn)})  # fmt: skip
        plt.close(figure)
    return f"Charts: {folder}/<figure>.png ({len(metrics)} files)"
