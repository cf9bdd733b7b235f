"""Issue 43's acceptance, end to end: against an oracle village run (``worlds/village.yaml``,
5 agents x 60 turns, summaries in the memories' words), readers that never pick / always
pick what the room shows score ``none`` inside its present-aware baseline's interval,
though not at ``guess``; a reader that abstains without memory has ``full`` vs ``none``
reported significant on the answerable questions; every p-value is Holm-corrected
within its family (answerable, abstention). (One reader's draw lands past an end of the
interval about one time in forty; ``test_room_readers`` checks ten readers.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.lab.probe.report import wilson
from engine.lab.probe.report_table import table
from engine.lab.probe.scoring import Situation, holm
from engine.vault.vault import Vault

pytestmark = pytest.mark.slow  # a whole run and three probes: CI runs it (-m slow)

VILLAGE = Path(__file__).resolve().parents[2] / "worlds" / "village.yaml"
THINGS = ("well", "gate", "mill", "bread", "fox", "rain", "bell", "key", "roof", "cart",
          "owl", "boat", "salt")  # fmt: skip
COLOURS = ("red", "deep", "closed", "warm", "gone", "near", "loud", "lost", "new", "old", "wet")
MOVES = ("go north", "go south", "go east", "go west", "go west", "go east", "emote waves")
SCRIPT = ";".join(["summaries=faithful", "script=shared", *(
    f"say The {THINGS[n % 13]} is {COLOURS[n * 7 % 11]} today, number {n}" if n % 2
    else MOVES[n % 7] for n in range(400))])  # fmt: skip
"""Every quote said once (``script=shared``: one walk for all the agents); the moves take
the agents between the green and its rooms."""


@pytest.fixture(scope="module")
def village(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = tmp_path_factory.mktemp("village") / "vault"
    code = main(["run", str(VILLAGE), "--vault", str(vault), "--headless", "--turns", "60",
                 "--seed", "7", "--llm", f"fake:{SCRIPT}"])  # fmt: skip
    assert code == 0
    return vault


def _probe(vault: Path, capsys: pytest.CaptureFixture[str], reader: str) -> dict[str, Any]:
    capsys.readouterr()
    code = main(["probe", "--vault", str(vault), "--json", "--compare", "full,none",
                 "--per-category", "40", "--seed", "7", "--llm", reader])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    assert report["model"] == reader.rstrip(":")
    return report


def _questions(vault: Path, probe: str) -> list[dict[str, Any]]:
    path = vault / "probes" / probe / "questions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _situations(vault: Path) -> dict[str, Situation]:
    world = Vault(vault).load_world()
    found = {}
    for me in world.characters.values():
        room = world.rooms[me.location]
        people = tuple(c.name for c in world.characters_in(room.id, besides=me))
        found[me.name] = Situation(
            room.name, people, tuple(t.name for t in world.things_in(room.id))
        )
    return found


def _holm_within_families(report: dict[str, Any]) -> None:
    for family in ("answerable", "abstention"):
        mine = [p for p in report["paired"] if p["questions"] == family]
        assert [(p["a"], p["b"]) for p in mine] == [("full", "none"), ("full", "evidence"),
                                                    ("none", "evidence")]  # fmt: skip
        assert [p["p_holm"] for p in mine] == holm([p["p_value"] for p in mine])
    assert {p["questions"] for p in report["paired"]} == {"answerable", "abstention"}


@pytest.mark.parametrize("reader", ["oracle:picks-shown", "oracle:avoids-shown"])
def test_readers_of_the_room_score_none_inside_the_present_aware_baseline(
    village: Path, capsys: pytest.CaptureFixture[str], reader: str
) -> None:
    report = _probe(village, capsys, reader)
    questions = _questions(village, report["probe"])
    here = _situations(village)
    answerable = [q for q in questions if q["category"] not in ("present", "abstention")]
    offered = [q for q in answerable if any(here[q["agent"]].shows(o) for o in q["options"])]
    assert len(answerable) >= 300
    assert len(offered) >= len(answerable) // 4  # the room shows an option often
    assert not any(here[q["agent"]].shows(q["gold"]) for q in answerable)  # never the gold
    none = report["configs"]["none"]["answerable"]
    aware = report["baselines"]["none"]["answerable"]["present_aware"]
    low, high = aware["interval"]
    assert low <= none["accuracy"] <= high, (none, aware)
    assert report["none_check"] == {"config": "none", "accuracy": round(none["accuracy"], 4),
                                    "interval": [low, high], "baseline": "present_aware",
                                    "verdict": "within"}  # fmt: skip
    assert aware["always_shown"] < aware["accuracy"] == 0.25 < aware["never_shown"]
    if reader == "oracle:picks-shown":  # against guess alone it was judged far below
        assert wilson(none["correct"], none["n"])[1] < 0.25
    _holm_within_families(report)
    assert "within: with no memory the reader scores what the room alone allows" in table(report)


def test_the_abstaining_readers_memory_is_significant_on_answerable_questions(
    village: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _probe(village, capsys, "oracle:abstains")
    configs = report["configs"]
    assert configs["none"]["answerable"]["accuracy"] == 0.0
    assert configs["none"]["answerable"]["false_abstention"] == 1.0
    assert configs["full"]["answerable"]["accuracy"] > 0.4
    pairs = {(p["questions"], p["a"], p["b"]): p for p in report["paired"]}
    answerable = pairs[("answerable", "full", "none")]
    assert answerable["b_only"] == 0
    assert answerable["a_only"] >= 50
    assert answerable["p_value"] <= answerable["p_holm"] < 1e-10
    assert answerable["n"] == report["sharing"]["one_per_evidence"] < answerable["all"]["n"]
    assert report["sharing"]["sharing"] > report["sharing"]["questions"] // 2
    # abstention apart: none is right on every one, full (it remembers) on none
    abstention = pairs[("abstention", "full", "none")]
    n = configs["none"]["abstention"]["n"]
    assert (abstention["a_only"], abstention["b_only"], abstention["n"]) == (0, n, n)
    _holm_within_families(report)
    text = table(report)
    assert "answerable:\n  full vs none: " in text
    assert "Holm p=" in text
