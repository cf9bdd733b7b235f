"""What the benchmark scripts share: the repeat count, a test world, a median summary, and
the comparison of one run's figures with a baseline's (``bench.py engine --baseline``)."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from pathlib import Path

REPEATS = 5


class BaselineError(Exception):
    """A baseline that cannot be measured or read: its one line says why."""


def rooms_yaml(rooms: int) -> list[str]:
    """A bench world's head: its name and ``rooms`` plain rooms in a row, east to east."""
    lines = ["name: Bench", "rooms:"]
    for r in range(rooms):
        lines += [f"  - id: r{r}", f"    name: Room {r}", "    description: A plain room."]
        if r + 1 < rooms:
            lines.append(f"    exits: {{east: r{r + 1}}}")
    return lines


def world_yaml(rooms: int, characters: int) -> str:
    lines = [*rooms_yaml(rooms), "characters:"]
    for c in range(characters):
        lines += [
            f"  - name: Agent{c}",
            "    type: agent",
            f"    location: r{c % rooms}",
            "    profile: A tester.",
        ]
    return "\n".join(lines) + "\n"


def summary(unit: str, values: list[float]) -> dict[str, float]:
    return {unit: statistics.median(values), f"{unit}_min": min(values), f"{unit}_max": max(values)}


def headline(figures: Mapping[str, object]) -> dict[str, float]:
    """The figures worth a ratio: the numbers, less the spreads (``_min``, ``_max``)."""
    return {
        key: float(value)
        for key, value in figures.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
        and not key.endswith(("_min", "_max"))
    }  # fmt: skip


def medians(runs: Iterable[Mapping[str, object]]) -> dict[str, float]:
    """Each figure's median over ``runs`` (a figure some run lacks is left out)."""
    found = [headline(run) for run in runs]
    if not found:
        return {}
    keys = [key for key in found[0] if all(key in run for run in found)]
    return {key: statistics.median(run[key] for run in found) for key in keys}


def ratios(baseline: Mapping[str, float], this: Mapping[str, float]) -> dict[str, float]:
    """``this / baseline`` for each figure both have (NaN where the baseline is 0)."""
    return {
        key: (this[key] / baseline[key]) if baseline[key] else math.nan
        for key in baseline
        if key in this
    }


def figures_of(output: str, bench: str = "engine") -> dict[str, float]:
    """The ``bench`` figures in a ``bench.py --json`` output (its last JSON line), or a
    ``BaselineError`` saying what is missing."""
    lines = [line for line in output.splitlines() if line.lstrip().startswith("{")]
    if not lines:
        raise BaselineError("its output holds no JSON object")
    try:
        data = json.loads(lines[-1])
    except ValueError as exc:
        raise BaselineError(f"its JSON does not read: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get(bench), dict):
        raise BaselineError(f"its JSON has no {bench!r} figures")
    return headline(data[bench])


def load_baseline(path: Path, bench: str = "engine") -> dict[str, float]:
    """The figures saved earlier with ``bench.py BENCH --json > FILE``."""
    try:
        return figures_of(path.read_text(encoding="utf-8"), bench)
    except OSError as exc:
        raise BaselineError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except BaselineError as exc:
        raise BaselineError(f"{path}: {exc}") from exc


def comparison_rows(
    baseline: Mapping[str, float], this: Mapping[str, float]
) -> list[tuple[str, float, float, float]]:
    """(figure, baseline, this, ratio) for each figure both have, in the baseline's order.
    A baseline from before the run record has no recorded figure: this checkout's is then
    also set against its unrecorded one (``RECORDED_VS_BEFORE``)."""
    found = ratios(baseline, this)
    rows = [(key, baseline[key], this[key], found[key]) for key in found]
    if RECORDED not in baseline and RECORDED in this and baseline.get(UNRECORDED):
        before, now = baseline[UNRECORDED], this[RECORDED]
        rows.append((RECORDED_VS_BEFORE, before, now, now / before))
    return rows


UNRECORDED = "agent_turns/s"
RECORDED = "recorded_agent_turns/s"
RECORDED_VS_BEFORE = "recorded vs baseline unrecorded"
"""The row that sets a recorded run against a baseline that had no run record."""
