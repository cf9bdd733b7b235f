"""Saving the embedded model's prefix states: a folder that cannot be written costs a
log line, never the run; old states go, the newest stay (no model needed)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.llm.prefix_cache import SUFFIX, save_states


@dataclass
class _State:
    n_tokens: int
    seed: int
    llama_state: bytes


class _Cache:
    def __init__(self, count: int) -> None:
        self.cache_state = OrderedDict(
            ((i, i + 1), _State(2, 0, bytes([i]) * 10)) for i in range(count)
        )


def test_the_newest_states_are_written_and_older_files_removed(tmp_path: Path) -> None:
    folder = tmp_path / "prefixes"
    assert save_states(_Cache(5), folder, keep=3) == 3
    first = {p.name for p in folder.glob(f"*{SUFFIX}")}
    assert len(first) == 3
    assert save_states(_Cache(1), folder, keep=3) == 1
    assert len(list(folder.glob(f"*{SUFFIX}"))) == 1
    assert not list(folder.glob(".*.tmp"))


def test_a_folder_that_cannot_be_written_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with caplog.at_level(logging.WARNING, logger="mudsim"):
        assert save_states(_Cache(2), blocked / "prefixes") == 0
    assert "could not be saved" in caplog.text
