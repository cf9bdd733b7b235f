"""Issue 43's acceptance, fast: readers that exploit the room, and one that abstains
without memory, on a question set shaped like a 4-room world's (every room question
offers the current room; half the people questions someone who is here), asked through
the real prompts (``configured``, ``render_prompt``, ``question_prompt``), the probe's
fakes and the strict reader of replies, then reported. (``test_village_readers`` does
the same end to end on a recorded village run, marked slow.)"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest

from engine.agents.prompt import PromptParts, render_prompt
from engine.lab.probe.asking import configured, evidence_prompt, question_prompt, read_answer
from engine.lab.probe.fakes import (
    AbstainingReader,
    Known,
    OracleBackend,
    RoomReader,
    question_block,
)
from engine.lab.probe.questions import IDK, Question
from engine.lab.probe.report import Answer, build_report
from engine.lab.probe.report_table import table
from engine.lab.probe.scoring import Situation, holm, mcnemar_exact, outcome, wilson
from engine.llm.request import LLMRequest

ROOMS = ("The Hall", "The Yard", "The Tower", "The Cellar")
PEOPLE = ("Bo", "Pat", "Pip", "Bea", "Dee", "Eve")
HERE = {"Ada": Situation("The Hall", ("Bo",)), "Cy": Situation("The Yard", ("Pat", "Pip"))}
CONFIGS = ("full", "none", "evidence")


def _memory(agent: str, k: int) -> str:
    return f"{agent} remembers moment {k:03d}: the bell rang twice and the rain came."


def _questions() -> list[Question]:
    out: list[Question] = []
    for agent, here in HERE.items():
        rng = random.Random(f"issue 43/{agent}")
        for n in range(120):
            rooms = n % 2 == 0
            pool = list(ROOMS) if rooms else [p for p in PEOPLE if p != agent]
            gold = rng.choice([o for o in pool if not here.shows(o)])
            if rooms:  # a 4-room world: every room an option, the current one among them
                options = list(ROOMS)
            else:
                options = [gold, *rng.sample([o for o in pool if o != gold], 3)]
            options.append(IDK)
            rng.shuffle(options)
            category = "single-hop" if rooms else "multi-hop"
            out.append(
                Question(
                    f"{agent}-{category}-{n}",
                    agent,
                    category,
                    f"Q{n} of {agent}?",
                    tuple(options),
                    gold,
                    (n // 2,),
                    10,
                )
            )  # two share a memory
        rng = random.Random(f"issue 43/{agent}/abstention")
        for n in range(80):  # as many as full gets right: pooled, the two cancel out
            options = [*rng.sample(PEOPLE, 4), IDK]
            rng.shuffle(options)
            out.append(
                Question(
                    f"{agent}-abstention-{n}",
                    agent,
                    "abstention",
                    f"Unheard {n} of {agent}?",
                    tuple(options),
                    IDK,
                    (),
                    60,
                )
            )
        for n in range(10):  # the room's own name: present, tested in no family
            options = [*ROOMS, IDK]
            out.append(Question(f"{agent}-present-{n}", agent, "present", f"Where {n}?",
                                tuple(options), here.room, (200 + n,), 5))  # fmt: skip
    return out


def _parts(agent: str, memories: Sequence[str]) -> PromptParts:
    here = HERE[agent]
    return PromptParts(name=agent, profile="A villager.", room_name=here.room,
                       room_description="Quiet.", exits=["north"], also_here=list(here.people),
                       memories=list(memories), recent_summary="", longterm_summary="",
                       knowledge=[], handbook="", examples=[])  # fmt: skip


def _prompt(q: Question, config: str) -> str:
    evidence = [_memory(q.agent, k) for k in q.evidence]
    if config == "evidence":
        head = evidence_prompt(q.agent, "A villager.", evidence)
    else:  # full shows two memories in three (the evidence of a question or not)
        shown = [_memory(q.agent, k) for k in range(210) if k % 3]
        head = render_prompt(configured(_parts(q.agent, shown), config, immediate=8,
                                        journal=shown))  # fmt: skip
    return question_prompt(head, q.agent, q.question, q.options)


async def _ask(backend: OracleBackend, questions: Sequence[Question]) -> list[Answer]:
    async def one(q: Question, config: str) -> Answer:
        request = LLMRequest(prompt=lambda: _prompt(q, config), model="fake")
        chosen = read_answer((await backend.generate(request)).text, q.options)
        return Answer(q.id, config, chosen, outcome(chosen, q.gold), 100)

    return list(await asyncio.gather(*(one(q, c) for c in CONFIGS for q in questions)))


def _report(reader: str, seed: int = 7) -> dict[str, Any]:
    questions = _questions()
    known = {question_block(q.agent, q.question, q.options):
             Known(q.options, q.gold, tuple(_memory(q.agent, k) for k in q.evidence))
             for q in questions}  # fmt: skip
    backend: OracleBackend = (
        AbstainingReader(known, seed) if reader == "abstains"
        else RoomReader(known, seed, "picks" if reader == "picks" else "avoids")
    )  # fmt: skip
    return build_report(questions, asyncio.run(_ask(backend, questions)), HERE)


@pytest.mark.parametrize("reader", ["picks", "avoids"])
def test_none_stays_inside_the_present_aware_baseline(reader: str) -> None:
    """A reader that always (or never) picks what the room shows scores ``none`` inside
    the present-aware interval, though not at ``guess``: the always-picking one is
    clearly below 25%, the never-picking one above it. Each end of the interval is the
    reader's expectation widened by 1.96 standard errors, so one reader's draw lands
    past it about one time in forty: of ten readers (seeds), at most one may."""
    reports = [_report(reader, seed) for seed in range(10)]
    verdicts = [r["none_check"]["verdict"] for r in reports]
    assert verdicts.count("within") >= 9, verdicts
    report = reports[0]
    none = report["configs"]["none"]["answerable"]
    aware = report["baselines"]["none"]["answerable"]["present_aware"]
    low, high = aware["interval"]
    assert low <= none["accuracy"] <= high, (none["accuracy"], aware)
    assert aware["accuracy"] == report["baselines"]["none"]["answerable"]["guess"] == 0.25
    assert aware["always_shown"] < 0.25 < aware["never_shown"]
    bound = wilson(none["correct"], none["n"])
    if reader == "picks":  # judged against guess alone, it would be far below
        assert bound[1] < 0.25
        assert none["accuracy"] < aware["always_shown"] + 0.05
    else:
        assert none["accuracy"] > 0.25
    # evidence shows no room: its present-aware interval is guess's, widened
    ceiling = report["baselines"]["evidence"]["answerable"]["present_aware"]
    assert ceiling["always_shown"] == ceiling["never_shown"] == 0.25
    assert "present-aware baseline [" in table(report)


def test_the_abstaining_readers_full_vs_none_is_significant_on_answerable_questions() -> None:
    """Issue 43's defect: a reader that abstains without memory and answers well with
    it; the pooled test hid ``full``'s lead behind ``none``'s right abstentions."""
    report = _report("abstains")
    configs = report["configs"]
    assert configs["none"]["answerable"]["accuracy"] == 0.0
    assert configs["none"]["abstention"]["correct_abstention"] == 1.0
    assert configs["full"]["abstention"]["correct_abstention"] == 0.0
    assert report["none_check"]["verdict"] == "below"  # it abstains
    pairs = {(p["questions"], p["a"], p["b"]): p for p in report["paired"]}
    answerable = pairs[("answerable", "full", "none")]
    assert answerable["b_only"] == 0
    assert answerable["a_only"] >= 40
    assert answerable["p_holm"] < 1e-10
    abstention = pairs[("abstention", "full", "none")]
    assert (abstention["a_only"], abstention["b_only"], abstention["n"]) == (0, 160, 160)
    assert abstention["p_holm"] < 1e-10
    # pooled, as the report once tested them, the two families all but cancel out
    assert mcnemar_exact(answerable["all"]["a_only"], abstention["b_only"]) > 0.05
    # present questions are in no family; shared evidence: one question per memory
    assert answerable["all"]["n"] == 240
    assert answerable["n"] == report["sharing"]["one_per_evidence"] == 120
    assert report["sharing"] == {"questions": 240, "sharing": 240, "clusters": 120,
                                 "one_per_evidence": 120}  # fmt: skip
    for family in ("answerable", "abstention"):
        mine = [p for p in report["paired"] if p["questions"] == family]
        assert len(mine) == 3
        assert [p["p_holm"] for p in mine] == holm([p["p_value"] for p in mine])
    text = table(report)
    assert "answerable:\n  full vs none: " in text
    assert "abstention:\n  full vs none: 0 / 160 of 160" in text
    assert "Holm p=" in text
