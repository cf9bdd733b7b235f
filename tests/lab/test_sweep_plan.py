"""A sweep's runs and their keys (pure): the grid crossed with the runs list, seeds, and
keys that are unique, stable, readable and independent of where the runs go."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.lab.sweep.plan import (
    HASH_CHARS,
    configurations,
    plan,
    repeated,
    run_key,
    seed_list,
    slug,
)

KEY = re.compile(rf"^([A-Za-z0-9][A-Za-z0-9._=-]*_)?seed=-?\d+_[0-9a-f]{{{HASH_CHARS}}}$")
names = st.sampled_from(["model", "recent_window", "knowledge", "goal", "memory_compaction.x"])
values = st.one_of(st.integers(-5, 500), st.text(max_size=12), st.booleans(),
                   st.lists(st.text(max_size=4), max_size=3))  # fmt: skip
settings = st.dictionaries(names, values, max_size=4)
worlds = st.sampled_from(["world.yaml", "../trio.yaml", "worlds/Village Green.yaml", "ü.yaml"])


def test_the_grid_is_crossed_and_each_runs_entry_with_it() -> None:
    grid = {"model": ["a", "b"], "recent_window": [8, 16, 32]}
    crossed = configurations(grid, [])
    assert len(crossed) == 6
    assert crossed[0] == {"model": "a", "recent_window": 8}  # the first setting varies slowest
    assert crossed[1] == {"model": "a", "recent_window": 16}
    with_runs = configurations(grid, [{}, {"knowledge": "off"}])
    assert len(with_runs) == 12
    assert with_runs[6] == {"knowledge": "off", "model": "a", "recent_window": 8}
    assert configurations({}, [{"goal": "x"}, {"goal": "y"}]) == [{"goal": "x"}, {"goal": "y"}]
    assert configurations({}, []) == [{}]  # neither: one run per seed, no settings


def test_seeds_as_a_count_or_a_list() -> None:
    assert seed_list(3) == [0, 1, 2]
    assert seed_list([7, 42]) == [7, 42]


def test_runs_are_ordered_seed_first() -> None:
    runs = plan(["w.yaml"], [{"m": 1}, {"m": 2}], [5, 6], 3)
    assert [(r.seed, r.settings["m"]) for r in runs] == [(5, 1), (5, 2), (6, 1), (6, 2)]
    assert len({r.key for r in runs}) == 4


def test_a_key_reads_as_what_the_run_is() -> None:
    key = run_key("../trio.yaml", {"model": "qwen3:4b", "recent_window": 16}, 2, 12)
    assert key.startswith("trio_model=qwen3-4b_recent_window=16_seed=2_")
    assert KEY.match(key)


def test_a_long_key_keeps_its_seed_and_hash() -> None:
    key = run_key("w.yaml", {"goal": "x" * 500}, 9, 1)
    assert "_seed=9_" in key
    assert len(key) < 100
    assert KEY.match(key)


def test_the_same_settings_twice_are_found() -> None:
    runs = plan(["w.yaml"], [{"m": 1}, {"m": 1}], [0], 3)
    pair = repeated(runs)
    assert pair is not None
    assert pair[0].key == pair[1].key


@given(worlds, settings, st.integers(-3, 10**6), st.integers(1, 1000))
def test_a_key_is_stable_and_safe_as_a_folder_name(
    world: str, chosen: dict[str, Any], seed: int, turns: int
) -> None:
    key = run_key(world, chosen, seed, turns)
    assert key == run_key(world, dict(chosen), seed, turns)  # the same run, the same key
    reordered = run_key(world, dict(reversed(list(chosen.items()))), seed, turns)
    assert key.rsplit("_", 1)[1] == reordered.rsplit("_", 1)[1]  # the hash ignores the order
    assert KEY.match(key), key
    assert "/" not in key
    assert "\\" not in key
    assert not key.startswith(".")


@given(st.lists(st.tuples(worlds, settings, st.integers(0, 20), st.integers(1, 5)),
                min_size=2, max_size=30, unique_by=lambda t: repr((t[0], sorted(t[1].items()), t[2], t[3]))))  # fmt: skip
def test_different_runs_get_different_keys(
    runs: list[tuple[str, dict[str, Any], int, int]],
) -> None:
    keys = [run_key(*run) for run in runs]
    assert len(set(keys)) == len(keys)


@given(st.text(max_size=40))
def test_a_slug_keeps_only_safe_characters(text: str) -> None:
    made = slug(text)
    assert re.fullmatch(r"[A-Za-z0-9._-]*", made)
    assert not made.startswith(("-", ".", "_"))
    assert not made.endswith(("-", ".", "_"))
