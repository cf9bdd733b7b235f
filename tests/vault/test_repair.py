"""A journal shorter than what its summaries cover (cut by hand or by a disk fault):
found at load with one error naming both files and both numbers, and ``repair`` rolls
the summaries back to what the journal holds, setting aside what it removes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import VaultError, VaultLockedError
from engine.memory.record import MemoryKind
from engine.sim.simulation import Simulation
from engine.vault.repair import plan_rollback, repair_vault
from engine.vault.summaries import Summaries, Summary

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def summary(start: int, end: int, memories: int, text: str = "") -> Summary:
    return Summary(
        text or f"what happened in {start}-{end}",
        start,
        end,
        memories,
        "2026-03-01T12:00:00.000000Z",
    )


def build(vault_dir: Path, world_file: Path, memories: int, chunks: list[int]) -> None:
    """Ada remembers ``memories`` things, and compactions commit chunks ending at each of
    ``chunks`` (merging the previous short-term summary into the long-term one)."""
    sim = Simulation.open(vault_dir, world_file)
    try:
        mind = sim.minds[sim.character("Ada").id]
        for i in range(memories):
            mind.record(MemoryKind.THOUGHT, f"thought {i}", location="hall", occupants=[])
        start = 0
        for index, end in enumerate(chunks):
            old = mind.summaries.recent
            longterm = None if old is None else summary(0, old.covers_to, memories)
            mind.store.commit(
                longterm, summary(start, end, memories), now=T0 + timedelta(minutes=index)
            )
            mind.commit(longterm, summary(start, end, memories))
            start = end
        sim.save()
    finally:
        sim.close()


def cut_journal(vault_dir: Path, lines: int) -> None:
    path = vault_dir / "agents" / "Ada" / "memories.jsonl"
    kept = path.read_text(encoding="utf-8").splitlines(keepends=True)[:lines]
    path.write_text("".join(kept), encoding="utf-8")


def summaries_dir(vault_dir: Path) -> Path:
    return vault_dir / "agents" / "Ada" / "summaries"


def front(path: Path) -> tuple[int, int]:
    import frontmatter

    meta = frontmatter.loads(path.read_text(encoding="utf-8")).metadata
    return int(meta["covers_from"]), int(meta["covers_to"])  # type: ignore[call-overload]


def state(vault_dir: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (vault_dir / "agents" / "Ada" / "memory-state.json").read_text(encoding="utf-8")
    )
    return data


# -- found at load ---------------------------------------------------------------------


def test_a_journal_shorter_than_the_summaries_is_refused_naming_both_files(
    vault_dir: Path, world_file: Path
) -> None:
    build(vault_dir, world_file, 30, [8, 16, 24])
    cut_journal(vault_dir, 20)
    with pytest.raises(VaultError) as caught:
        Simulation.open(vault_dir, world_file)
    message = str(caught.value)
    assert "\n" not in message
    assert str(vault_dir / "agents" / "Ada" / "memories.jsonl") in message
    assert str(summaries_dir(vault_dir) / "recent.md") in message
    assert "holds 20 memories" in message
    assert "up to 24" in message
    assert "mudsim repair" in message


def test_a_journal_shorter_than_the_state_file_boundary_is_refused(
    vault_dir: Path, world_file: Path
) -> None:
    """No summaries left (deleted by hand), but memory-state.json remembers a boundary
    past the journal's end."""
    build(vault_dir, world_file, 30, [8, 16, 24])
    cut_journal(vault_dir, 20)
    for path in summaries_dir(vault_dir).iterdir():
        path.unlink()
    with pytest.raises(VaultError, match=r"memory-state\.json") as caught:
        Simulation.open(vault_dir, world_file)
    assert "memories.jsonl holds 20 memories" in str(caught.value)
    assert "up to 24" in str(caught.value)


def test_fewer_memories_than_the_state_file_says_is_a_warning(
    vault_dir: Path, world_file: Path
) -> None:
    """What a power cut inside the fsync window leaves: the summaries are fine."""
    build(vault_dir, world_file, 30, [8, 16])
    cut_journal(vault_dir, 28)
    warnings: list[str] = []
    sim = Simulation.open(vault_dir, world_file, warn=warnings.append)
    try:
        assert sim.minds[sim.character("Ada").id].count == 28
        assert any("30" in w and "28" in w and "memory-state.json" in w for w in warnings), warnings
    finally:
        sim.close()


# -- repair ------------------------------------------------------------------------------


def test_repair_keeps_the_long_term_summary_when_the_journal_still_holds_it(
    vault_dir: Path, world_file: Path
) -> None:
    build(vault_dir, world_file, 30, [8, 16, 24])
    cut_journal(vault_dir, 20)
    history_before = sorted(p.name for p in summaries_dir(vault_dir).glob("recent-*.md"))
    report = repair_vault(vault_dir, "Ada", now=T0)
    text = "\n".join(report)
    assert text.startswith("Ada: the journal holds 20 memories; the summaries covered up to 24")
    assert "boundary 16" in text
    aside = vault_dir / "agents" / "Ada" / "repair-20260301-120000Z"
    assert str(aside.relative_to(vault_dir)) in text

    assert front(summaries_dir(vault_dir) / "longterm.md") == (0, 16)
    assert front(summaries_dir(vault_dir) / "recent.md") == (8, 16)
    assert (
        sorted(p.name for p in summaries_dir(vault_dir).glob("recent-*.md")) == history_before[:2]
    )
    # nothing lost: what was removed or replaced is in the repair folder
    assert front(aside / "summaries" / "recent.md") == (16, 24)
    assert (aside / "summaries" / history_before[2]).exists()
    assert json.loads((aside / "memory-state.json").read_text())["boundary"] == 24
    assert {k: state(vault_dir)[k] for k in ("memories", "boundary", "in_flight")} == {
        "memories": 20, "boundary": 16, "in_flight": False,
    }  # fmt: skip

    sim = Simulation.open(vault_dir, world_file)
    try:
        mind = sim.minds[sim.character("Ada").id]
        assert (mind.count, mind.boundary) == (20, 16)
        assert [m.text for m in mind.tail] == [f"thought {i}" for i in range(16, 20)]
        memory = mind.record(MemoryKind.THOUGHT, "after the repair", location="hall", occupants=[])
        assert memory.seq == 20
        # the next compaction commits on top of the repaired state
        mind.commit(None, summary(16, 20, 21))
        assert mind.boundary == 20
    finally:
        sim.close()


