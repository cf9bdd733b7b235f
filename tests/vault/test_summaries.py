"""The summaries folder: files that read back, history ordered by range, and a commit
that a crash at any step leaves consistent (at worst redone)."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import VaultError
from engine.vault.files import write_front_matter
from engine.vault.summaries import Summaries, Summary, SummaryStore

T1 = datetime(2026, 11, 21, 10, 15, 0, tzinfo=UTC)
KEYS = ["summary_type", "covers_from", "covers_to", "memory_count", "updated", "method", "grounded"]


def summary(start: int, end: int, text: str | None = None, *, count: int | None = None) -> Summary:
    return Summary(
        text=text or f"I remember memories {start} to {end - 1}.",
        covers_from=start,
        covers_to=end,
        memory_count=end + 64 if count is None else count,
        updated="2026-11-21T10:15:00.000000Z",
    )


def commit_chunk(store: SummaryStore, start: int, end: int, now: datetime = T1) -> Path:
    """Commit [start, end) the way a compaction does: L becomes [0, start)."""
    longterm = summary(0, start, "Long ago.") if start else None
    return store.commit(longterm, summary(start, end), now=now)


def front_matter(path: Path) -> dict[str, object]:
    _, head, _ = path.read_text(encoding="utf-8").split("---\n", 2)
    loaded = yaml.safe_load(head)
    assert isinstance(loaded, dict)
    return loaded


def test_commit_then_load_round_trips(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path / "summaries")
    longterm = summary(0, 64, "The village, the mill,\nand the quarrel over the bridge.")
    recent = summary(64, 128, "Ada asked me about the well.")
    history = store.commit(longterm, recent, now=T1)
    assert history.name == "recent-20261121-101500.md"
    assert store.load() == Summaries(recent=recent, longterm=longterm)
    assert store.history() == [(history, recent)]
    for path, kind in [(store.recent_path, "recent"), (store.longterm_path, "longterm")]:
        meta = front_matter(path)
        assert list(meta) == KEYS
        assert meta["summary_type"] == kind
    assert front_matter(history) == front_matter(store.recent_path)
    body = store.recent_path.read_text(encoding="utf-8").split("---\n", 2)[2]
    assert body == "# Short-term summary\n\nAda asked me about the well.\n"
    assert "# Long-term summary\n\nThe village" in store.longterm_path.read_text()


def test_a_heading_edited_away_is_tolerated(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path)
    commit_chunk(store, 0, 4)
    meta = front_matter(store.recent_path)
    write_front_matter(store.recent_path, meta, "Edited by hand.\n\nSecond paragraph.")
    loaded = store.load().recent
    assert loaded is not None
    assert loaded.text == "Edited by hand.\n\nSecond paragraph."


def test_an_unquoted_timestamp_reads_as_text(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path)
    commit_chunk(store, 0, 4)
    text = store.recent_path.read_text().replace(
        "'2026-11-21T10:15:00.000000Z'", "2026-11-21T10:15:00Z"
    )
    store.recent_path.write_text(text)
    loaded = store.load().recent
    assert loaded is not None
    assert loaded.updated == "2026-11-21T10:15:00.000000Z"


def test_boundary(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path / "summaries")
    assert store.load() == Summaries(recent=None, longterm=None)
    assert store.load().boundary == 0
    commit_chunk(store, 0, 64)
    assert store.load().boundary == 64
    commit_chunk(store, 64, 128, T1 + timedelta(seconds=1))
    assert store.load().boundary == 128
    assert Summaries(recent=None, longterm=summary(0, 7)).boundary == 7


def test_history_is_ordered_by_range_not_by_name(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path)
    paths = [
        commit_chunk(store, 0, 4, T1),
        commit_chunk(store, 4, 8, T1 + timedelta(minutes=1)),
        commit_chunk(store, 8, 12, T1 + timedelta(minutes=2)),
    ]
    assert sorted(tmp_path.glob("recent-*.md")) == paths
    by_hand = tmp_path / "recent-20200101-000000.md"  # the earliest name, the latest range
    meta = {**front_matter(paths[2]), "covers_from": 12, "covers_to": 16, "memory_count": 16}
    write_front_matter(by_hand, meta, "# Short-term summary\n\nWritten by hand.")
    assert sorted(tmp_path.glob("recent-*.md"))[0] == by_hand
    history = store.history()
    assert [(s.covers_from, s.covers_to) for _, s in history] == [(0, 4), (4, 8), (8, 12), (12, 16)]
    assert [p for p, _ in history] == [*paths, by_hand]
    assert history[-1][1].text == "Written by hand."


def test_same_second_commits_get_numbered_names(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path)
    first = commit_chunk(store, 0, 4, T1)
    second = commit_chunk(store, 4, 8, T1)
    third = commit_chunk(store, 8, 12, T1)
    assert [first.name, second.name, third.name] == [
        "recent-20261121-101500.md",
        "recent-20261121-101500-2.md",
        "recent-20261121-101500-3.md",
    ]
    assert [p for p, _ in store.history()] == [first, second, third]


def test_a_redo_after_a_crash_before_the_commit_point_reuses_the_history_file(
    tmp_path: Path,
) -> None:
    store = SummaryStore(tmp_path)
    commit_chunk(store, 0, 4, T1)
    before = store.recent_path.read_bytes()
    crashed = commit_chunk(store, 4, 8, T1 + timedelta(minutes=1))  # steps 1 and 2 ...
    store.recent_path.write_bytes(before)  # ... but not step 3
    loaded = store.load()
    assert loaded.boundary == 4  # the compaction of [4, 8) is redone
    assert not loaded.merge_needed()  # L = [0, 4) already absorbed S = [0, 4)
    redone = store.commit(None, summary(4, 8, "Second try."), now=T1 + timedelta(minutes=2))
    assert redone == crashed
    assert len(list(tmp_path.glob("recent-*.md"))) == 2
    loaded = store.load()
    assert loaded.recent == summary(4, 8, "Second try.")
    assert loaded.longterm == summary(0, 4, "Long ago.")
    assert [(s.covers_from, s.text) for _, s in store.history()][-1] == (4, "Second try.")


def test_a_redo_of_a_different_chunk_end_replaces_the_unfinished_file(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path)
    commit_chunk(store, 0, 4, T1)
    before = store.recent_path.read_bytes()
    crashed = commit_chunk(store, 4, 8, T1 + timedelta(minutes=1))
    store.recent_path.write_bytes(before)
    assert commit_chunk(store, 4, 6, T1 + timedelta(minutes=2)) == crashed
    assert [(s.covers_from, s.covers_to) for _, s in store.history()] == [(0, 4), (4, 6)]


def test_merge_needed() -> None:
    assert not Summaries(recent=None, longterm=None).merge_needed()
    assert not Summaries(recent=None, longterm=summary(0, 4)).merge_needed()
    assert Summaries(recent=summary(0, 4), longterm=None).merge_needed()
    assert Summaries(recent=summary(4, 8), longterm=summary(0, 4)).merge_needed()
    assert not Summaries(recent=summary(4, 8), longterm=summary(0, 8)).merge_needed()


@pytest.mark.parametrize(
    ("longterm", "recent"),
    [
        (None, summary(4, 4)),
        (None, summary(5, 4)),
        (None, summary(0, 4, count=3)),
        (None, summary(0, 4, " \n ")),
        (summary(1, 4), summary(4, 8)),
        (summary(0, 3), summary(4, 8)),
        (summary(0, 5), summary(4, 8)),
    ],
)
def test_commit_rejects_ranges_that_do_not_fit(
    tmp_path: Path, longterm: Summary | None, recent: Summary
) -> None:
    store = SummaryStore(tmp_path)
    with pytest.raises(ValueError, match=r"cover|empty"):
        store.commit(longterm, recent, now=T1)
    assert list(tmp_path.iterdir()) == []


def test_commit_needs_an_aware_time(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timezone"):
        SummaryStore(tmp_path).commit(None, summary(0, 4), now=datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda t: t.replace("covers_to: 4", "covers_to: [4"), "invalid front matter"),
        (lambda t: t.replace("memory_count: 68\n", ""), "missing memory_count"),
        (lambda t: t.replace("covers_to: 4", "covers_to: four"), "covers_to must be an integer"),
        (lambda t: t.replace("covers_from: 0", "covers_from: true"), "must be an integer"),
        (lambda t: t.replace("covers_from: 0", "covers_from: 9"), "need 0 <= covers_from"),
        (lambda t: t.replace("summary_type: recent", "summary_type: longterm"), "summary_type"),
        (lambda t: t.replace("updated: '2026-11-21T10:15:00.000000Z'", "updated: 3"), "updated"),
        (lambda t: t.split("---\n", 2)[2], "missing summary_type"),
    ],
)
def test_a_corrupt_file_names_itself_and_changes_nothing(
    tmp_path: Path, edit: Callable[[str], str], problem: str
) -> None:
    store = SummaryStore(tmp_path)
    history = commit_chunk(store, 0, 4)
    original = store.recent_path.read_text()
    for path in (store.recent_path, history):
        edited = edit(original)
        assert edited != original
        path.write_text(edited)
    snapshot = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(VaultError, match=problem) as error:
        store.load()
    assert "recent.md" in str(error.value)
    assert "\n" not in str(error.value)
    with pytest.raises(VaultError, match=rf"{history.name}.*{problem}"):
        store.history()
    with pytest.raises(VaultError, match=history.name):
        commit_chunk(store, 4, 8, T1 + timedelta(seconds=1))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == snapshot


def test_longterm_must_say_it_is_longterm(tmp_path: Path) -> None:
    store = SummaryStore(tmp_path)
    commit_chunk(store, 4, 8)
    text = store.longterm_path.read_text().replace("summary_type: longterm", "summary_type: recent")
    store.longterm_path.write_text(text)
    with pytest.raises(VaultError, match=r"longterm\.md: summary_type must be 'longterm'"):
        store.load()


@settings(max_examples=25, deadline=None)
@given(
    chunks=st.lists(st.integers(1, 10), min_size=1, max_size=8),
    gaps=st.lists(st.integers(0, 1), min_size=8, max_size=8),
)
def test_history_covers_the_stream_contiguously(chunks: list[int], gaps: list[int]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = SummaryStore(Path(folder))
        start, now = 0, T1
        for size, gap in zip(chunks, gaps, strict=False):
            now += timedelta(seconds=gap)  # same-second commits too
            commit_chunk(store, start, start + size, now)
            start += size
        ranges = [(s.covers_from, s.covers_to) for _, s in store.history()]
        assert len(ranges) == len(chunks)
        assert ranges[0][0] == 0
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
        assert ranges[-1][1] == sum(chunks)
        assert store.load().boundary == sum(chunks)
