"""Said vs did on hand-built journals: kept, broken, beyond the horizon, and the
phrasings that are (and are not) intentions."""

from __future__ import annotations

import pytest
from probe_log import HALL, YARD, Log

from engine.lab.probe.said_did import said_vs_did, utterance_intentions
from engine.memory.record import MemoryKind


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("I'll go to the library.", [("go", "library")]),
        ("I will examine the ledger and then go north", [("examine", "ledger"), ("go", "north")]),
        ("I am going north", [("go", "north")]),
        ("I’m heading to The Old Yard to see Bo", [("go", "old yard")]),
        ("let me look at the lamp", [("examine", "lamp")]),
        ("Let me look around.", [("look", "")]),
        ("I'm going to examine the well", [("examine", "well")]),
        ("I will not go north", []),
        ("I'm going to examine it", []),
        ("I'll go see what is up", []),
        ("Shall I go north?", []),
        ("The weather is fine.", []),
    ],
)
def test_phrasings(text: str, found: list[tuple[str, str]]) -> None:
    assert utterance_intentions(text) == found


def _log() -> Log:
    log = Log("Ada", "hall")
    log.said("I'll go to the yard and examine the well.")  # 0: two intentions
    log.thought("Let me look at the lamp")  # 1: never examined: broken
    log.did("look", HALL)  # 2
    log.went("go n", "north", "yard", YARD)  # 3: keeps "go to the yard"
    log.failed("examine wel", "You don't see 'wel' here.")  # 4: a failed try is no keeping
    log.did("examine well", "an old well: Deep and cold.")  # 5: keeps "examine the well"
    return log


def test_kept_and_broken() -> None:
    log = _log()
    report = said_vs_did({"Ada": log.records})["Ada"]
    assert [(i.seq, i.action, i.target, i.kept_by) for i in report.intentions] == [
        (0, "go", "yard", 3), (0, "examine", "well", 5), (1, "examine", "lamp", None),
    ]  # fmt: skip
    assert (report.found, report.kept, report.rate) == (3, 2, pytest.approx(2 / 3))


def test_beyond_the_horizon_is_not_kept() -> None:
    log = Log("Ada", "hall")
    log.thought("I am going north")
    for n in range(3):
        log.did("look", HALL + f"\n{n}")
    log.saw("Bo leaves north to The Yard.")  # not Ada's command: not a turn
    log.went("north", "north", "yard", YARD)  # Ada's 4th command after the thought
    assert said_vs_did({"Ada": log.records}, horizon=4)["Ada"].kept == 1
    assert said_vs_did({"Ada": log.records}, horizon=3)["Ada"].kept == 0


def test_a_step_toward_a_far_room_is_not_reaching_it() -> None:
    log = Log("Ada", "hall")
    log.said("I'll go to the cellar")
    log.did(
        "go cellar", "You go stair to The Tower.\nThe Tower\n(Heading for The Cellar: then east.)"
    )
    log.did(
        "go cellar", "You go east to The Cellar.\nThe Cellar\n(You have arrived at The Cellar.)"
    )
    intention = said_vs_did({"Ada": log.records}, horizon=1)["Ada"].intentions[0]
    assert intention.kept_by is None
    assert said_vs_did({"Ada": log.records}, horizon=2)["Ada"].intentions[0].kept_by == 2


def test_look_around_and_an_agent_with_no_intentions() -> None:
    log = Log("Bo", "yard")
    log.said("Let me look around")
    log.did("look", YARD)
    quiet = Log("Pip", "hall")
    quiet.said("Hello.")
    report = said_vs_did({"Bo": log.records, "Pip": quiet.records, "Pat": []})
    assert (report["Bo"].found, report["Bo"].kept, report["Bo"].rate) == (1, 1, 1.0)
    assert (report["Pip"].found, report["Pip"].rate) == (0, None)
    assert report["Pat"].intentions == ()


def test_only_own_says_and_thoughts_count() -> None:
    log = Log("Ada", "hall")
    log.heard("Bo", "I'll go north")  # Bo's words, not Ada's
    log.add(MemoryKind.THOUGHT, "You think: I'll go north")  # no command: not a think
    log.failed("say I'll go north", "Say what?")
    log.went("go north", "north", "yard", YARD)
    assert said_vs_did({"Ada": log.records})["Ada"].found == 0
