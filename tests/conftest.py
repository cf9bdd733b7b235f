"""Shared fixtures: a small fixture world (never the shipped demo) and a simulation on
a fresh vault in ``tmp_path``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import FIXTURE_WORLD

from engine.sim.simulation import Simulation


@pytest.fixture(autouse=True)
def no_real_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a real model: unless a test says otherwise, the LLM is the
    discard port on 127.0.0.1, where nothing listens (subprocesses inherit this)."""
    monkeypatch.setenv("MUDSIM_LLM_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("MUDSIM_MODEL", raising=False)


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
