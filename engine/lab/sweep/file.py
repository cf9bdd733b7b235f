"""Reading a sweep file (``mudsim sweep SWEEP.yaml``), checked as a world file is: unknown
keys refused, and every problem one ``SweepFileError`` naming the file, the line and the
field. Nothing runs unless the whole file, its worlds and every run it makes are valid.

    world: ../trio.yaml          # or worlds: [a.yaml, b.yaml]; relative to this file
    turns: 12                    # each agent's turns in every run
    seeds: 3                     # a count (0, 1, 2) or a list [1, 7, 42]
    llm: http://gpu1:11434       # or endpoints: [{url: ..., kind: ollama, slots: 4}]
    grid:                        # crossed: 2 x 2 configurations
      model: [qwen3:4b, gemma3:4b]
      recent_window: [16, 64]
    runs:                        # each crossed with the grid
      - {}
      - {knowledge: off}
    probe: true                  # or {compare: [full, window], per_category: 3}
    resources: {cpus: 1, gpus: 0}   # what each run asks of Ray
    timeout: 600                 # seconds a run may take (its probe included); then failed

The runs are counted before they are made (worlds x runs entries x grid values x
seeds): more than ``max_runs`` (``--max-runs``, default 10,000) is refused, in one line,
before any memory goes to them.

What a setting is: ``engine.lab.sweep.settings``; how the runs are made:
``engine.lab.sweep.plan``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from engine.config import EndpointConfig, LLMConfig
from engine.errors import MudsimError, SweepFileError, WorldFileError
from engine.lab.sweep.plan import (
    MAX_RUNS,
    PlannedRun,
    configurations,
    plan,
    repeated,
    run_count,
    seed_list,
)
from engine.lab.sweep.settings import (
    SettingError,
    canonical,
    derive_world,
    kind_of,
    vault_settings,
)
from engine.llm.connect import choose_llm

# The world file's reader: a sweep file is read exactly as a world file is (the same YAML
# limits, a key given twice refused, errors placed on their line).
from engine.world.loader import parse_world, read_yaml, validation_problem, where

Loc = tuple[str | int, ...]
ProbeConfig = Literal["full", "waterfall", "gapped", "window", "none", "full+query", "evidence"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ProbeSpec(_Strict):
    compare: Annotated[list[ProbeConfig], Field(min_length=1)] = [
        "full", "waterfall", "gapped", "window", "none"
    ]  # fmt: skip
    """The probe's configurations (default: all five)."""
    per_category: Annotated[StrictInt, Field(ge=1)] = 5


class ResourcesSpec(_Strict):
    cpus: Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)] = 1.0
    """CPUs a run asks of Ray (the process pool runs one run per worker)."""
    gpus: Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)] = 0.0
    """GPUs a run asks of Ray (the embedded model runs on the CPU: 0 unless your server
    runs inside the task)."""


