"""The handbook's documents and limits (pure): sections, enforced limits on an oversized
memory_summary.md, the prompt's excerpt, MEMORY.md's comment blocks and splitting, skill
checks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.memory.handbook import (
    CLUSTER_BULLETS,
    EMPTY,
    PROFILE_WORDS,
    SUMMARY_TOKENS,
    TIPS,
    TIPS_MAX,
    Cluster,
    enforce_limits,
    estimate_tokens,
    kebab,
    memory_md_problems,
    numbered_items,
    prompt_excerpt,
    render_cluster,
    render_skill,
    render_summary,
    routing_rows,
    sections,
    skill_keywords,
    skill_problems,
    split_clusters,
    summary_problems,
)


def _oversized() -> str:
    profile = " ".join(["word"] * 1_000)
    tips = [f"Tip number {n}: " + "and so on " * 60 for n in range(200)]
    routes = [(f"Topic {n}", f"MEMORY.md > Topic {n}", "a, b") for n in range(30)]
    return render_summary(profile, tips, routes)


def test_an_oversized_summary_is_cut_to_every_limit() -> None:
    text = enforce_limits(_oversized())
    found = sections(text)
    assert len(found["Profile"].split()) == PROFILE_WORDS
    tips = numbered_items(found[TIPS])
    assert 0 < len(tips) <= TIPS_MAX
    assert tips[0].startswith("Tip number 0:")  # the most useful (first) ones stay
    assert estimate_tokens(text) < SUMMARY_TOKENS
    assert summary_problems(text) == []


def test_eighty_short_tips_all_stay() -> None:
    text = enforce_limits(render_summary("Me.", [f"Tip {n}." for n in range(120)], []))
    assert len(numbered_items(sections(text)[TIPS])) == TIPS_MAX


@given(
    st.text(max_size=3_000),
    st.lists(st.text(max_size=300), max_size=150),
    st.lists(st.tuples(st.text(max_size=40), st.text(max_size=40), st.text(max_size=40)),
             max_size=40),
)  # fmt: skip
def test_limits_hold_for_any_summary(
    profile: str, tips: list[str], routes: list[tuple[str, str, str]]
) -> None:
    text = enforce_limits(render_summary(profile, tips, routes))
    assert summary_problems(text) == []
    assert len(sections(text)["Profile"].split()) <= PROFILE_WORDS
    assert len(numbered_items(sections(text)[TIPS])) <= TIPS_MAX
    assert estimate_tokens(text) < SUMMARY_TOKENS


def test_a_summary_without_its_sections_is_unusable() -> None:
    assert summary_problems("## Profile\nMe.\n") == [
        "memory_summary.md has no '## General Tips' section",
        "memory_summary.md has no '## Routing Index' section",
    ]


def test_routing_rows_skip_the_header_and_rule() -> None:
    text = render_summary("Me.", ["Tip."], [("Bread", "MEMORY.md > Bread", "oven, dough")])
    assert routing_rows(text) == [("Bread", "MEMORY.md > Bread", "oven, dough")]


def test_the_prompt_excerpt_is_the_profile_and_first_tips_within_the_budget() -> None:
    text = render_summary("A cook. Likes rye.", ["Knead first.", "Heat the oven.", "x" * 50], [])
    assert (
        prompt_excerpt(text, 1_000)
        == "A cook. Likes rye.\n1. Knead first.\n2. Heat the oven.\n3. " + "x" * 50
    )
    assert prompt_excerpt(text, 45) == "A cook. Likes rye.\n1. Knead first."
    assert prompt_excerpt(text, 0) == ""
    assert prompt_excerpt(text, 1_000, own="A cook.").startswith("Likes rye.\n1.")


def test_an_empty_handbook_puts_nothing_in_the_prompt() -> None:
    assert prompt_excerpt(render_summary("", [], []), 1_000) == ""
    assert EMPTY in render_summary("", [], [])


def test_a_cluster_carries_its_comment_block_and_missing_ones_are_named() -> None:
    good = render_cluster(Cluster("Bread", ["knowledge/passes/p1.md"], ["bread"], ["Knead."]))
    assert memory_md_problems("# M\n\n" + good) == []
    assert "rollout_files:\n  - knowledge/passes/p1.md" in good
    bad = "# M\n\n## Bread\n\n- Knead.\n\n## Oven\n\n<!--\nkeywords: [oven]\n-->\n- Hot.\n"
    assert memory_md_problems(bad) == [
        "MEMORY.md cluster 'Bread' has no comment block",
        "MEMORY.md cluster 'Oven' has no rollout_files",
    ]


def test_a_long_cluster_is_split_and_each_part_keeps_the_block() -> None:
    bullets = [f"Fact {n}." for n in range(CLUSTER_BULLETS * 2 + 3)]
    text = split_clusters(
        "# M\n\n" + render_cluster(Cluster("Bread", ["p.md"], ["bread"], bullets))
    )
    found = sections(text)
    assert list(found) == ["Bread", "Bread (part 2)", "Bread (part 3)"]
    assert all(body.count("- Fact") <= CLUSTER_BULLETS for body in found.values())
    assert memory_md_problems(text) == []


def test_skill_names_are_kebab_case_and_skills_need_their_parts() -> None:
    assert kebab("Bake Bread! (again)") == "bake-bread-again"
    assert kebab("日本") == "skill"
    skill = render_skill("bake-bread", "Bake bread", "Bake: a loaf", ["bread", "oven, hot"],
                         "When hungry.", ["`go kitchen`"], [], [])  # fmt: skip
    assert skill_problems("bake-bread", skill) == []
    assert skill_keywords(skill) == ["bread", "oven, hot"]
    assert skill_problems("Bake_Bread", skill) == [
        "skill name 'Bake_Bread' is not kebab-case",
        "skill 'Bake_Bread': its front matter names 'bake-bread'",
    ]
    assert "skill 'x' has no front matter" in skill_problems("x", "# Skill: X\n## Procedure\n1. a")


def test_a_block_list_of_keywords_reads_too() -> None:
    skill = "---\nname: a\ndescription: b\nkeywords:\n  - bread\n  - oven\n---\n# Skill: A\n"
    assert skill_keywords(skill) == ["bread", "oven"]
