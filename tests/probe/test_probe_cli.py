"""``mudsim probe`` end to end on a recorded run: questions written before asking, an
oracle that answers from the evidence in the prompt scores perfectly where the evidence
is shown and at chance where it is not, a blind answerer scores chance everywhere, and
nothing in the vault but probes/ changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.agents.prompt import memory_lines
from engine.cli import main
from engine.lab.probe.report import wilson
from engine.vault.run_store import manifest

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

WORLD = """\
name: Probe
rooms:
  - {id: hall, name: The Hall, description: A long hall., exits: {north: yard}}
  - {id: yard, name: The Yard, description: A muddy yard., exits: {south: hall}}
  - {id: tower, name: The Tower, description: Windy.}
  - {id: cellar, name: The Cellar, description: Damp.}
objects:
  - {id: lamp, name: a brass lamp, description: Warm., location: hall}
characters:
  - {name: Ada, type: agent, location: hall, profile: A gardener.,
     immediate_window: 8, recent_window: 8}
  - {name: Bo, type: agent, location: hall, profile: A smith.,
     immediate_window: 8, recent_window: 8}
  - {name: Pat, type: player, role: admin, location: yard}
  - {name: Pip, type: player, location: tower}
  - {name: Cy, type: agent, location: tower, profile: A hermit.}
  - {name: Bea, type: player, location: cellar}
