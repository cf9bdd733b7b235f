"""The probe's chart: accuracy against the evidence's age, one line per configuration
(matplotlib, in the ``analysis`` extra; without it the report says how to get it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

MISSING = "Chart: needs matplotlib: pip install 'mudsim[analysis]'"
_STYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v")


def write_chart(report: Mapping[str, Any], path: Path) -> str:
    """Draw the chart at ``path``; its path, or one line saying why there is none."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: a file
        import matplotlib.pyplot as plt
    except ImportError:
        return MISSING
    figure, axes = plt.subplots(figsize=(7, 4))
    for index, (name, value) in enumerate(report["configs"].items()):
        buckets = list(value["by_age"])
        accuracy = [value["by_age"][b]["accuracy"] or 0.0 for b in buckets]
        # a style and a marker of its own, so lines that coincide stay visible
        axes.plot(buckets, accuracy, label=name, linestyle=_STYLES[index % len(_STYLES)],
                  marker=_MARKERS[index % len(_MARKERS)], markersize=7 - index % 3)  # fmt: skip
    axes.set_ylabel("accuracy")
    axes.set_ylim(0, 1)
    uniform = _uniform(report)
    if uniform is not None:
        axes.axhline(uniform, color="grey", linestyle=":", linewidth=1, label="uniform guess")
    axes.legend()
    axes.set_xlabel("oldest evidence's age (memories ago)")
    axes.set_title("Recall by evidence age")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return str(path)


def _uniform(report: Mapping[str, Any]) -> float | None:
    """The uniform guess's accuracy on the answerable questions (the first configuration's)."""
    for value in (report.get("baselines") or {}).values():
        found = value.get("answerable", {}).get("uniform")
        return float(found) if found is not None else None
    return None
