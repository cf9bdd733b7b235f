"""The crash harness at small scale (``scripts/crashtest.py``), and its vault checks.

The slow test kills a headless run 6 times (each named crash point once, twice at
random) and needs nothing lost and every vault loadable. The fast tests show the
checks catch what they are for, on vaults broken by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from harness_common import (  # noqa: E402
    JournalSnapshot,
    check_journal,
    check_summaries,
    lost_records,
)

POINTS = ("journal-mid-line", "summary-after-history", "summary-after-longterm", "world-save-mid")


def _summary(path: Path, start: int, end: int, kind: str = "recent") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nsummary_type: {kind}\ncovers_from: {start}\ncovers_to: {end}\n"
        f"memory_count: {end}\nupdated: '2026-01-01T00:00:00.000000Z'\n---\n# S\n\nI was.\n",
        encoding="utf-8",
    )


def _committed(agent: Path, *ranges: tuple[int, int]) -> None:
    """History files for ``ranges`` and the recent.md/longterm.md they end in."""
    for number, (start, end) in enumerate(ranges):
        _summary(agent / "summaries" / f"recent-20260101-00000{number}.md", start, end)
    start, end = ranges[-1]
    _summary(agent / "summaries" / "recent.md", start, end)
    if start:
        _summary(agent / "summaries" / "longterm.md", 0, start, "longterm")


def test_agreeing_summaries_pass(tmp_path: Path) -> None:
    _committed(tmp_path, (0, 4), (4, 8), (8, 12))
    check = check_summaries(tmp_path, 20, settled=True)
    assert check.problems == []
    assert (check.boundary, check.committed, check.pending) == (12, 3, 0)


def test_a_range_committed_twice_is_named(tmp_path: Path) -> None:
    _committed(tmp_path, (0, 4), (4, 8))
    _summary(tmp_path / "summaries" / "recent-20260101-000009.md", 4, 8)
    problems = check_summaries(tmp_path, 20, settled=True).problems
    assert any("range [4, 8) has 2 history files" in p and "000009" in p for p in problems)


def test_a_gap_in_the_history_is_named(tmp_path: Path) -> None:
    _committed(tmp_path, (0, 4), (8, 12))
    problems = check_summaries(tmp_path, 20, settled=True).problems
    assert any("range [8, 12) comes after a gap from 4" in p for p in problems)


def test_a_half_done_commit_passes_until_the_run_settles(tmp_path: Path) -> None:
    """A kill after the history file and longterm.md, before recent.md (the commit point)."""
    _committed(tmp_path, (0, 4), (4, 8))
    _summary(tmp_path / "summaries" / "recent-20260101-000005.md", 8, 12)
    _summary(tmp_path / "summaries" / "longterm.md", 0, 8, "longterm")
    assert check_summaries(tmp_path, 20, settled=False).problems == []
    problems = check_summaries(tmp_path, 20, settled=True).problems
    assert any("history beyond the boundary 8" in p for p in problems)
    assert any("longterm.md covers [0, 8) but recent.md covers [4, 8)" in p for p in problems)


def test_a_boundary_past_the_journal_is_named(tmp_path: Path) -> None:
    _committed(tmp_path, (0, 4), (4, 8))
    problems = check_summaries(tmp_path, 6, settled=True).problems
    assert any("boundary 8 is past the journal's 6 records" in p for p in problems)


def test_journal_checks_name_a_reused_seq_and_a_lost_record(tmp_path: Path) -> None:
    path = tmp_path / "memories.jsonl"
    path.write_bytes(b'{"seq": 0}\n{"seq": 1}\n{"seq": 2, "te')
    before = JournalSnapshot.read(path)
    assert (len(before.lines), before.torn_tail) == (2, 14)
    assert check_journal(path, before) == []
    path.write_bytes(b'{"seq": 0}\n{"seq": 0}\n')
    after = JournalSnapshot.read(path)
    assert check_journal(path, after) == [f"{path}, line 2: seq 0, expected 1 (not contiguous)"]
    assert lost_records(path, before, after) == [
        f"{path}: record seq 1 changed: b'{{\"seq\": 1}}' -> b'{{\"seq\": 0}}'"
    ]
    path.write_bytes(b'{"seq": 0}\n')
    assert lost_records(path, before, JournalSnapshot.read(path)) == [
        f"{path}: record seq 1 is gone (the journal ends at 1)"
    ]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_six_kills_lose_nothing_and_every_vault_loads(tmp_path: Path) -> None:
    report_path = tmp_path / "crash.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "crashtest.py"), "--kills", "6", "--seed", "3",
         "--report", str(report_path)],
        capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["losses"] == 0, report["loss_details"]
    assert report["unloadable_vaults"] == 0, report["unloadable_details"]
    assert report["kills_done"] == 6
    assert all(report["kills_by_point"][point] >= 1 for point in POINTS), report["kills_by_point"]
    assert report["problems"] == []
    assert report["passed"]
    assert done.returncode == 0, done.stdout[-2000:]
    assert "PASS" in done.stdout