"""
THINGS = ("well", "gate", "mill", "bread", "fox", "rain", "bell", "key", "roof", "cart")
COLOURS = ("red", "deep", "closed", "warm", "gone", "near", "loud", "lost", "new", "old")
MOVES = ("go north", "go south", "look", "emote waves")
SCRIPT = "script=shared;" + ";".join(  # one walk for all the agents (script=shared):
    f"say The {THINGS[n % 10]} is {COLOURS[n * 7 % 10]} today, number {n}"
    if n % 3
    else MOVES[n % 4]
    for n in range(90)
)  # every quote is said once: who said it, and where, has one answer


@pytest.fixture
def vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    world, vault = tmp_path / "probe.yaml", tmp_path / "vault"
    world.write_text(WORLD, encoding="utf-8")
    code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "30",
                 "--llm", f"fake:{SCRIPT}", "--seed", "2"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    return vault


def _probe(vault: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main(["probe", "--vault", str(vault), "--json", "--per-category", "8", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def _answers(vault: Path, probe: str) -> list[dict[str, Any]]:
    path = vault / "probes" / probe / "answers.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _questions(vault: Path, probe: str) -> dict[str, dict[str, Any]]:
    path = vault / "probes" / probe / "questions.jsonl"
    return {q["id"]: q for q in map(json.loads, path.read_text().splitlines())}


def _oldest(question: dict[str, Any]) -> int:
    """How many memories ago the oldest evidence of ``question`` was."""
    return int(question["age"]) + max(question["evidence"]) - min(question["evidence"])


def test_the_oracle_is_right_where_the_evidence_is_shown(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = manifest(vault)
    report = _probe(vault, capsys, "--compare", "full,window,none", "--llm", "oracle:")
    assert manifest(vault) == before  # nothing but probes/ changed
    folder = vault / "probes" / report["probe"]
    assert {p.name for p in folder.iterdir()} >= {"questions.jsonl", "answers.jsonl",
                                                  "report.json", "calls.jsonl"}  # fmt: skip
    questions = _questions(vault, report["probe"])
    answers = _answers(vault, report["probe"])
    assert {q["category"] for q in questions.values()} >= {"single-hop", "abstention"}

    recent = [a for a in answers if a["config"] == "window"
              and questions[a["question_id"]]["evidence"]
              and _oldest(questions[a["question_id"]]) < 8]  # fmt: skip
    assert recent
    assert all(a["correct"] for a in recent)

    def accuracy(config: str) -> float:
        given = [a for a in answers if a["config"] == config
                 and questions[a["question_id"]]["category"] != "abstention"]  # fmt: skip
        return sum(a["correct"] for a in given) / len(given)

    assert accuracy("none") < 0.5 < accuracy("window")  # no memory shown: guesses
    calls = (folder / "calls.jsonl").read_text().splitlines()
    assert all(json.loads(c)["kind"] == "probe" for c in calls)
    assert len(calls) == len(answers)


def test_a_blind_answerer_scores_chance_and_questions_can_be_asked_again(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _probe(vault, capsys, "--compare", "full,window", "--llm", "blind:")
    answers = [a for a in _answers(vault, first["probe"])
               if _questions(vault, first["probe"])[a["question_id"]]["category"] != "abstention"]  # fmt: skip
    right = sum(a["correct"] for a in answers)
    low, high = wilson(right, len(answers))
    assert low <= 0.25 <= high
    again = _probe(vault, capsys, "--compare", "full", "--llm", "oracle:", "--questions",
                   str(vault / "probes" / first["probe"] / "questions.jsonl"))  # fmt: skip
    assert _questions(vault, again["probe"]) == _questions(vault, first["probe"])


def test_bad_probe_input_is_one_line(vault: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    for args, says in [
        (["--compare", "full,everything"], "--compare 'everything': each is one of"),
        (["--run", "nope"], "has no run record 'nope'"),
        (["--agent", "Nobody"], "--agent Nobody: no such agent"),
        (["--questions", str(tmp_path / "missing.jsonl")], "--questions"),
    ]:
        code = main(["probe", "--vault", str(vault), "--llm", "oracle:", *args])
        err = capsys.readouterr().err
        assert code == 2, args
        assert says in err
        assert err.count("\n") == 1
    code = main(["probe", "--vault", str(tmp_path / "empty"), "--llm", "oracle:"])
    assert code == 2
    assert "has no recorded run" in capsys.readouterr().err


def test_summaries_never_do_worse_than_the_bare_window_on_old_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long run in a small context (2,048 tokens), summaries in the memories' own words
    (``summaries=faithful``): what the window cannot hold any more, the summaries still
    show some of, so the oracle finds it there at least as often as under window. (In
    1,024 tokens, counted by the estimate, a turn's prompt keeps fewer verbatim memories
    than gapped's eight beside what retrieval brings to mind, so full no longer shows all
    that gapped shows.)"""
    things = ("well", "gate", "mill", "bread", "fox", "rain", "bell", "key", "roof", "cart",
              "owl", "boat", "salt")  # fmt: skip
    colours = ("red", "deep", "closed", "warm", "gone", "near", "loud", "lost", "new", "old",
               "wet")  # fmt: skip
    replies = [f"say The {things[n % 13]} is {colours[n * 7 % 11]} today, number {n}"
               if n % 3 else MOVES[n % 4] for n in range(400)]  # fmt: skip
    world, vault = tmp_path / "probe.yaml", tmp_path / "vault"
    world.write_text(WORLD, encoding="utf-8")
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "llm.md").write_text(
        "---\nprofiles:\n  actor:\n    options: {num_ctx: 2048, num_predict: 64, "
        'temperature: 0.9, stop: ["\\n"]}\n---\n'
    )
    script = ";".join(["summaries=faithful", *replies])
    code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "80",
                 "--seed", "3", "--llm", f"fake:{script}"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    report = _probe(vault, capsys, "--compare", "full,waterfall,gapped,window", "--llm",
                    "oracle:", "--per-category", "15")  # fmt: skip
    # full against the window is not checked: each sees what the other misses (the
    # summaries some old evidence, the window more verbatim memories than full's tail), and
    # which questions each wins turns on which chunks the run had summarized when (its
    # background work), so the pair goes either way from one run to the next. The
    # summaries' worth is checked against gapped below, which shows all that full shows
    # but the gap, so it does not turn on that.
    pairs = {(p["a"], p["b"]): p for p in report["paired"]}
    assert ("full", "window") in pairs
    # the reader's ceiling: the oracle handed the evidence is always right
    assert report["configs"]["evidence"]["answerable"]["accuracy"] == 1.0
    assert report["verdict"] == "informative"
    questions = _questions(vault, report["probe"])
    right: dict[str, dict[str, bool]] = {}
    for a in _answers(vault, report["probe"]):
        right.setdefault(a["config"], {})[a["question_id"]] = a["correct"]
    # the oracle guesses alike in every configuration, so full, which shows all that
    # gapped shows and the gap besides, is right wherever gapped is, and more often on
    # evidence older than gapped's verbatim window (8 memories)
    assert all(right["full"][q] for q, ok in right["gapped"].items() if ok)
    beyond = [q for q, question in questions.items()
              if question["evidence"] and _oldest(question) >= 8]  # fmt: skip
    assert sum(right["full"][q] for q in beyond) > sum(right["gapped"][q] for q in beyond)
    # the window's own prompts (the probe's calls): right wherever the evidence was shown,
    # at chance wherever it was not
    folder = vault / "probes" / report["probe"]
    journals = {name: [json.loads(line)["text"] for line in
                       (vault / "agents" / name / "memories.jsonl").read_text().splitlines()]
                for name in ("Ada", "Bo", "Cy")}  # fmt: skip
    calls = [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines()]
    in_window = calls[3 * len(questions) : 4 * len(questions)]  # full, waterfall, gapped, window
    shown, hidden = [], []
    for (question_id, ok), call in zip(right["window"].items(), in_window, strict=True):
        q = questions[question_id]
        assert f"{q['agent']}: {q['question']}" in call["prompt"]
        if not q["evidence"]:  # abstention: nothing to show
            continue
        texts = memory_lines([journals[q["agent"]][seq] for seq in q["evidence"]])
        memory = call["prompt"].split("\nQuestion for ", 1)[0]  # (temporal options quote them)
        (shown if all(t[:40] in memory for t in texts) else hidden).append(ok)
    assert shown
    assert all(shown)
    low, high = wilson(sum(hidden), len(hidden))
    assert len(hidden) >= 10
    assert low <= 0.25 <= high
