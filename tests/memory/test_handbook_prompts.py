"""The handbook written by the model (pure): the INIT and INCREMENTAL prompts, the reply
read and checked, the limits enforced on an oversized reply, and a constraint that a
grammar converter can take."""

from __future__ import annotations

import json

import pytest

from engine.memory.handbook import (
    PROFILE_WORDS,
    SUMMARY_TOKENS,
    TIPS,
    TIPS_MAX,
    Cluster,
    Handbook,
    estimate_tokens,
    numbered_items,
    render_cluster,
    render_skill,
    render_summary,
    routing_rows,
    sections,
)
from engine.memory.handbook_prompts import (
    CUE,
    HANDBOOK_GBNF,
    HANDBOOK_SCHEMA,
    HandbookInvalid,
    handbook_prompt,
    read_handbook,
    without_skills,
)
from engine.memory.json_reply import ReplyUnparseable

RECORDS = [
    ("knowledge/passes/20260101-080000.md", "# Knowledge pass 1\n## Extracted\n- (fact) Rye."),
    ("knowledge/passes/20260102-080000.md", "# Knowledge pass 2\n## Extracted\n- (fact) Oats."),
]
MEMORY_MD = "# Wren's memory\n\n" + render_cluster(
    Cluster("Bread", ["knowledge/passes/20260101-080000.md"], ["bread"], ["Knead well."])
)
SKILL = render_skill("bake-bread", "Bake bread", "Bake a loaf", ["bread"], "When hungry.",
                     ["`go kitchen`", "`examine the oven`"], [], [])  # fmt: skip


def reply(summary: str | None = None, memory: str = MEMORY_MD,
          skills: list[dict[str, str]] | None = None) -> str:  # fmt: skip
    summary = summary or render_summary(
        "Wren, a cook.", ["Knead well."], [("Bread", "MEMORY.md > Bread", "bread")]
    )
    return json.dumps({"memory_summary": summary, "memory_md": memory, "skills": skills or []})


def test_init_asks_from_the_records_alone_and_names_their_paths() -> None:
    prompt = handbook_prompt("Wren", "INIT", RECORDS, None, 20_000)
    assert "Mode: INIT" in prompt
    assert "### knowledge/passes/20260101-080000.md" in prompt
    assert "- (fact) Oats." in prompt
    assert "Existing" not in prompt
    assert prompt.rstrip().endswith(CUE)


def test_incremental_shows_the_existing_files_before_the_new_records() -> None:
    existing = Handbook(render_summary("Wren.", ["Old tip."], []), MEMORY_MD, {"bake-bread": SKILL})
    prompt = handbook_prompt("Wren", "INCREMENTAL", RECORDS[1:], existing, 20_000)
    assert "Mode: INCREMENTAL" in prompt
    assert "remove what a newer learning contradicts" in prompt
    assert prompt.index("## Existing memory_summary.md") < prompt.index("## Pass records")
    assert "1. Old tip." in prompt
    assert "## Existing skill bake-bread" in prompt
    assert "20260101-080000.md" in prompt  # cited by the existing cluster
    assert "### knowledge/passes/20260101-080000.md" not in prompt  # not a new record


def test_records_that_do_not_fit_leave_out_the_oldest_and_say_so() -> None:
    many = [(f"knowledge/passes/p{n}.md", "x" * 500) for n in range(40)]
    prompt = handbook_prompt("Wren", "INIT", many, None, 6_000)
    assert len(prompt) <= 6_000  # nothing overflows, not even the newest record
    assert "### knowledge/passes/p39.md" in prompt
    assert "### knowledge/passes/p0.md" not in prompt
    assert "older records are not shown" in prompt


def test_a_good_reply_is_read_with_its_skill() -> None:
    book = read_handbook(reply(skills=[{"name": "bake-bread", "skill_md": SKILL}]))
    assert list(book.skills) == ["bake-bread"]
    assert routing_rows(book.memory_summary) == [("Bread", "MEMORY.md > Bread", "bread")]


def test_an_oversized_reply_is_cut_to_the_limits_not_refused() -> None:
    huge = render_summary(
        " ".join(["me"] * 900), [f"Tip {n} " + "yes " * 80 for n in range(300)], []
    )
    book = read_handbook(reply(summary=huge))
    found = sections(book.memory_summary)
    assert len(found["Profile"].split()) == PROFILE_WORDS
    assert len(numbered_items(found[TIPS])) <= TIPS_MAX
    assert estimate_tokens(book.memory_summary) < SUMMARY_TOKENS


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Here is your handbook, friend.", ReplyUnparseable),
        ("[1, 2]", ReplyUnparseable),
        (json.dumps({"memory_md": MEMORY_MD}), HandbookInvalid),
        (reply(summary="## Profile\nMe.\n"), HandbookInvalid),
        (reply(memory="# M\n\n## Bread\n\n- Knead.\n"), HandbookInvalid),
        (reply(skills=[{"name": "Bake_Bread", "skill_md": SKILL}]), HandbookInvalid),
        (reply(skills=[{"name": "bake-bread", "skill_md": "# Skill: Bake\n1. go"}]), HandbookInvalid),
        (reply(skills=[{"name": "bake-bread"}]), HandbookInvalid),
    ],
)  # fmt: skip
def test_an_unusable_reply_is_refused_with_a_reason(text: str, why: type[Exception]) -> None:
    with pytest.raises(why):
        read_handbook(text)


def test_a_dropped_skill_leaves_the_routing_index_too() -> None:
    summary = render_summary("Me.", ["Tip."], [("Bread", "MEMORY.md > Bread", "bread"),
                                               ("sing", "skills/sing/SKILL.md", "song")])  # fmt: skip
    book = without_skills(Handbook(summary, MEMORY_MD, {"sing": SKILL}), {"sing"})
    assert book.skills == {}
    assert routing_rows(book.memory_summary) == [("Bread", "MEMORY.md > Bread", "bread")]


def test_the_schema_has_no_bound_a_grammar_converter_would_unroll() -> None:
    """A maxLength of tens of thousands becomes that many nested grammar rules (it
    crashed llama.cpp's parser behind serve-llm)."""
    stack: list[object] = [HANDBOOK_SCHEMA]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            assert all(node.get(k, 0) <= 64 for k in ("maxLength", "maxItems", "minItems"))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    assert "{1," not in HANDBOOK_GBNF.split("name ::=")[0]  # the texts are unbounded
