"""The handbook written by rules (pure): what goes where, the skill threshold, and the
limits for any bank (property tests)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.handbook import (
    CLUSTER_BULLETS,
    PROFILE_WORDS,
    SUMMARY_TOKENS,
    TIPS,
    TIPS_MAX,
    estimate_tokens,
    memory_md_problems,
    numbered_items,
    routing_rows,
    sections,
    skill_problems,
    summary_problems,
)
from engine.memory.handbook_rules import Agent, PassEvidence, rules_handbook, supported_skill
from engine.memory.knowledge import KNOWLEDGE_TYPES, Entry, KnowledgeType, Source, Stamp

BREAD = "To bake bread: go kitchen, examine the oven, then knead the dough"
WREN = Agent("Wren", "A cheerful cook.", "Flour on her apron.", ("Ash", "Moss"),
             frozenset({"go", "examine", "say", "note"}))  # fmt: skip


def entry(number: int, kind: KnowledgeType, content: str, tags: list[str] | None = None,
          passes: list[str] | None = None, sim: str = "2026-01-01T08:00",
          uses: int = 0) -> Entry:  # fmt: skip
    stamp = Stamp(sim=sim, at="2026-11-25T10:00:00Z")
    return Entry(id=f"ltm-{number}-abc", type=kind, content=content, tags=tags or [],
                 source=Source(passes=passes or ["p1"]), created=stamp, updated=stamp,
                 access_count=uses)  # fmt: skip


def seen_in(*passes: str, content: str = BREAD) -> list[PassEvidence]:
    return [PassEvidence(p, f"knowledge/passes/{p}.md", (("procedure", content),)) for p in passes]


def test_a_procedure_seen_in_three_passes_is_a_skill_routed_from_the_summary() -> None:
    bank = [entry(1, "procedure", BREAD, ["bread", "kitchen"], ["p1"])]
    book = rules_handbook(WREN, bank, seen_in("p1", "p2", "p3"))
    assert list(book.skills) == ["bake-bread"]
    skill = book.skills["bake-bread"]
    assert skill_problems("bake-bread", skill) == []
    procedure = sections(skill)["Procedure"]
    assert "1. `go kitchen`" in procedure  # a step that is a command of this world
    assert "2. `examine the oven`" in procedure
    assert "3. knead the dough" in procedure
    assert "knowledge/passes/p3.md" in skill
    rows = routing_rows(book.memory_summary)
    assert ("bake-bread", "skills/bake-bread/SKILL.md", "bread, kitchen, bake") in rows
    assert ("Bread", "MEMORY.md > Bread", "bread, kitchen") in rows
    assert "## Bread" in book.memory_md


def test_two_passes_make_no_skill() -> None:
    bank = [entry(1, "procedure", BREAD, ["bread"], ["p1"])]
    assert rules_handbook(WREN, bank, seen_in("p1", "p2")).skills == {}


def test_a_fact_seen_in_many_passes_is_never_a_skill() -> None:
    fact = "The oven in the kitchen heats slowly in winter"
    bank = [entry(1, "fact", fact, ["oven"], ["p1", "p2", "p3", "p4"])]
    assert rules_handbook(WREN, bank, seen_in("p1", "p2", "p3", content=fact)).skills == {}


def test_the_passes_that_updated_an_entry_count_as_seeing_it() -> None:
    bank = [entry(1, "procedure", BREAD, ["bread"], ["p1", "p2", "p3"])]
    assert list(rules_handbook(WREN, bank, []).skills) == ["bake-bread"]


def test_a_model_skill_is_supported_only_by_a_procedure_seen_three_times() -> None:
    bank = [entry(1, "procedure", BREAD, ["bread"], ["p1"])]
    skill = f"---\nname: bake-bread\n---\n# Skill: Bake\n## Procedure\n1. {BREAD}\n"
    assert supported_skill(skill, bank, seen_in("p1", "p2", "p3"))
    assert not supported_skill(skill, bank, seen_in("p1", "p2"))
    assert not supported_skill("# Skill: Sing\n1. say la la la", bank, seen_in("p1", "p2", "p3"))


def test_tips_rank_mistakes_first_then_use_then_recency() -> None:
    bank = [
        entry(1, "fact", "Old fact about the well.", sim="2026-01-01T08:00"),
        entry(2, "fact", "New fact about the well.", sim="2026-01-03T08:00"),
        entry(3, "fact", "Used fact about the well.", uses=5, sim="2026-01-01T08:00"),
        entry(4, "mistake", "Do not go west from the hall: there is no exit."),
        entry(5, "preference", "Wren wants her tea strong."),
    ]
    tips = numbered_items(sections(rules_handbook(WREN, bank, []).memory_summary)[TIPS])
    assert tips == [
        "Do not go west from the hall: there is no exit.",
        "Used fact about the well.",
        "New fact about the well.",
        "Old fact about the well.",
    ]


def test_the_profile_is_the_agent_its_preferences_and_who_it_knows() -> None:
    bank = [
        entry(1, "preference", "Wren wants her tea strong."),
        entry(2, "fact", "Ash reads in the parlour; Ash likes rye.", ["ash"]),
        entry(3, "fact", "Moss tends the apple trees."),
    ]
    profile = sections(rules_handbook(WREN, bank, []).memory_summary)["Profile"]
    assert profile.startswith("A cheerful cook. Flour on her apron.")
    assert "What I prefer: Wren wants her tea strong." in profile
    assert "People I know: Ash, Moss." in profile


def test_a_contradicted_entry_is_gone_from_the_tips_and_a_repeat_shows_once() -> None:
    """The bank carries the consolidation: an UPDATE replaced the old belief, and an
    entry repeated word for word in two passes is one tip."""
    bank = [
        entry(1, "fact", "The well is full again since the rain."),  # was: "The well is dry."
        entry(2, "fact", "Bread rises best near the stove."),
        entry(3, "fact", "Bread  rises best near the stove.", passes=["p2"]),
    ]
    book = rules_handbook(WREN, bank, [])
    tips = numbered_items(sections(book.memory_summary)[TIPS])
    assert tips == ["The well is full again since the rain.", "Bread rises best near the stove."]
    assert "The well is dry" not in book.memory_md


def test_clusters_follow_the_most_common_tag_and_cite_their_passes() -> None:
    bank = [entry(n, "fact", f"Bread fact number {n}.", ["bread", f"t{n}"], [f"p{n}"])
            for n in range(1, CLUSTER_BULLETS + 6)]  # fmt: skip
    bank.append(entry(99, "fact", "The well is dry.", []))
    book = rules_handbook(WREN, bank, [])
    found = sections(book.memory_md)
    assert list(found) == ["Bread", "Bread (part 2)", "Facts"]
    assert "knowledge/passes/p3.md" in found["Bread"]
    assert memory_md_problems(book.memory_md) == []


def test_an_empty_bank_gives_a_handbook_that_says_so() -> None:
    book = rules_handbook(WREN, [], [])
    assert "No significant learnings consolidated yet." in book.memory_summary
    assert summary_problems(book.memory_summary) == []
    assert book.skills == {}


_WORDS = st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]),
                 min_size=1, max_size=200).filter(str.strip)  # fmt: skip
_ENTRIES = st.lists(
    st.tuples(st.sampled_from(KNOWLEDGE_TYPES), _WORDS,
              st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=6), max_size=4),
              st.lists(st.sampled_from(["p1", "p2", "p3", "p4"]), max_size=4)),
    max_size=150,
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(_ENTRIES, st.lists(st.sampled_from(["p1", "p2", "p3", "p4"]), max_size=4))
def test_limits_hold_for_any_bank(
    rows: list[tuple[KnowledgeType, str, list[str], list[str]]], seen: list[str]
) -> None:
    bank = [
        entry(n, kind, text, tags, passes) for n, (kind, text, tags, passes) in enumerate(rows, 1)
    ]
    evidence = [PassEvidence(p, f"knowledge/passes/{p}.md",
                             tuple(("procedure", text) for _, text, _, _ in rows[:3]))
                for p in seen]  # fmt: skip
    book = rules_handbook(WREN, bank, evidence)
    summary = sections(book.memory_summary)
    assert summary_problems(book.memory_summary) == []
    assert len(summary["Profile"].split()) <= PROFILE_WORDS
    assert len(numbered_items(summary[TIPS])) <= TIPS_MAX
    assert estimate_tokens(book.memory_summary) < SUMMARY_TOKENS
    assert memory_md_problems(book.memory_md) == []
    for body in sections(book.memory_md).values():
        assert body.count("\n- ") <= CLUSTER_BULLETS
    for name, skill in book.skills.items():
        assert skill_problems(name, skill) == []