class SweepSpec(_Strict):
    world: str | None = None
    worlds: Annotated[list[str], Field(min_length=1)] | None = None
    grid: dict[str, list[Any]] | None = None
    runs: list[dict[str, Any]] | None = None
    seeds: int | list[int] = 1
    turns: Annotated[StrictInt, Field(ge=1)]
    llm: str | None = None
    endpoints: Annotated[list[EndpointConfig], Field(min_length=1)] | None = None
    probe: ProbeSpec | None = None
    """``true``: the probe with its defaults; a mapping: its options; ``false``: none."""
    resources: ResourcesSpec = ResourcesSpec()
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    """Seconds one run may take, its probe included (None: no limit); a run past it is
    stopped and recorded failed, and the sweep goes on."""

    @field_validator("timeout", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        if isinstance(value, bool) or (value is not None and not isinstance(value, int | float)):
            raise ValueError(f"timeout is a number of seconds, not {value!r}")
        return value

    @field_validator("seeds", mode="before")
    @classmethod
    def _count_or_list(cls, value: Any) -> Any:
        def whole(item: Any) -> bool:
            return isinstance(item, int) and not isinstance(item, bool)

        if whole(value) and value >= 1:
            return value
        if isinstance(value, list) and value and all(whole(item) for item in value):
            if len(set(value)) != len(value):
                raise ValueError("a seed is given twice")
            return value
        raise ValueError(
            f"seeds is a count of at least 1 or a list of whole numbers, not {value!r}"
        )

    @field_validator("probe", mode="before")
    @classmethod
    def _probe_on_or_off(cls, value: Any) -> Any:
        return {} if value is True else None if value is False else value

    @model_validator(mode="after")
    def _one_of_each(self) -> SweepSpec:
        if (self.world is None) == (self.worlds is None):
            raise ValueError("give world (one world file) or worlds (a list), not both or neither")
        if self.llm is not None and self.endpoints is not None:
            raise ValueError("give llm (one URL) or endpoints (a list), not both")
        return self


@dataclass(frozen=True)
class Sweep:
    """A checked sweep file and its runs."""

    source: Path
    spec: SweepSpec
    runs: list[PlannedRun]
    settings: list[str]
    """Every setting some run has, in the file's order (the results' setting columns)."""
    worlds: dict[str, Path]
    """The world files as named -> where they are."""
    world_texts: dict[str, str]

    @property
    def endpoints(self) -> list[dict[str, Any]] | None:
        return endpoint_dicts(self.spec)


def endpoint_dicts(spec: SweepSpec) -> list[dict[str, Any]] | None:
    """The sweep's ``endpoints`` as ``llm.md`` holds them (None: not given)."""
    return None if spec.endpoints is None else [e.model_dump(mode="json") for e in spec.endpoints]


def load_sweep_file(path: Path, *, max_runs: int = MAX_RUNS) -> Sweep:
    """Read and check ``path``, its worlds and every run; a ``SweepFileError`` if not
    (also when it makes more than ``max_runs`` runs, counted before they are made)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepFileError(f"cannot read sweep file {path}: {exc}") from exc
    source = str(path)
    try:
        root, data = read_yaml(text, source)
    except WorldFileError as exc:
        raise SweepFileError(str(exc)) from exc
    if not isinstance(data, dict):
        raise SweepFileError(f"{source}, line 1: a sweep file is a mapping with world and turns")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as exc:
        raise SweepFileError(validation_problem(source, root, exc)) from exc
    return _Checker(path, root, spec, max_runs).sweep()


class _Checker:
    """What pydantic cannot check: each setting and value, the worlds, the LLM, and that
    every run makes a valid world and vault."""

    def __init__(self, path: Path, root: yaml.Node | None, spec: SweepSpec,
                 max_runs: int = MAX_RUNS) -> None:  # fmt: skip
        self.path, self.source, self.root, self.spec = path, str(path), root, spec
        self.max_runs = max_runs

    def fail(self, loc: Loc, message: str) -> SweepFileError:
        return SweepFileError(f"{where(self.source, self.root, loc)}: {message}")

    def sweep(self) -> Sweep:
        spec = self.spec
        named = [spec.world] if spec.world is not None else list(spec.worlds or [])
        self.count(named)
        grid = self.grid()
        entries = self.entries(grid)
        seeds = seed_list(spec.seeds)
        self.llm()
        worlds, texts = self.worlds(named)
        runs = plan(named, configurations(grid, entries), seeds, spec.turns)
        twice = repeated(runs)
        if twice is not None:
            raise self.fail(("runs",), f"two runs are the same ({twice[1].describe()}): "
                                       "each configuration once, please")  # fmt: skip
        self.check_runs(runs, texts)
        names = list(dict.fromkeys([*(k for e in entries for k in e), *grid]))
        return Sweep(self.path, spec, runs, names, worlds, texts)

    def count(self, worlds: Sequence[str]) -> None:
        """Refuse a plan of more than ``max_runs`` runs, counted (not made)."""
        spec = self.spec
        sizes = [len(values) for values in (spec.grid or {}).values()]
        factors = {"worlds": len(worlds), "runs": max(1, len(spec.runs or [])),
                   "grid": run_count(1, 1, sizes, 1),
                   "seeds": spec.seeds if isinstance(spec.seeds, int) else len(spec.seeds)}  # fmt: skip
        total = run_count(factors["worlds"], factors["runs"], sizes, factors["seeds"])
        if total <= self.max_runs:
            return
        names = {"worlds": "worlds", "runs": "runs entries", "grid": "grid combinations",
                 "seeds": "seeds"}  # fmt: skip
        parts = [f"{n:,} {names[name]}" for name, n in factors.items() if n > 1]
        given = [name for name in factors if name in spec.model_fields_set]
        biggest = max(given, key=lambda name: factors[name], default="seeds")
        raise self.fail((biggest,), f"this sweep makes {total:,} runs ({' x '.join(parts)}), "
                                    f"more than --max-runs {self.max_runs:,}: give fewer "
                                    "seeds or grid values, or a larger --max-runs")  # fmt: skip

    def grid(self) -> dict[str, list[Any]]:
        grid = self.spec.grid
        if grid is None:
            return {}
        if not grid:
            raise self.fail(("grid",), "the grid is empty: give each setting a list of values")
        found: dict[str, list[Any]] = {}
        for name, values in grid.items():
            self.name(("grid", name), name)
            if not values:
                raise self.fail(("grid", name), "give at least one value")
            found[name] = [self.value(("grid", name, i), name, v) for i, v in enumerate(values)]
            if len({repr(v) for v in found[name]}) != len(values):
                raise self.fail(("grid", name), "a value is given twice")
        return found

    def entries(self, grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
        runs = self.spec.runs
        if runs is None:
            return []
        if not runs:
            raise self.fail(("runs",), "the runs list is empty: give each run's settings")
        found = []
        for index, entry in enumerate(runs):
            checked = {}
            for name, value in entry.items():
                if name in grid:
                    raise self.fail(("runs", index, name), f"{name!r} is also in the grid; "
                                    "each run is crossed with the grid, so give it in one place")  # fmt: skip
                self.name(("runs", index, name), name)
                checked[name] = self.value(("runs", index, name), name, value)
            found.append(checked)
        return found

    def name(self, loc: Loc, name: str) -> None:
        try:
            kind_of(name)
        except SettingError as exc:
            raise self.fail(loc, str(exc)) from exc

    def value(self, loc: Loc, name: str, value: Any) -> Any:
        try:
            return canonical(name, value)
        except SettingError as exc:
            raise self.fail(loc, str(exc)) from exc

    def llm(self) -> None:
        spec = self.spec
        try:
            if spec.llm is not None:
                choose_llm(spec.llm, {}, LLMConfig())
            elif spec.endpoints is not None:
                choose_llm(None, {}, vault_settings({}, endpoint_dicts(self.spec)).llm)
        except (MudsimError, SettingError) as exc:
            what = "llm" if spec.llm is not None else "endpoints"
            raise self.fail((what,), str(exc).split(": ", 1)[-1]) from exc

    def worlds(self, named: Sequence[str]) -> tuple[dict[str, Path], dict[str, str]]:
        worlds, texts = {}, {}
        for index, name in enumerate(named):
            loc: Loc = ("world",) if self.spec.world is not None else ("worlds", index)
            if name in worlds:
                raise self.fail(loc, f"the world {name!r} is named twice")
            where = Path(name) if Path(name).is_absolute() else self.path.parent / name
            try:
                texts[name] = where.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise self.fail(loc, f"cannot read the world file {where}: {exc}") from exc
            try:
                parse_world(texts[name], source=str(where))
            except WorldFileError as exc:
                raise self.fail(loc, f"the world is not valid: {exc}") from exc
            worlds[name] = where
        return worlds, texts

    def check_runs(self, runs: Sequence[PlannedRun], texts: dict[str, str]) -> None:
        """Every run's world and vault settings, as its run will make them (each distinct
        one once)."""
        seen: set[str] = set()
        for run in runs:
            marker = repr((run.world, sorted(run.settings.items())))
            if marker in seen:
                continue
            seen.add(marker)
            try:
                derive_world(
                    texts[run.world], run.settings, source=str(self.path.parent / run.world)
                )
                vault_settings(run.settings, endpoint_dicts(self.spec))
            except WorldFileError as exc:
                raise self.fail(
                    self._where_set(run), f"this run's world is not valid: {exc}"
                ) from exc
            except SettingError as exc:
                raise self.fail(self._where_set(run), str(exc)) from exc

    def _where_set(self, run: PlannedRun) -> Loc:
        """Where a run's settings come from, as near as can be said: its first setting in
        the grid, else the runs list."""
        grid = self.spec.grid or {}
        for name in run.settings:
            if name in grid:
                return ("grid", name)
        return ("runs",)
