"""The pure rules that keep a knowledge bank honest (issue 30): capacity counts what a
prompt shows, not the audit trail; no entry passes the cap; a prompt shows no more
entries than a reply may answer, and a bank of thousands is consolidated against each
candidate's nearest entries; HEAVY_CUT never grows the bank; a pass's changes replayed
on a bank an undo has changed never bring back what was undone."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.memory.knowledge import CONTENT_MAX, Earlier, Entry, Source, Stamp, cut_content
from engine.memory.knowledge_grammar import CANDIDATES_MAX, OPERATIONS_MAX
from engine.memory.knowledge_guards import no_growth
from engine.memory.knowledge_ops import (
    Add,
    Candidate,
    ParsedOperations,
    Update,
    apply_operations,
    capacity,
    shown_entries,
    shown_json,
)
from engine.memory.knowledge_prompts import consolidation_prompt
from engine.vault.knowledge_log import rebase

NOW = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00.000000Z")
LATER = Stamp(sim="2026-01-02T08:00", at="2026-01-02T08:00:00.000000Z")


def entry(n: int, content: str, tags: tuple[str, ...] = ()) -> Entry:
    return Entry(id=f"ltm-{n}-a{n}", type="fact", content=content, tags=list(tags),
                 created=NOW, updated=NOW)  # fmt: skip


def fresh(taken: set[str]) -> str:
    return f"ltm-{1000 + len(taken)}-new"


def apply(bank: list[Entry], ops: list[Add | Update], candidates: list[Candidate],
          add_unnamed: bool = True) -> list[Entry]:  # fmt: skip
    applied = apply_operations(bank, ParsedOperations(operations=ops), candidates, pass_id="p",
                               now=LATER, source=Source(), new_id=fresh, add_unnamed=add_unnamed)  # fmt: skip
    return applied.bank


# -- capacity ----------------------------------------------------------------------------


def test_the_audit_trail_does_not_fill_the_bank() -> None:
    bank = [
        entry(n, f"The mill's room {n} holds {n} sacks of flour.", ("mill",)) for n in range(20)
    ]
    worn = [
        e.model_copy(
            update={
                "access_count": 40,
                "history": [
                    Earlier(
                        content=f"{e.content} (draft {k}) " * 4,
                        tags=["mill"],
                        until=NOW,
                        by_pass=f"pass-{k}",
                    )
                    for k in range(5)
                ],
            }
        )
        for e in bank
    ]
    assert capacity(shown_json(worn), 2000) == capacity(shown_json(bank), 2000)
    assert capacity(shown_json(bank), 2000).tier == "GENEROUS"


# -- the cap -----------------------------------------------------------------------------


@given(st.text(min_size=0, max_size=3000), st.integers(min_value=20, max_value=600))
def test_a_cut_content_fits_and_keeps_the_start(text: str, limit: int) -> None:
    cut = cut_content(text, limit)
    whole = " ".join(text.split())
    assert len(cut) <= limit
    if len(whole) <= limit:
        assert cut == whole
    else:
        assert whole.startswith(cut.removesuffix("…").rstrip(" ,;:-"))


def test_a_long_entry_is_cut_at_a_sentence_and_a_long_sentence_at_a_word() -> None:
    text = "The yard well is dry. " * 50
    assert cut_content(text).endswith("The yard well is dry.")
    words = "flour " * 200
    cut = cut_content(words)
    assert cut.endswith("flour…")
    assert len(cut) <= CONTENT_MAX


def test_an_update_and_an_add_are_cut_and_an_old_long_entry_too() -> None:
    huge = "Bo keeps the mill's ledger in the loft. " * 100
    bank = [entry(1, huge), entry(2, "The river runs clean.")]
    candidates = [Candidate(type="fact", content=huge, tags=[])]
    applied = apply_operations(bank, ParsedOperations(operations=[
        Update(id="ltm-2-a2", content=huge), Add(candidate=0, content="Wren " + huge)]),
        candidates, pass_id="p", now=LATER, source=Source(), new_id=fresh)  # fmt: skip
    assert all(len(e.content) <= CONTENT_MAX for e in applied.bank)
    assert {c.id: c.cut_from for c in applied.changes} == {
        "ltm-1-a1": len(huge), "ltm-2-a2": len(huge), "ltm-1002-new": len(huge) + 5,
    }  # fmt: skip


# -- what a prompt shows -------------------------------------------------------------------


def test_a_prompt_never_shows_more_entries_than_its_reply_may_answer() -> None:
    bank = [entry(n, f"Note {n} about the mill.") for n in range(1, 61)]
    candidates = [Candidate(type="fact", content=f"Candidate {k}.", tags=[]) for k in range(3)]
    shown, left_out = shown_entries(bank, candidates, 100_000, OPERATIONS_MAX - 3)
    assert len(shown) == OPERATIONS_MAX - 3
    assert left_out == 60 - len(shown)


def test_two_thousand_entries_consolidate_against_each_candidates_nearest_in_a_bounded_prompt() -> (
    None
):
    topics = ["well", "mill", "river", "forge", "bakery", "orchard", "bridge", "tower"]
    bank = [
        entry(
            n, f"The {topics[n % 8]} near house {n} was checked on day {n % 97}.", (topics[n % 8],)
        )
        for n in range(1, 2001)
    ]
    bank[1233] = entry(1234, "Old Wren hides the tower key under the blue stone.", ("tower",))
    bank[77] = entry(78, "The baker sells rye bread only on market days.", ("bakery",))
    candidates = [
        Candidate(
            type="fact", content="Wren hides the tower key under a blue stone.", tags=["tower"]
        ),
        Candidate(type="fact", content="Rye bread is sold on market days by the baker.", tags=[]),
        *(
            Candidate(type="fact", content=f"Something else {k}.", tags=[])
            for k in range(CANDIDATES_MAX - 2)
        ),
    ]
    budget = 12_000
    shown, left_out = shown_entries(bank, candidates, budget, OPERATIONS_MAX - len(candidates))
    ids = [e.id for _, e in shown]
    assert "ltm-1234-a1234" in ids
    assert "ltm-78-a78" in ids
    assert len(shown) <= OPERATIONS_MAX - len(candidates)
    prompt = consolidation_prompt(
        "Ada", capacity(shown_json(bank), 8192), shown, left_out, candidates
    )
    assert len(prompt) < budget + 6_000  # instructions and candidates beside the entries
    assert len(prompt) // 3 < 8192 - 1200  # under num_ctx less the reply, at 3 chars a token


# -- tiers -----------------------------------------------------------------------------------


def test_without_add_unnamed_a_candidate_the_reply_does_not_name_is_not_added() -> None:
    bank = [entry(1, "The well is dry.")]
    candidates = [Candidate(type="fact", content="The well is dry since May.", tags=[])]
    merged = Update(id="ltm-1-a1", content="The well is dry since May.")
    assert len(apply(bank, [merged], candidates, add_unnamed=True)) == 1  # consolidated away
    assert len(apply(bank, [], candidates, add_unnamed=True)) == 2
    assert len(apply(bank, [], candidates, add_unnamed=False)) == 1


@given(st.integers(min_value=0, max_value=8), st.integers(min_value=0, max_value=8))
def test_no_growth_takes_back_the_newest_adds_only(start: int, adds: int) -> None:
    bank = [entry(n, f"Old entry {n}.") for n in range(1, start + 1)]
    candidates = [Candidate(type="fact", content=f"New entry {k}.", tags=[]) for k in range(adds)]
    applied = apply_operations(bank, ParsedOperations(operations=[]), candidates, pass_id="p",
                               now=LATER, source=Source(), new_id=fresh)  # fmt: skip
    kept = no_growth(applied, start)
    assert len(kept.bank) <= max(start, 0) or adds == 0
    assert kept.bank[:start] == bank  # nothing old removed
    assert [c.id for c in kept.changes] == [c.id for c in applied.changes][: len(kept.changes)]
    assert len(kept.skipped) == len(applied.changes) - len(kept.changes)


# -- a pass's changes on a bank an undo changed ------------------------------------------


@given(st.lists(st.booleans(), min_size=1, max_size=6))
def test_a_rebased_pass_never_brings_back_an_undone_entry(undone: list[bool]) -> None:
    loaded = [entry(n, f"Entry {n}.") for n in range(1, len(undone) + 1)]
    candidates = [Candidate(type="fact", content="A new fact.", tags=[])]
    ops = [Update(id=e.id, content=f"{e.content} Checked.") for e in loaded]
    applied = apply_operations(loaded, ParsedOperations(operations=[*ops, Add(candidate=0)]),
                               candidates, pass_id="p", now=LATER, source=Source(), new_id=fresh)  # fmt: skip
    now = [e for e, gone in zip(loaded, undone, strict=True) if not gone]  # an undo meanwhile
    bank, changes = rebase(now, applied.changes)
    ids = {e.id for e in bank}
    assert all(e.id not in ids for e, gone in zip(loaded, undone, strict=True) if gone)
    assert "A new fact." in [e.content for e in bank]
    assert len(changes) == len(now) + 1
    assert rebase(loaded, applied.changes)[0] == applied.bank  # nothing changed: the same bank
