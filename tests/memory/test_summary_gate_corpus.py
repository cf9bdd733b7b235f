"""The summary gate measured on corpora it was not written against.

``summary_gate_corpus.json`` was written by a helper session that had not read the gate's
code (its ``about`` says how): memory spans in the engine's own line format, faithful
summaries of them (several styles and lengths, first person, names and numbers kept,
some in other languages) and bad replies of 65 kinds, chunk summaries and merges. Its
author marked a third of each (label, kind) group held out; the gate was tuned on the
rest only, and its failures on the held-out part were never looked at.
``summary_gate_fresh.json`` was written the same way after the tuning, by a session that
saw neither the gate nor the first corpus: all of it is held out.

The rates are reported in the README (Performance). The issue's targets (at least 97%
of bad replies rejected, at most 5% of faithful ones) are not met: the floors below
are what the gate measured, so that it cannot get worse unseen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from engine.config import Settings
from engine.memory.summary_prompts import chunk_prompt, merge_prompt
from engine.memory.summary_quality import MergeParts, Verdict, judge_summary
from engine.sim.prompting import summary_chars

HERE = Path(__file__).parent
CORPORA = {"first": HERE / "summary_gate_corpus.json", "fresh": HERE / "summary_gate_fresh.json"}
LIMIT = summary_chars(Settings())
"""What the default agent's prompt shows of a summary whole."""


@dataclass(frozen=True)
class Rates:
    bad: int
    bad_rejected: int
    faithful: int
    faithful_rejected: int

    @property
    def bad_rejected_share(self) -> float:
        return self.bad_rejected / self.bad

    @property
    def faithful_rejected_share(self) -> float:
        return self.faithful_rejected / self.faithful


@cache
def corpus(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CORPORA[name].read_text(encoding="utf-8"))
    return data


def judge(data: dict[str, Any], reply: dict[str, Any]) -> Verdict:
    """The gate's verdict on one reply, asked as the compactor asks it."""
    scenes = {scene["id"]: scene for scene in data["scenes"]}
    merges = {merge["id"]: merge for merge in data["merges"]}
    if reply["of"] in scenes:
        scene = scenes[reply["of"]]
        return judge_summary(
            reply["text"], chunk_prompt(scene["agent"], scene["memories"]),
            sources=scene["memories"], names=[scene["profile"], *scene["world_names"]],
            limit=LIMIT,
        )  # fmt: skip
    merge = merges[reply["of"]]
    prompt = merge_prompt(merge["agent"], merge["older_summary"], merge["recent_summary"], LIMIT)
    parts = MergeParts(merge["older_summary"], merge["recent_summary"], merge["recent_memories"])
    return judge_summary(reply["text"], prompt, names=[merge["profile"], *merge["world_names"]],
                         limit=LIMIT, merge=parts)  # fmt: skip


def rates(name: str, *, heldout: bool) -> Rates:
    data = corpus(name)
    rows = [r for r in data["replies"] if r["heldout"] == heldout]
    bad = [r for r in rows if r["label"] == "bad"]
    faithful = [r for r in rows if r["label"] == "faithful"]
    return Rates(
        bad=len(bad), bad_rejected=sum(not judge(data, r).accepted for r in bad),
        faithful=len(faithful),
        faithful_rejected=sum(not judge(data, r).accepted for r in faithful),
    )  # fmt: skip


def test_the_first_corpus_is_as_big_and_varied_as_the_issue_asks() -> None:
    data = corpus("first")
    bad = [r for r in data["replies"] if r["label"] == "bad"]
    faithful = [r for r in data["replies"] if r["label"] == "faithful"]
    assert len(bad) >= 150
    assert len({r["kind"] for r in bad}) >= 25
    assert len(faithful) >= 80
    held = [r for r in data["replies"] if r["heldout"]]
    assert abs(len(held) / len(data["replies"]) - 1 / 3) < 0.02  # a third held out


def test_the_held_out_part_of_the_first_corpus_is_rejected_as_measured() -> None:
    found = rates("first", heldout=True)
    assert (found.bad, found.faithful) == (105, 49)
    assert found.bad_rejected_share >= 0.83  # measured 88 of 105 (83.8%); target 0.97: missed
    assert found.faithful_rejected_share <= 0.15  # measured 7 of 49 (14.3%); target 0.05: missed


def test_the_fresh_corpus_is_rejected_as_measured() -> None:
    found = rates("fresh", heldout=True)
    assert (found.bad, found.faithful) == (153, 78)
    assert found.bad_rejected_share >= 0.77  # measured 119 of 153 (77.8%); target 0.97: missed
    assert found.faithful_rejected_share <= 0.13  # measured 10 of 78 (12.8%); target 0.05: missed
