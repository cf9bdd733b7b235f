"""Shared fixtures: a small fixture world (never the shipped demo) and a simulation on
a fresh vault in ``tmp_path``; and the hypothesis profiles.

The default run (``python -m pytest -q``) runs on every core (pytest-xdist) and leaves
out the tests marked ``slow`` (whole runs in subprocesses, the embedded model, the crash
harness and the soak); ``python -m pytest -q -m slow`` runs those, and ``.ci/run`` runs
both.

Profiles (``HYPOTHESIS_PROFILE``): ``ci`` (the default) runs each property test that
does not set its own ``max_examples`` 100 times, Hypothesis's usual count, with no
deadline (a loaded 2-core machine must not fail a test by its timing);
``thorough`` runs 10,000 examples a property, by hand (``--timeout 0`` lifts the
per-test limit of pyproject.toml)::

    HYPOTHESIS_PROFILE=thorough timeout 3600 python -m pytest -q --timeout 0 tests/fuzz
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD
from hypothesis import settings

from engine.sim.simulation import Simulation

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("thorough", max_examples=10_000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test of the embedded model (``realmodel``) is slow too: the default run leaves
    it to CI's second pass (``-m slow``)."""
    for item in items:
        if item.get_closest_marker("realmodel") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def no_real_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a real model: unless a test says otherwise, the LLM is the
    discard port on 127.0.0.1, where nothing listens (subprocesses inherit this)."""
    monkeypatch.setenv("MUDSIM_LLM_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("MUDSIM_MODEL", raising=False)


@pytest.fixture(autouse=True)
def own_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The embedded model's saved prefix states go to the test's own folder, never the
    user's cache (subprocesses inherit this)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def world_file(tmp_path: Path) -> Path:
    path = tmp_path / "fixture.yaml"
    path.write_text(FIXTURE_WORLD, encoding="utf-8")
    return path


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    return tmp_path / "vault"


@pytest.fixture
def sim(vault_dir: Path, world_file: Path) -> Iterator[Simulation]:
    simulation = Simulation.open(vault_dir, world_file)
    yield simulation
    simulation.close()
