"""The compaction schedule's arithmetic (pure): when a chunk is due and what is shown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.status import MemoryStatus
from engine.memory.waterfall import Windows, compaction_due, next_compaction_at, verbatim_count


def _firing_counts(w: Windows, up_to: int) -> list[int]:
    """Append one memory at a time; each due chunk commits at once (boundary += R)."""
    fired, boundary = [], 0
    for m in range(1, up_to + 1):
        if compaction_due(m, boundary, w):
            fired.append(m)
            boundary += w.recent
    return fired


def test_default_windows_fire_at_129_then_every_64() -> None:
    assert _firing_counts(Windows(64, 64), 400) == [129, 193, 257, 321, 385]


def test_small_windows_fire_at_9_13_17() -> None:
    assert _firing_counts(Windows(4, 4), 17) == [9, 13, 17]


@given(st.integers(1, 30), st.integers(1, 30))
def test_triggers_are_at_i_plus_r_plus_1_plus_k_r(immediate: int, recent: int) -> None:
    fired = _firing_counts(Windows(immediate, recent), 20 * (immediate + recent))
    assert fired == [immediate + recent + 1 + k * recent for k in range(len(fired))]


def test_windows_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Windows(0, 4)


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 5000))
def test_next_compaction_is_the_first_due_count(immediate: int, recent: int, memories: int) -> None:
    """Appending one memory at a time from M, the first M' at which a chunk is due is
    exactly what next_compaction_at promised (boundary fixed, no commit in between)."""
    w = Windows(immediate, recent)
    boundary = max(0, memories - immediate - recent) // recent * recent
    target = next_compaction_at(memories, boundary, w)
    assert target >= memories
    if target > memories:
        assert not compaction_due(memories, boundary, w)
        assert not compaction_due(target - 1, boundary, w)
    assert compaction_due(target, boundary, w)
    assert target == boundary + immediate + recent + 1 or compaction_due(memories, boundary, w)


@given(st.integers(1, 50), st.integers(1, 50), st.integers(0, 5000), st.integers(0, 5000))
def test_verbatim_never_exceeds_the_windows_or_the_tail(
    immediate: int, recent: int, memories: int, boundary: int
) -> None:
    w = Windows(immediate, recent)
    boundary = min(boundary, memories)
    shown = verbatim_count(memories, boundary, w)
    assert 0 <= shown <= immediate + recent
    assert shown <= memories - boundary
    if memories - boundary <= immediate + recent:
        assert shown == memories - boundary


def test_status_json_has_the_contract_keys_and_nulls_for_missing_summaries() -> None:
    status = MemoryStatus(
        name="Ada", type="agent", memories=130, boundary=0, windows=Windows(64, 64)
    )
    data = status.to_json()
    assert data == {
        "name": "Ada", "type": "agent", "memories": 130, "boundary": 0, "verbatim": 128,
        "immediate_window": 64, "recent_window": 64, "next_compaction_at": 130,
        "in_flight": False, "failures": 0, "last_error": None,
        "short_term": None, "long_term": None,
    }  # fmt: skip
    assert "next compaction at: 130 memories" in status.render()
