"""Fixtures of the lab's tests: a vault with one recorded run."""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded_run import record_run

from engine.vault.run_store import RunFolder


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return tmp_path / "vault"


@pytest.fixture
def run(vault: Path) -> RunFolder:
    return record_run(vault)
