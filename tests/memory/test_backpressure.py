"""Back-pressure arithmetic (pure): when a character's compaction goes first, when it is
behind, and what that bounds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.memory.backpressure import behind, limit, urgent
from engine.memory.waterfall import Windows, compaction_due

WINDOWS = st.builds(Windows, st.integers(1, 200), st.integers(1, 200))
KINDS = st.sampled_from(["agent", "player"])


def test_the_limits_the_design_names() -> None:
    assert limit(Windows(4, 4), "agent") == 4 + 2 * 4
    assert limit(Windows(64, 64), "player") == 64 + 3 * 64
    assert urgent(10, 0, Windows(4, 4), "agent")
    assert not urgent(9, 0, Windows(4, 4), "agent")
    assert behind(12, 0, Windows(4, 4), "agent")
    assert not behind(11, 0, Windows(4, 4), "agent")


@given(WINDOWS, KINDS, st.integers(0, 2000), st.integers(0, 2000))
def test_a_compaction_is_due_before_it_is_urgent_and_urgent_before_it_is_behind(
    windows: Windows, kind: str, memories: int, boundary: int
) -> None:
    boundary = min(boundary, memories)
    if behind(memories, boundary, windows, kind):
        assert urgent(memories, boundary, windows, kind)
    if urgent(memories, boundary, windows, kind):
        assert compaction_due(memories, boundary, windows)


@given(WINDOWS, st.integers(0, 5000))
def test_a_player_may_wait_longer_than_an_agent_never_past_i_plus_4r(
    windows: Windows, boundary: int
) -> None:
    agent, player = limit(windows, "agent"), limit(windows, "player")
    assert windows.span < agent < player < windows.immediate + 4 * windows.recent
    for memories in range(boundary, boundary + player + 2):
        if behind(memories, boundary, windows, "agent"):
            assert memories - boundary >= agent
        assert behind(memories, boundary, windows, "player") == (memories - boundary >= player)


@given(WINDOWS, KINDS, st.lists(st.integers(0, 3), max_size=200))
def test_memories_made_only_while_nobody_is_behind_stay_within_the_limit(
    windows: Windows, kind: str, arrivals: list[int]
) -> None:
    """The gate's promise, as arithmetic: a command adds one memory and runs only when
    the character is not behind; a commit takes R off. M - b never passes the limit."""
    memories = boundary = 0
    for arrival in arrivals:
        if arrival == 0 and memories - boundary > windows.span:
            boundary += windows.recent  # a compaction commits
        elif not behind(memories, boundary, windows, kind):
            memories += 1
        assert memories - boundary <= limit(windows, kind)
