"""A SKILL.md's front matter is read by the YAML parser: folded (``>-``) and literal
(``|``) blocks, quoted strings and lists read back as written; front matter that does
not read gives one clear message (never a traceback) and loses nothing."""

from __future__ import annotations

from pathlib import Path

from helpers import run
from hypothesis import given
from hypothesis import strategies as st

from engine.memory import handbook
from engine.memory.handbook import (
    render_skill,
    skill_front_matter,
    skill_keywords,
    skill_problems,
)
from engine.sim.simulation import Simulation

BODY = "# Skill: Bake bread\n\n## When to Use\n\nWhen hungry.\n\n## Procedure\n\n1. `go kitchen`\n"

FOLDED = f"""---
name: bake-bread
description: >-
  Bake a loaf in the oven,
  then let it cool.
when: |
  At dawn.
  Before the market.
title: "Bake: bread # not a comment"
note: 'it''s warm'
keywords:
  - bread
  - "oven, hot"
---
{BODY}"""


def test_a_folded_description_a_literal_block_and_quoted_strings_read_back() -> None:
    front = skill_front_matter(FOLDED)
    assert front["description"] == "Bake a loaf in the oven, then let it cool."
    assert front["when"] == "At dawn.\nBefore the market."
    assert front["title"] == "Bake: bread # not a comment"
    assert front["note"] == "it's warm"
    assert skill_keywords(FOLDED) == ["bread", "oven, hot"]
    assert skill_problems("bake-bread", FOLDED) == []


def test_flow_lists_and_comma_separated_keywords_read_too() -> None:
    flow = FOLDED.replace('keywords:\n  - bread\n  - "oven, hot"', "keywords: [bread, 'oven']")
    assert skill_keywords(flow) == ["bread", "oven"]
    plain = FOLDED.replace('keywords:\n  - bread\n  - "oven, hot"', "keywords: bread, oven")
    assert skill_keywords(plain) == ["bread", "oven"]


def test_malformed_front_matter_gives_one_message_and_loses_nothing() -> None:
    broken = "---\nname: bake-bread\ndescription: [never closed\nkeywords: bread\n---\n" + BODY
    read = handbook.read_skill_front(broken)
    assert read.fields == {}
    assert read.problem is not None
    assert "(line 4)" in read.problem
    problems = skill_problems("bake-bread", broken)
    assert problems == [f"skill 'bake-bread': {read.problem}"]
    assert "never closed" in skill_front_matter(broken)["description"]  # what it said stays
    assert skill_keywords(broken) == []
    not_fields = "---\n- a list\n- of things\n---\n" + BODY
    assert skill_problems("bake-bread", not_fields) == [
        "skill 'bake-bread': its front matter is not a set of 'key: value' fields"
    ]


def test_no_front_matter_is_still_said_so() -> None:
    assert skill_problems("x", "# Skill: X\n## When to Use\n## Procedure\n1. a") == [
        "skill 'x' has no front matter"
    ]
    assert skill_front_matter("# Skill: X") == {}


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@given(TEXT, st.lists(TEXT, max_size=4))
def test_what_render_skill_writes_reads_back(description: str, keywords: list[str]) -> None:
    skill = render_skill("a", "A", description, keywords, "w", ["s"], [], [])
    front = handbook.read_skill_front(skill)
    assert front.problem is None
    assert front.fields["description"] == " ".join(description.split())
    assert skill_keywords(skill) == [" ".join(k.split()) for k in keywords if k.split()]


@given(st.text(max_size=200))
def test_any_front_matter_reads_or_says_why(inside: str) -> None:
    read = handbook.read_skill_front(f"---\n{inside}\n---\n# Skill: X\n")
    assert read.problem is None or read.fields == {}
    skill_problems("x", f"---\n{inside}\n---\n# Skill: X\n")  # never raises


def test_skill_shows_a_broken_skill_whole_with_one_line_about_it(
    sim: Simulation, vault_dir: Path
) -> None:
    folder = vault_dir / "agents" / "Ada" / "handbook" / "skills" / "bake-bread"
    folder.mkdir(parents=True)
    broken = "---\nname: bake-bread\ndescription: [never closed\n---\n" + BODY
    (folder / "SKILL.md").write_text(broken)
    shown = run(sim, "Ada", "@skill bake-bread").text
    assert shown.startswith(broken.strip())
    assert shown.count("front matter is not valid YAML") == 1
    (folder / "SKILL.md").write_text(FOLDED)
    assert run(sim, "Ada", "@skill bake-bread").text == FOLDED.strip()