def test_repair_drops_a_long_term_summary_the_journal_no_longer_holds(
    vault_dir: Path, world_file: Path
) -> None:
    build(vault_dir, world_file, 30, [8, 16, 24])
    cut_journal(vault_dir, 12)
    report = repair_vault(vault_dir, None, now=T0)
    assert any("longterm.md" in line for line in report)
    assert not (summaries_dir(vault_dir) / "longterm.md").exists()
    assert front(summaries_dir(vault_dir) / "recent.md") == (0, 8)
    assert len(list(summaries_dir(vault_dir).glob("recent-*.md"))) == 1
    aside = vault_dir / "agents" / "Ada" / "repair-20260301-120000Z" / "summaries"
    assert front(aside / "longterm.md") == (0, 16)
    assert len(list(aside.glob("recent-*.md"))) == 2
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert sim.minds[sim.character("Ada").id].boundary == 8
    finally:
        sim.close()


def test_repair_of_a_journal_shorter_than_every_summary_starts_over(
    vault_dir: Path, world_file: Path
) -> None:
    build(vault_dir, world_file, 30, [8, 16])
    cut_journal(vault_dir, 5)
    repair_vault(vault_dir, "Ada", now=T0)
    assert list(summaries_dir(vault_dir).iterdir()) == []
    assert state(vault_dir)["boundary"] == 0
    sim = Simulation.open(vault_dir, world_file)
    try:
        assert sim.minds[sim.character("Ada").id].boundary == 0
    finally:
        sim.close()


def test_repair_of_a_sound_vault_changes_nothing(vault_dir: Path, world_file: Path) -> None:
    build(vault_dir, world_file, 30, [8, 16])
    before = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    report = repair_vault(vault_dir, None, now=T0)
    after = {p: p.read_bytes() for p in vault_dir.rglob("*") if p.is_file() and p.name != ".lock"}
    assert after == before
    assert len(report) == 5
    assert all("nothing to repair" in line for line in report), report


def test_repair_takes_the_lock(vault_dir: Path, world_file: Path) -> None:
    build(vault_dir, world_file, 10, [])
    sim = Simulation.open(vault_dir, world_file)
    try:
        with pytest.raises(VaultLockedError):
            repair_vault(vault_dir, None, now=T0)
    finally:
        sim.close()


def test_repair_of_an_unseeded_vault_is_an_error(vault_dir: Path) -> None:
    with pytest.raises(VaultError, match="no world"):
        repair_vault(vault_dir, None, now=T0)


# -- the plan, as pure logic --------------------------------------------------------------


@st.composite
def committed(draw: st.DrawFn) -> tuple[Summaries, list[tuple[Path, Summary]]]:
    """The summaries and history files that a run of compactions leaves."""
    sizes = draw(st.lists(st.integers(1, 9), max_size=6))
    history: list[tuple[Path, Summary]] = []
    longterm: Summary | None = None
    recent: Summary | None = None
    start = 0
    for index, size in enumerate(sizes):
        if recent is not None:
            longterm = summary(0, recent.covers_to, start + size)
        recent = summary(start, start + size, start + size)
        history.append((Path(f"recent-{index:03d}.md"), recent))
        start += size
    crashed_after_longterm = recent is not None and draw(st.booleans())
    if crashed_after_longterm and recent is not None:
        longterm = summary(0, recent.covers_to, recent.covers_to)
    return Summaries(recent=recent, longterm=longterm), history


@given(committed(), st.integers(0, 60))
def test_a_rollback_leaves_summaries_within_the_journal(
    found: tuple[Summaries, list[tuple[Path, Summary]]], memories: int
) -> None:
    summaries, history = found
    plan = plan_rollback(memories, summaries, history)
    covered = max([s.covers_to for s in (summaries.recent, summaries.longterm) if s], default=0)
    if covered <= memories:
        assert plan is None
        return
    assert plan is not None
    by_path = dict(history)
    recent = None if plan.recent_from is None else by_path[plan.recent_from]
    longterm = None if plan.drop_longterm else summaries.longterm
    after = Summaries(recent=recent, longterm=longterm)
    assert after.boundary == plan.boundary <= memories
    if recent is not None:  # L covers [0, S.from) (or already absorbed S)
        start = 0 if longterm is None else longterm.covers_to
        assert recent.covers_from == start or (longterm is not None and start == recent.covers_to)
    # the history files kept all end at or before the boundary; the others are set aside
    kept = [path for path, _ in history if path not in plan.set_aside]
    assert all(by_path[path].covers_to <= plan.boundary for path in kept)
    assert all(by_path[path].covers_to > plan.boundary for path in plan.set_aside)
    # as far back as needed, no further: a long-term summary the journal holds is kept
    if summaries.longterm is not None and summaries.longterm.covers_to <= memories:
        assert not plan.drop_longterm
        assert plan.boundary == summaries.longterm.covers_to
