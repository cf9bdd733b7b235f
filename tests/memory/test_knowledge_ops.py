"""Reading a knowledge pass's replies and applying them to the bank."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.json_reply import ReplyUnparseable, parse_json_reply
from engine.memory.knowledge import Earlier, Entry, Source, Stamp, new_entry_id
from engine.memory.knowledge_candidates import PROMPT_EXAMPLES
from engine.memory.knowledge_ops import (
    Add,
    Candidate,
    Delete,
    Keep,
    ParsedOperations,
    Skip,
    Update,
    add_all,
    apply_operations,
    candidate_line,
    candidates_from_reply,
    capacity,
    entry_line,
    parse_candidates,
    parse_operations,
    shown_entries,
)

THEN = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00Z")
NOW = Stamp(sim="2026-01-03T14:20", at="2026-01-05T10:00:00Z")
PASS = "20260105-100000"
SOURCE = Source(memories=[(10, 25)], notes=["Moss"], passes=[])


def entry(n: int, content: str, **fields: Any) -> Entry:
    return Entry(
        id=f"ltm-{n}-abc", type="fact", content=content, created=THEN, updated=THEN, **fields
    )


def fresh(taken: set[str]) -> str:
    return new_entry_id(taken, token="new")


def apply(bank: list[Entry], parsed: ParsedOperations, candidates: list[Candidate]) -> Any:
    return apply_operations(
        bank, parsed, candidates, pass_id=PASS, now=NOW, source=SOURCE, new_id=fresh
    )


def ops(*operations: Any) -> ParsedOperations:
    return ParsedOperations(operations=list(operations))


# --- candidates ----------------------------------------------------------------------


def test_candidates_are_read_from_a_list_or_an_object_holding_one() -> None:
    item = {"type": "fact", "content": "Moss keeps the ledger.", "tags": ["moss"]}
    expected = [Candidate(type="fact", content="Moss keeps the ledger.", tags=["moss"])]
    assert parse_candidates([item]) == expected
    assert parse_candidates({"memories": [item]}) == expected
    assert parse_candidates({"candidates": [item]}) == expected
    assert parse_candidates({"other": [item]}) == []
    assert parse_candidates("a string") == []


def test_invalid_candidates_are_dropped_and_the_rest_cleaned() -> None:
    found = parse_candidates(
        [
            "not an object",
            {"type": "rumour", "content": "An unknown type."},
            {"type": "fact", "content": "   "},
            {"type": "fact"},
            {"type": "fact", "content": "..."},  # copied from the prompt's example
            {"type": 3, "content": "A type that is not a string."},
            {
                "type": " Mistake ",
                "content": "Do not\n  go west  from the Hall.",
                "tags": ["Hall", " hall ", "", "<tag>", 7, True, None, "Exits"],
            },
            {"type": "FACT", "content": "Tags in one string.", "tags": "Moss, Ledger"},
            {"type": "skill", "content": "No tags at all."},
        ]
    )
    assert found == [
        Candidate(
            type="mistake", content="Do not go west from the Hall.", tags=["hall", "7", "exits"]
        ),
        Candidate(type="fact", content="Tags in one string.", tags=["moss", "ledger"]),
        Candidate(type="skill", content="No tags at all.", tags=[]),
    ]


def test_a_copy_of_the_prompts_example_is_not_taken_for_knowledge() -> None:
    copied = [{"type": kind, "content": f" {text.upper()} ", "tags": ["x"]}
              for kind, text in PROMPT_EXAMPLES.items()]  # fmt: skip
    assert parse_candidates(copied) == []
    shown = {1: "ltm-1-a"}
    update = {"action": "UPDATE", "id": 1, "content": PROMPT_EXAMPLES["fact"]}
    assert parse_operations([update], shown, 0).operations == [Keep(id="ltm-1-a")]


def test_a_candidate_made_directly_has_its_tags_cleaned_too() -> None:
    assert Candidate(type="fact", content="x", tags=["A", "a", " B "]).tags == ["a", "b"]


def test_candidates_from_a_reply_read_through_its_wrapping() -> None:
    reply = (
        'Here you go:\n```json\n[{"type": "fact", "content": "Moss is old.", "tags": [],},]\n```'
    )
    assert candidates_from_reply(reply) == [Candidate(type="fact", content="Moss is old.")]
    assert candidates_from_reply("[]") == []
    with pytest.raises(ReplyUnparseable):
        candidates_from_reply("I found nothing worth keeping.")


# --- operations ----------------------------------------------------------------------

SHOWN = {1: "ltm-7-aaa", 2: "ltm-3-bbb", 3: "ltm-9-ccc"}


def test_numbers_are_mapped_back_to_ids_in_any_form() -> None:
    parsed = parse_operations(
        {
            "operations": [
                {"action": "KEEP", "id": 1},
                {"action": "keep", "id": "2"},
                {"action": " Delete ", "id": "[3]"},
            ]
        },
        SHOWN,
        0,
    )
    assert parsed.operations == [Keep(id="ltm-7-aaa"), Keep(id="ltm-3-bbb"), Delete(id="ltm-9-ccc")]
    assert parsed.ignored == []


def test_unknown_numbers_and_candidates_are_ignored_with_a_reason() -> None:
    parsed = parse_operations(
        [
            {"action": "DELETE", "id": 4},
            {"action": "UPDATE", "id": "ltm-1-zzz", "content": "x"},
            {"action": "KEEP", "id": True},
            {"action": "KEEP"},
            {"action": "SKIP", "candidate": 2},
            {"action": "ADD", "candidateIndex": -1, "type": "fact", "content": "x"},
            {"action": "SKIP"},
            {"action": "ADD", "content": "no type"},
            {"action": "MERGE", "id": 1},
            "DELETE 1",
        ],
        SHOWN,
        2,
    )
    assert parsed.operations == []
    assert len(parsed.ignored) == 10
    assert "unknown entry 4" in parsed.ignored[0]
    assert "unknown candidate 2" in parsed.ignored[4]
    assert "unknown action 'MERGE'" in parsed.ignored[8]
    assert all("\n" not in why for why in parsed.ignored)


def test_a_real_id_written_instead_of_its_number_is_accepted() -> None:
    parsed = parse_operations([{"action": "DELETE", "id": "ltm-3-bbb"}], SHOWN, 0)
    assert parsed.operations == [Delete(id="ltm-3-bbb")]


def test_add_and_skip_name_candidates_in_either_spelling() -> None:
    parsed = parse_operations(
        [
            {"action": "ADD", "candidate": 0},
            {
                "action": "add",
                "candidateIndex": "1",
                "type": "Fact",
                "content": " Merged. ",
                "tags": ["A"],
            },
            {"action": "SKIP", "candidate_index": "[candidate 2]"},
            {"action": "ADD", "type": "skill", "content": "New, from no candidate."},
        ],
        SHOWN,
        3,
    )
    assert parsed.operations == [
        Add(candidate=0),
        Add(candidate=1, type="fact", content="Merged.", tags=["a"]),
        Skip(candidate=2),
        Add(type="skill", content="New, from no candidate."),
    ]


def test_an_update_keeps_what_it_leaves_out_and_one_changing_nothing_is_a_keep() -> None:
    parsed = parse_operations(
        [
            {"action": "UPDATE", "id": 1, "tags": ["Moss"]},
            {"action": "UPDATE", "id": 2, "content": "New.", "tags": []},
            {"action": "UPDATE", "id": 3, "content": "<the whole new text>", "tags": ["<tag>"]},
        ],
        SHOWN,
        0,
    )
    assert parsed.operations == [
        Update(id="ltm-7-aaa", tags=["moss"]),
        Update(id="ltm-3-bbb", content="New."),
        Keep(id="ltm-9-ccc"),
    ]


def test_the_first_operation_on_an_entry_or_candidate_wins() -> None:
    parsed = parse_operations(
        [
            {"action": "DELETE", "id": 1},
            {"action": "KEEP", "id": "1"},
            {"action": "SKIP", "candidate": 0},
            {"action": "ADD", "candidate": 0},
        ],
        SHOWN,
        1,
    )
    assert parsed.operations == [Delete(id="ltm-7-aaa"), Skip(candidate=0)]
    assert ["already decided" in why for why in parsed.ignored] == [True, True]


def test_replies_of_other_shapes() -> None:
    single = parse_operations({"action": "KEEP", "id": 1}, SHOWN, 0)
    assert single.operations == [Keep(id="ltm-7-aaa")]
    others: list[Any] = ["text", 3, {"ops": []}, None]
    for value in others:
        parsed = parse_operations(value, SHOWN, 0)
        assert parsed.operations == []
        assert parsed.ignored == ["the reply holds no list of operations"]


# --- capacity --------------------------------------------------------------------------


@pytest.mark.parametrize(("chars", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (4001, 1001)])
def test_tokens_are_the_characters_over_four_rounded_up(chars: int, tokens: int) -> None:
    assert capacity("x" * chars, 1000).tokens == tokens


@pytest.mark.parametrize(
    ("tokens", "tier"),
    [
        (0, "GENEROUS"),
        (299, "GENEROUS"),
        (300, "SELECTIVE"),
        (499, "SELECTIVE"),
        (500, "HEAVY_CUT"),
        (2000, "HEAVY_CUT"),
    ],
)
def test_tiers_begin_exactly_at_30_and_50_percent(tokens: int, tier: str) -> None:
    measured = capacity("x" * (tokens * 4), 1000)
    assert (measured.tier, measured.percent, measured.context_tokens) == (tier, tokens / 10, 1000)


def test_tiers_at_the_boundary_with_a_capacity_that_does_not_divide_evenly() -> None:
    assert capacity("x" * 4 * 30, 100).tier == "SELECTIVE"  # 30 of 100 tokens
    assert capacity("x" * 4 * 3, 7).tier == "SELECTIVE"  # 42.9%
    assert capacity("x" * 4 * 2, 7).tier == "GENEROUS"  # 28.6%
    assert capacity("x" * (4 * 1_000_000 - 3), 3_333_334).tier == "GENEROUS"  # just under


@pytest.mark.parametrize("context", [None, 0, -5])
def test_an_unknown_capacity_is_generous(context: int | None) -> None:
    measured = capacity("x" * 10**6, context)
    assert (measured.tier, measured.percent, measured.tokens) == ("GENEROUS", None, 250_000)


# --- the prompt's view of the bank -------------------------------------------------------


def test_entry_and_candidate_lines() -> None:
    moss = entry(1, "Moss keeps\nthe ledger.", tags=["moss", "ledger"], access_count=2)
    assert (
        entry_line(4, moss)
        == "- [4] (fact, 2 accesses) Moss keeps the ledger. [tags: moss, ledger]"
    )
    once = entry(2, "Once.", access_count=1)
    assert entry_line(1, once) == "- [1] (fact, 1 access) Once."
    tip = Candidate(type="mistake", content="Look first.", tags=["exits"])
    assert candidate_line(0, tip) == "- [candidate 0] (mistake) Look first. [tags: exits]"


def test_a_bank_that_fits_is_shown_whole_in_its_order() -> None:
    bank = [entry(n, f"Fact number {n}.") for n in range(1, 6)]
    size = sum(len(entry_line(k, e)) + 1 for k, e in enumerate(bank, 1))
    assert shown_entries(bank, [], size) == (list(enumerate(bank, 1)), 0)
    shown, left_out = shown_entries(bank, [], size - 1)
    assert left_out == 1
    assert len(shown) == 4


def test_a_big_bank_shows_the_entries_most_like_the_candidates_first() -> None:
    bank = [
        entry(n, f"The weather on day {n} was mild and grey.", tags=["weather"])
        for n in range(1, 41)
    ]
    ledger = entry(41, "Moss keeps the ledger in the library.", tags=["moss", "ledger"])
    bank.insert(17, ledger)
    candidates = [Candidate(type="fact", content="The ledger is in the library.", tags=["ledger"])]
    budget = 600
    shown, left_out = shown_entries(bank, candidates, budget)
    assert shown[0] == (1, ledger)
    assert [k for k, _ in shown] == list(range(1, len(shown) + 1))
    assert left_out == len(bank) - len(shown) > 0
    assert sum(len(entry_line(k, e)) + 1 for k, e in shown) <= budget
    assert all(e in bank for _, e in shown)  # whole entries, never cut


def test_an_entry_too_long_for_the_budget_is_left_out_not_cut() -> None:
    long = entry(1, "word " * 200)
    short = entry(2, "Short.")
    shown, left_out = shown_entries([long, short], [], 100)
    assert shown == [(1, short)]
    assert left_out == 1
    assert shown_entries([long, short], [], 0) == ([], 2)


# --- applying ----------------------------------------------------------------------------

MOSS = entry(
    1,
    "Moss is the librarian.",
    tags=["moss"],
    source=Source(memories=[(0, 10)], notes=["Moss"], passes=["20260101-080000"]),
)
HALL = entry(2, "The Hall has three exits.", tags=["hall"], access_count=4)
MILL = entry(3, "The mill is closed.", tags=["mill"])
LEDGER = Candidate(type="fact", content="Moss keeps the ledger in the library.", tags=["moss"])
WEST = Candidate(type="mistake", content="Do not go west from the Hall: no exit.", tags=["hall"])


def test_the_seeds_operations_are_applied_as_returned() -> None:
    bank = [MOSS, HALL, MILL]
    parsed = ops(
        Keep(id=HALL.id),
        Update(
            id=MOSS.id, content="Moss, the librarian, keeps the ledger.", tags=["Moss", "Ledger"]
        ),
        Delete(id=MILL.id),
        Add(candidate=1, type="mistake", content="Going west from the Hall fails.", tags=["hall"]),
        Skip(candidate=0),
    )
    applied = apply(bank, parsed, [LEDGER, WEST])
    moss, hall, added = applied.bank
    assert hall == HALL
    assert moss.content == "Moss, the librarian, keeps the ledger."
    assert moss.tags == ["moss", "ledger"]
    assert (moss.created, moss.updated, moss.id) == (THEN, NOW, MOSS.id)
    assert moss.history == [
        Earlier(content="Moss is the librarian.", tags=["moss"], until=NOW, by_pass=PASS)
    ]
    assert moss.source == Source(
        memories=[(0, 10), (10, 25)], notes=["Moss"], passes=["20260101-080000", PASS]
    )
    assert (added.type, added.content, added.tags) == (
        "mistake",
        "Going west from the Hall fails.",
        ["hall"],
    )
    assert (added.created, added.updated, added.id) == (NOW, NOW, "ltm-4-new")
    assert added.source == Source(memories=[(10, 25)], notes=["Moss"], passes=[PASS])
    assert [(c.op, c.id, c.candidate) for c in applied.changes] == [
        ("UPDATE", MOSS.id, None),
        ("DELETE", MILL.id, None),
        ("ADD", "ltm-4-new", 1),
    ]
    assert applied.changes[1].before == MILL
    assert applied.changes[1].after is None
    assert applied.skipped == []


def test_an_add_of_a_candidate_as_it_is_takes_the_candidates_fields() -> None:
    applied = apply([], ops(Add(candidate=1), Skip(candidate=0)), [LEDGER, WEST])
    (added,) = applied.bank
    assert (added.type, added.content, added.tags) == (WEST.type, WEST.content, WEST.tags)


def test_an_update_of_tags_alone_keeps_the_content_and_one_to_the_same_is_no_change() -> None:
    applied = apply(
        [MOSS, HALL],
        ops(Update(id=MOSS.id, tags=["keeper"]), Update(id=HALL.id, content=HALL.content)),
        [],
    )
    assert applied.bank[0].content == MOSS.content
    assert applied.bank[0].tags == ["keeper"]
    assert applied.bank[1] == HALL
    assert [c.op for c in applied.changes] == ["UPDATE"]


def test_candidates_no_operation_names_are_added() -> None:
    applied = apply([MOSS], ops(Keep(id=MOSS.id)), [LEDGER, WEST])
    assert [e.content for e in applied.bank] == [MOSS.content, LEDGER.content, WEST.content]
    assert [(c.op, c.candidate) for c in applied.changes] == [("ADD", 0), ("ADD", 1)]


def test_exact_duplicates_are_not_added_twice() -> None:
    same = Candidate(type="fact", content="  moss IS the\nlibrarian. ", tags=[])
    twice = Candidate(type="fact", content="A new fact.")
    again = Candidate(type="skill", content="a NEW fact.")
    applied = apply(
        [MOSS], ops(Add(type="fact", content="Moss is the librarian.")), [same, twice, again]
    )
    assert [e.content for e in applied.bank] == [MOSS.content, "A new fact."]
    assert len(applied.skipped) == 3
    assert "repeats ltm-1-abc" in applied.skipped[0]


def test_only_the_first_operation_on_an_entry_counts() -> None:
    applied = apply([MOSS], ops(Delete(id=MOSS.id), Update(id=MOSS.id, content="Back.")), [])
    assert applied.bank == []
    applied = apply([MOSS], ops(Keep(id=MOSS.id), Delete(id=MOSS.id)), [])
    assert applied.bank == [MOSS]
    assert applied.changes == []


def test_the_bank_given_is_not_changed() -> None:
    bank = [MOSS, HALL, MILL]
    dumped = json.dumps([e.model_dump(mode="json") for e in bank])
    apply(bank, ops(Update(id=MOSS.id, content="Changed."), Delete(id=HALL.id)), [LEDGER])
    assert json.dumps([e.model_dump(mode="json") for e in bank]) == dumped
    assert len(bank) == 3


def test_a_new_id_already_taken_is_asked_for_again() -> None:
    given = iter(["ltm-1-abc", "ltm-2-abc", "ltm-9-zz"])
    applied = apply_operations(
        [MOSS, HALL],
        ops(),
        [LEDGER],
        pass_id=PASS,
        now=NOW,
        source=SOURCE,
        new_id=lambda _: next(given),
    )
    assert applied.bank[-1].id == "ltm-9-zz"
    with pytest.raises(ValueError, match="already taken"):
        apply_operations(
            [MOSS], ops(), [LEDGER], pass_id=PASS, now=NOW, source=SOURCE, new_id=lambda _: MOSS.id
        )


def test_a_garbage_consolidation_reply_falls_back_to_adding_every_candidate() -> None:
    bank = [MOSS]
    with pytest.raises(ReplyUnparseable):
        parse_json_reply("I am sorry, I cannot compare memories.")
    copy = Candidate(type="fact", content="MOSS is the librarian.")
    applied = add_all(
        bank, [LEDGER, WEST, copy, LEDGER], pass_id=PASS, now=NOW, source=Source(), new_id=fresh
    )
    assert [e.content for e in applied.bank] == [MOSS.content, LEDGER.content, WEST.content]
    assert [(c.op, c.candidate) for c in applied.changes] == [("ADD", 0), ("ADD", 1)]
    assert all(e.source == Source(passes=[PASS]) for e in applied.bank[1:])  # no notes at all


def test_a_reply_parsed_and_applied_end_to_end() -> None:
    bank = [MOSS, HALL, MILL]
    shown, _ = shown_entries(bank, [LEDGER], 10_000)
    reply = (
        '```json\n{"operations": [{"action": "UPDATE", "id": 1, "content": "Moss keeps the'
        ' ledger.", "tags": ["moss"]}, {"action": "DELETE", "id": "3"}, {"action": "DELETE",'
        ' "id": 7}, {"action": "SKIP", "candidateIndex": 0},]}\n```'
    )
    parsed = parse_operations(parse_json_reply(reply), {k: e.id for k, e in shown}, 1)
    assert parsed.ignored == ["operation 2: DELETE of an unknown entry 7"]
    applied = apply(bank, parsed, [LEDGER])
    assert [e.content for e in applied.bank] == ["Moss keeps the ledger.", HALL.content]


# --- properties ----------------------------------------------------------------------------

_WORDS = st.sampled_from(["moss", "ledger", "hall", "mill", "west", "bread", "Moss", "MILL"])
_TEXT = st.lists(_WORDS, min_size=1, max_size=4).map(" ".join)
_KINDS = st.sampled_from(["fact", "skill", "mistake", "Fact", "rumour"])


@st.composite
def _banks(draw: st.DrawFn) -> list[Entry]:
    numbers = draw(st.lists(st.integers(1, 60), unique=True, min_size=1, max_size=8))
    return [
        entry(n, draw(_TEXT), tags=draw(st.lists(_WORDS, max_size=3)), access_count=n % 3)
        for n in numbers
    ]


_CANDIDATES = st.lists(
    st.builds(
        Candidate,
        type=st.sampled_from(["fact", "skill", "mistake"]),
        content=_TEXT,
        tags=st.lists(_WORDS, max_size=3),
    ),
    max_size=5,
)


@st.composite
def _raw_operation(draw: st.DrawFn) -> dict[str, Any]:
    action = draw(st.sampled_from(["KEEP", "UPDATE", "DELETE", "ADD", "SKIP", "keep", "drop"]))
    op: dict[str, Any] = {"action": action}
    naming = action.upper() in ("KEEP", "UPDATE", "DELETE")
    if draw(st.integers(0, 9)) < (9 if naming else 1):  # mostly what the action needs
        number = draw(st.integers(0, 5))
        op["id"] = draw(st.sampled_from([number, str(number), f"[{number}]"]))
    if draw(st.integers(0, 9)) < (1 if naming else 8):
        op[draw(st.sampled_from(["candidate", "candidateIndex"]))] = draw(st.integers(-1, 6))
    if draw(st.booleans()):
        op["content"] = draw(st.one_of(_TEXT, st.just("   ")))
    if draw(st.booleans()):
        op["tags"] = draw(st.lists(_WORDS, max_size=3))
    if draw(st.booleans()):
        op["type"] = draw(_KINDS)
    return op


@given(
    _banks(),
    _CANDIDATES,
    st.lists(_raw_operation(), max_size=12),
    st.one_of(st.just(10_000), st.integers(0, 600)),
)
def test_applying_any_reply_keeps_the_bank_consistent(
    bank: list[Entry], candidates: list[Candidate], raw: list[dict[str, Any]], budget: int
) -> None:
    before = [e.model_copy(deep=True) for e in bank]
    shown, _ = shown_entries(bank, candidates, budget)
    parsed = parse_operations(raw, {k: e.id for k, e in shown}, len(candidates))
    applied = apply(bank, parsed, candidates)
    assert bank == before  # the input is left as it is

    old = {e.id: e for e in bank}
    new = {e.id: e for e in applied.bank}
    assert len(new) == len(applied.bank)  # ids unique
    deleted = {c.id for c in applied.changes if c.op == "DELETE"}
    assert set(old) - deleted <= set(new)  # nothing lost that was not deleted
    assert not deleted & set(new)
    assert deleted <= {e.id for _, e in shown}  # only what was shown can be deleted
    unchanged = set(old) - {c.id for c in applied.changes}
    assert all(new[i] == old[i] for i in unchanged)
    for change in applied.changes:
        if change.op == "ADD":
            assert change.before is None
            assert change.id not in old
            assert new[change.id] == change.after
        elif change.op == "UPDATE":
            assert change.before == old[change.id]
            assert change.after == new[change.id]
            assert change.after.history[-1].content == change.before.content
            assert change.after.created == change.before.created
        else:
            assert (change.before, change.after) == (old[change.id], None)
    assert len({c.id for c in applied.changes}) == len(applied.changes)  # one change an entry
    adds = sum(c.op == "ADD" for c in applied.changes)
    assert len(applied.bank) == len(bank) + adds - len(deleted)
    keys = [" ".join(e.content.split()).casefold() for e in applied.bank if e.id not in old]
    assert len(keys) == len(set(keys))  # no exact duplicate added


@given(_banks(), _CANDIDATES)
def test_the_fallback_adds_every_candidate_not_already_there(
    bank: list[Entry], candidates: list[Candidate]
) -> None:
    applied = add_all(bank, candidates, pass_id=PASS, now=NOW, source=SOURCE, new_id=fresh)
    assert applied.bank[: len(bank)] == bank
    have = {" ".join(e.content.split()).casefold() for e in applied.bank}
    assert all(" ".join(c.content.split()).casefold() in have for c in candidates)
    assert len(have) == len({" ".join(e.content.split()).casefold() for e in bank}) + len(
        applied.changes
    )
    assert all(c.op == "ADD" for c in applied.changes)
