"""What a failing summarizer's note says is the same in every time zone: the note is
kept in ``memory-state.json``, which a replay compares byte for byte."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from engine.memory.summarizer_health import SummarizerHealth


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("tokyo")
def test_the_failing_note_names_the_time_in_utc_whatever_the_processs_zone() -> None:
    assert time.strftime("%z") == "+0900"  # the process is in Tokyo
    health = SummarizerHealth()
    said = health.failed(datetime(2026, 12, 7, 17, 9, 28, tzinfo=UTC), "HTTP 500")
    assert said == "summaries failing: HTTP 500 (1 since 17:09:28 UTC); retrying"
