"""Every handbook prompt fits, and the handbook's files and the pass records stay within
their bounds (issue 44, item 2): the handbook prompt's parts share one budget, MEMORY.md
stays within 64 KiB whoever writes it (its ``.prev`` too), memory_summary.md within
its characters, and a pass record within 32 KiB however long and many its lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engine.memory.handbook import (
    MEMORY_BYTES,
    SUMMARY_CHARS,
    Cluster,
    Handbook,
    enforce_limits,
    memory_md_problems,
    render_cluster,
    render_memory_md,
    render_summary,
    routing_rows,
    sections,
    split_clusters,
)
from engine.memory.handbook_prompts import (
    HandbookPromptTooLong,
    handbook_prompt,
    read_handbook,
)
from engine.memory.handbook_rules import Agent, bound_memory_md, rules_handbook
from engine.memory.knowledge import KNOWLEDGE_TYPES, Entry, Source, Stamp, cut_content
from engine.memory.tokens import CHARACTERS, ESTIMATE, TokenCounter, fits
from engine.vault.handbook_store import HandbookState, HandbookStore
from engine.vault.knowledge_record import BODY_BYTES, RECORD_BYTES, pass_body

WORDS = ("well", "bread", "oven", "mill", "yard", "river", "pail", "rope", "lamp", "cart",
         "barn", "hay", "wheat", "rye", "bakery")  # fmt: skip
NOW = Stamp(sim="2026-01-02T08:00", at="2026-11-25T10:00:00Z")


def bank(size: int, seed: int = 1) -> list[Entry]:
    """``size`` entries of some 300 characters, over many tags (many clusters)."""
    rng = random.Random(seed)
    entries = []
    for n in range(1, size + 1):
        day = f"2026-01-{1 + n % 28:02d}"
        stamp = Stamp(sim=f"{day}T10:00", at=f"{day}T10:00:00Z")
        text = f"Entry {n}: " + " ".join(rng.choice(WORDS) for _ in range(60))
        entries.append(Entry(
            id=f"ltm-{n}-a{n}", type=KNOWLEDGE_TYPES[n % 6], content=cut_content(text),
            tags=[f"topic-{n % 97}", f"w-{rng.randrange(400)}"], access_count=n % 5,
            source=Source(passes=[f"202601{1 + n % 28:02d}-100000"]), created=stamp,
            updated=stamp))  # fmt: skip
    return entries


def long_text(chars: int, seed: int = 2) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(chars // 4))[:chars]


def unbounded_memory_md(entries: list[Entry]) -> str:
    """MEMORY.md as the rules wrote it before the bound: every entry, one cluster a tag."""
    clusters = [Cluster(f"Topic {n}", [f"knowledge/passes/2026010{n % 9 + 1}-100000.md"],
                        [f"topic-{n}"], [e.content for e in entries if e.tags[0] == f"topic-{n}"])
                for n in range(97)]  # fmt: skip
    return split_clusters(render_memory_md("Ada", clusters))


def _bytes(text: str) -> int:
    return len(text.encode("utf-8"))


# -- MEMORY.md -------------------------------------------------------------------------


@pytest.mark.parametrize("size", [300, 5_000])
def test_the_rules_keep_memory_md_within_64_kib_and_say_what_they_left_out(size: int) -> None:
    entries = bank(size)
    book = rules_handbook(Agent("Ada", "A careful gardener."), entries, [])
    assert _bytes(book.memory_md) <= MEMORY_BYTES
    assert memory_md_problems(book.memory_md) == []
    last = book.memory_md.rstrip().splitlines()[-1]
    assert last.startswith("(Left out to keep MEMORY.md within 65,536 bytes:")
    assert "bullets; the knowledge bank keeps them." in last
    kept = {topic.split(" (part ")[0] for topic in sections(book.memory_md)}
    routed = {t for t, loc, _ in routing_rows(book.memory_summary) if loc.startswith("MEMORY")}
    assert routed == kept  # the routing index points only at clusters that are there
    assert len(book.memory_summary) < SUMMARY_CHARS


def test_the_rules_keep_the_newest_clusters_first() -> None:
    entries = bank(600)
    newest = Stamp(sim="2026-03-01T10:00", at="2026-03-01T10:00:00Z")
    entries = [e.model_copy(update={"updated": newest}) if e.tags[0] == "topic-5" else e
               for e in entries]  # fmt: skip
    book = rules_handbook(Agent("Ada"), entries, [])
    assert "## Topic-5\n" in book.memory_md
    assert _bytes(book.memory_md) <= MEMORY_BYTES


def test_a_model_memory_md_over_64_kib_keeps_the_clusters_citing_the_newest_records() -> None:
    clusters = [Cluster(f"Old {n}", ["knowledge/passes/20260101-100000.md"], ["old"],
                        [long_text(300, n) for _ in range(15)]) for n in range(40)]  # fmt: skip
    clusters.insert(20, Cluster("Fresh", ["knowledge/passes/20260301-100000-2.md"], ["new"],
                                ["The mill opens at dawn now."]))  # fmt: skip
    text = render_memory_md("Ada", clusters)
    assert _bytes(text) > 2 * MEMORY_BYTES
    summary = render_summary("Ada.", ["Tip."], [("Fresh", "MEMORY.md > Fresh", "new")])
    reply = json.dumps({"memory_summary": summary, "memory_md": text, "skills": []})
    memory = read_handbook(reply).memory_md
    assert _bytes(memory) <= MEMORY_BYTES
    assert "## Fresh" in memory
    assert "## Old 0\n" in memory  # the rest in order, as many as fit
    assert "## Old 39\n" not in memory
    assert "Topics left out: " in memory.splitlines()[-1]


@pytest.mark.parametrize(
    "text",
    [
        "# Ada\n\n" + "- " + long_text(200_000) + "\n",
        "# Ada\n\n" + render_cluster(Cluster("One", [], ["x"], [long_text(90_000)])),
        "".join(
            render_cluster(Cluster(f"C{n}", [], ["x"], [long_text(900, n)] * 30)) for n in range(9)
        ),
        long_text(70_000).replace(" ", "\n") + "\n## Late\n\n- " + long_text(70_000),
    ],
    ids=["no cluster", "one huge bullet", "long clusters", "a long head"],
)
def test_any_memory_md_is_bounded(text: str) -> None:
    bounded = bound_memory_md(text)
    assert _bytes(bounded) <= MEMORY_BYTES
    assert bounded.splitlines()[-1].startswith("(Left out to keep MEMORY.md within")


def test_an_oversized_summary_is_cut_to_its_characters_whatever_its_words() -> None:
    giant = long_text(40_000).replace(" ", "")  # one word
    summary = render_summary(
        " ".join([giant] * 5), [giant, "Short tip."], [(giant, "MEMORY.md > X", giant)]
    )
    assert len(enforce_limits(summary)) < SUMMARY_CHARS


def test_the_store_bounds_memory_md_and_an_oversized_old_one_kept_as_prev(
    tmp_path: Path,
) -> None:
    store = HandbookStore(tmp_path / "handbook")
    store.folder.mkdir(parents=True)
    old = unbounded_memory_md(bank(1_500))
    assert _bytes(old) > 4 * MEMORY_BYTES
    (store.folder / "memory_summary.md").write_text(render_summary("Ada.", ["Old."], []))
    (store.folder / "MEMORY.md").write_text(old)  # a handbook from before the bound
    summary = render_summary("Ada.", ["New."], [])
    state = HandbookState(method="llm", mode="INCREMENTAL", updated=NOW)
    store.write(Handbook(summary, unbounded_memory_md(bank(400, seed=3))), state)
    assert _bytes((store.folder / "MEMORY.md").read_text()) <= MEMORY_BYTES
    prev = (store.folder / "MEMORY.md.prev").read_text()
    assert _bytes(prev) <= MEMORY_BYTES
    assert prev.startswith("# Ada's memory\n\n## Topic 7\n")  # the old one, cut
    assert "## Topic 8\n" in prev  # its clusters citing the newest records kept
    assert "## Topic 0\n" not in prev
    store.undo()
    assert _bytes((store.folder / "MEMORY.md").read_text()) <= MEMORY_BYTES


# -- the handbook prompt ---------------------------------------------------------------


BUDGETS: list[tuple[TokenCounter, int]] = [
    (ESTIMATE, 1_300), (ESTIMATE, 1_800), (ESTIMATE, 2_500), (ESTIMATE, 5_188),
    (CHARACTERS, 2_600), (CHARACTERS, 3_500), (CHARACTERS, 20_000),
]  # fmt: skip
"""Token budgets (as the writer gets them from num_ctx less the reply), and in characters."""


def test_the_handbook_prompt_fits_with_a_huge_memory_md_and_a_huge_newest_record() -> None:
    entries = bank(1_500)
    existing = Handbook(
        rules_handbook(Agent("Ada"), entries, []).memory_summary,
        unbounded_memory_md(entries),  # 500 KB, from before the bound
        {"bake-bread": "---\nname: bake-bread\n---\n# Skill: Bake\n" + long_text(9_000)},
    )
    newest = "# Knowledge pass 3\n\n## Extracted\n\n- (fact) " + long_text(75_000)
    records = [(f"knowledge/passes/2026010{n}-100000.md", long_text(3_000, n)) for n in (1, 2)]
    records.append(("knowledge/passes/20260103-100000.md", newest))
    for counter, budget in BUDGETS:
        prompt = handbook_prompt("Ada", "INCREMENTAL", records, existing, budget, counter)
        assert fits(prompt, budget, counter), (counter, budget)
        assert "### knowledge/passes/20260103-100000.md" in prompt  # the newest, cut
        assert newest not in prompt
        assert "## Existing MEMORY.md" in prompt
        assert prompt.rstrip().endswith("JSON handbook:")


def test_records_share_the_budget_newest_first_and_the_older_are_counted() -> None:
    records = [(f"knowledge/passes/p{n:02d}.md", f"Record {n}. " + "x " * 250) for n in range(40)]
    prompt = handbook_prompt("Wren", "INIT", records, None, 6_000, older=5)
    assert len(prompt) <= 6_000
    assert "### knowledge/passes/p39.md" in prompt
    assert "### knowledge/passes/p00.md" not in prompt
    shown = prompt.count("### knowledge/passes/")
    assert f"({40 - shown + 5} older records are not shown)" in prompt


def test_a_budget_smaller_than_the_instructions_is_refused_not_overrun() -> None:
    with pytest.raises(HandbookPromptTooLong):
        handbook_prompt("Ada", "INIT", [("knowledge/passes/p.md", "x")], None, 600, ESTIMATE)


# -- the pass record -------------------------------------------------------------------


class _Change:
    def __init__(self, op: str, before: Entry | None, after: Entry | None, cut: int | None):
        self.op, self.id, self.before, self.after = op, (after or before).id, before, after  # type: ignore[union-attr]
        self.candidate, self.cut_from = None, cut


def test_a_pass_record_cuts_candidates_as_entries_are_and_says_from_how_long() -> None:
    huge = long_text(74_000)
    body = pass_body("20260101-100000", [("fact", huge, ["well"])], [])
    line = next(line for line in body.splitlines() if line.startswith("- (fact)"))
    assert line == f"- (fact) {cut_content(huge)} (cut from 74000 characters) [tags: well]"


@pytest.mark.parametrize(
    ("candidates", "changes", "chars"), [(12, 40, 74_000), (2_000, 2_000, 900)]
)
def test_a_pass_record_stays_within_32_kib_however_many_lines(
    candidates: int, changes: int, chars: int
) -> None:
    old = bank(changes)
    huge = long_text(chars)
    made = [("fact", huge + str(n), ["x" * 5_000] * 6) for n in range(candidates)]
    applied = [_Change("UPDATE", e.model_copy(update={"content": huge}),
                       e.model_copy(update={"content": cut_content(huge)}), chars)
               for e in old]  # fmt: skip
    body = pass_body("20260101-100000", made, applied)
    assert _bytes(body) <= BODY_BYTES < RECORD_BYTES
    assert "## Operations" in body
    if candidates > 100:
        assert "more candidates left out" in body
    assert "more operations left out" in body.splitlines()[-1]
