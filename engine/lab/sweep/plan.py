"""A sweep's runs (pure: no I/O): the grid crossed, the runs list, the seeds, run keys.

- The **grid** maps settings to lists of values; its configurations are every
  combination (the first setting varies slowest). The **runs** list gives
  configurations one by one. Given both, every entry of ``runs`` is crossed with the
  grid (``runs`` names variants such as ``{knowledge: off}``, the grid the factors they
  are compared under); given neither, there is one configuration with no settings.
- **Seeds**: a list, or a count ``n`` meaning ``0 .. n-1``.
- Every world x configuration x seed is one run. They are ordered seed first, so a
  sweep stopped half-way has every configuration's first seeds before any's last.
- The plan is **counted before it is built** (``run_count``: worlds x runs entries x
  each grid setting's values x seeds, multiplied, never listed), so a sweep file that
  would make millions of runs is refused (``MAX_RUNS``, the CLI's ``--max-runs``) before
  any memory goes to them.
- A run's **key** is a readable slug of its world, settings and seed, then the first
  ``HASH_CHARS`` hex digits of the sha256 of the canonical JSON of what the run is
  (world, settings, seed, turns): never of where it runs or where its results go, so the
  process pool and Ray give the same keys, and a stopped sweep finds its runs again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final

HASH_CHARS: Final = 8
MAX_RUNS: Final = 10_000
"""The most runs a sweep makes unless ``--max-runs`` says otherwise."""
SLUG_CHARS: Final = 72
"""The world and settings part of a key is cut to this many characters (the seed and the
hash follow it; the hash keeps keys unique)."""


@dataclass(frozen=True)
class PlannedRun:
    key: str
    world: str
    """The world file as the sweep file names it."""
    settings: Mapping[str, Any]
    """Setting -> canonical value, in the sweep file's order."""
    seed: int
    turns: int

    def identity(self) -> dict[str, Any]:
        """What the run is: the key's hash is of this, as canonical JSON."""
        return {"world": self.world, "settings": dict(self.settings), "seed": self.seed,
                "turns": self.turns}  # fmt: skip

    def describe(self) -> str:
        """``world=trio.yaml seed=0 model=qwen3:4b recent_window=16`` (the dry run's line)."""
        parts = [f"world={self.world}", f"seed={self.seed}"]
        parts += [f"{name}={_shown(value)}" for name, value in self.settings.items()]
        return " ".join(parts)


def configurations(
    grid: Mapping[str, Sequence[Any]], runs: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Every configuration: each entry of ``runs`` (or one empty one) crossed with every
    combination of the ``grid``'s values (or none)."""
    names = list(grid)
    combos = [dict(zip(names, values, strict=True))
              for values in itertools.product(*(grid[name] for name in names))]  # fmt: skip
    return [{**entry, **combo} for entry in (runs or [{}]) for combo in combos]


def seed_list(seeds: int | Sequence[int]) -> list[int]:
    """A list of seeds as given, or ``0 .. n-1`` for a count ``n``."""
    return list(range(seeds)) if isinstance(seeds, int) else list(seeds)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def run_key(world: str, settings: Mapping[str, Any], seed: int, turns: int) -> str:
    """``<world>_<name>=<value>..._seed=<seed>_<hash>`` (``trio_recent_window=16_seed=0_
    1f3a9c2e``): readable, and unique by its hash."""
    identity = {"world": world, "settings": dict(settings), "seed": seed, "turns": turns}
    digest = hashlib.sha256(canonical_json(identity).encode("utf-8")).hexdigest()
    parts = [slug(PurePosixPath(world).stem)]
    parts += [f"{slug(name)}={value_slug(_shown(value))}" for name, value in settings.items()]
    head = "_".join(part for part in parts if part)[:SLUG_CHARS].rstrip("_-.=")
    return "_".join(part for part in (head, f"seed={seed}", digest[:HASH_CHARS]) if part)


def slug(text: str) -> str:
    """``text`` with only ``[A-Za-z0-9._-]`` kept (runs of anything else as one ``-``):
    a safe folder name on every system."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")


def value_slug(text: str) -> str:
    """A setting's value in a key: ``slug``, but a negative number keeps its sign
    (``num_ctx=-5``, never ``num_ctx=5``); it follows ``name=``, so never starts a key."""
    made = slug(text)
    return f"-{made}" if re.match(r"\s*-\d", text) and made[:1].isdigit() else made


def run_count(worlds: int, entries: int, grid_sizes: Sequence[int], seeds: int) -> int:
    """How many runs a sweep makes, without making them: every world x each ``runs``
    entry (none: one) x every combination of the grid's values x every seed."""
    count = worlds * max(1, entries) * seeds
    for size in grid_sizes:
        count *= size
    return count


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_shown(item) for item in value)
    return canonical_json(value)


def plan(worlds: Sequence[str], configs: Sequence[Mapping[str, Any]], seeds: Sequence[int],
         turns: int) -> list[PlannedRun]:  # fmt: skip
    """Every world x configuration x seed, seed first."""
    return [
        PlannedRun(run_key(world, config, seed, turns), world, dict(config), seed, turns)
        for seed in seeds
        for world in worlds
        for config in configs
    ]


def repeated(runs: Sequence[PlannedRun]) -> tuple[PlannedRun, PlannedRun] | None:
    """The first two runs with one key (the same world, settings and seed twice)."""
    seen: dict[str, PlannedRun] = {}
    for run in runs:
        if run.key in seen:
            return seen[run.key], run
        seen[run.key] = run
    return None
