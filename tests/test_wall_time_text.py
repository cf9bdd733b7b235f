"""Wall times as the vault writes them, the text up to the seconds made once a second:
an event's in the run record (``local_iso``, in the local zone, looked up once a minute)
and a memory's (``utc_text``): still what ``datetime`` says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import wallclock
from engine.wallclock import local_iso, utc_text

MOMENTS = st.floats(min_value=1e9, max_value=4e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=500, deadline=None)
@given(st.lists(MOMENTS, min_size=1, max_size=5))
def test_the_wall_time_is_the_moment_in_the_local_zone(moments: list[float]) -> None:
    for moment in moments:  # several in a row: the kept second and zone do not leak
        shown = local_iso(moment)
        expected = datetime.fromtimestamp(moment).astimezone()
        parsed = datetime.fromisoformat(shown)
        assert parsed.utcoffset() == expected.utcoffset()
        assert abs(parsed - expected) <= timedelta(microseconds=1)  # float rounding
        assert len(shown) in (25, 32)  # to the second, or with microseconds


def test_a_whole_second_is_written_as_isoformat_writes_it() -> None:
    assert (
        local_iso(1_700_000_000.0) == datetime.fromtimestamp(1_700_000_000).astimezone().isoformat()
    )
    assert local_iso(1_700_000_000.25).endswith(".250000" + local_iso(1_700_000_000.0)[19:])


@settings(max_examples=500, deadline=None)
@given(st.lists(MOMENTS, min_size=1, max_size=5))
def test_a_memory_s_utc_time_is_the_moment_to_the_microsecond(moments: list[float]) -> None:
    for moment in moments:
        shown = utc_text(moment)
        expected = datetime.fromtimestamp(moment, UTC)
        assert shown.endswith("Z")
        assert len(shown) == 27  # YYYY-MM-DDTHH:MM:SS.ffffffZ
        assert abs(datetime.fromisoformat(shown) - expected) <= timedelta(microseconds=1)


def test_a_recorded_memory_time_is_the_draw_a_replay_serves_back() -> None:
    told: list[wallclock.Draw] = []
    with wallclock.listening(told.append):
        live = [wallclock.utc_iso() for _ in range(3)]
    assert [kind for kind, _ in told] == ["now"] * 3
    with wallclock.scripted(wallclock.Script(told)):
        replayed = [wallclock.utc_iso() for _ in range(3)]
    assert replayed == live
    for (_, draw), text in zip(told, live, strict=True):
        assert datetime.fromisoformat(draw) == datetime.fromisoformat(text)
