"""The fake answerers: the oracle is right exactly when the evidence is in the prompt
(as a memory line or kept in a summary), guesses otherwise, and says it does not know
when there is nothing to find; the blind one always guesses, never "I don't know"; the
room readers guess among what the room shows, or the rest; the abstaining one says it
does not know exactly when its prompt shows no memory."""

from __future__ import annotations

import asyncio
import json

from engine.agents.prompt import PromptParts, render_prompt
from engine.lab.probe.asking import (
    DONT_KNOW,
    configured,
    evidence_prompt,
    question_prompt,
    read_answer,
)
from engine.lab.probe.fakes import (
    AbstainingReader,
    BlindBackend,
    Known,
    OracleBackend,
    RoomReader,
    question_block,
    remembers,
    room_shows,
)
from engine.llm.request import LLMRequest

OPTIONS = ("Bo", "Pat", "Pip", "Bea", DONT_KNOW)
QUESTION = 'Who told you "The gate is red"?'
EVIDENCE = ('Bo says, "The gate is red, and the well is deep, and the mill is closed."',)


def _ask(backend: OracleBackend | BlindBackend, prompt: str) -> str | None:
    request = LLMRequest(prompt=lambda: question_prompt(prompt, "Ada", QUESTION, OPTIONS),
                         model="oracle")  # fmt: skip
    reply = asyncio.run(backend.generate(request)).text
    assert json.loads(reply)["answer"] in "ABCDE"
    return read_answer(reply, OPTIONS)


def _oracle(evidence: tuple[str, ...] = EVIDENCE, seed: int = 0) -> OracleBackend:
    known = {question_block("Ada", QUESTION, OPTIONS): Known(OPTIONS, "Bo", evidence)}
    return OracleBackend(known, seed)


def test_the_oracle_is_right_when_the_evidence_is_shown() -> None:
    as_a_line = f"You are Ada.\n---\n{EVIDENCE[0]}\n---\n~Ada>"
    assert _ask(_oracle(), as_a_line) == "Bo"
    in_a_summary = f"## Recent past (summary)\nI waited. {EVIDENCE[0][:45]}…\n~Ada>"
    assert _ask(_oracle(), in_a_summary) == "Bo"


def test_without_the_evidence_the_oracle_guesses_among_the_real_options() -> None:
    answers = {_ask(_oracle(seed=n), "You are Ada.\n~Ada>") for n in range(40)}
    assert answers == {"Bo", "Pat", "Pip", "Bea"}


def test_with_nothing_to_find_the_oracle_does_not_know() -> None:
    assert _ask(_oracle(evidence=()), "You are Ada.\n~Ada>") == DONT_KNOW


def test_the_blind_one_always_guesses() -> None:
    blind = BlindBackend(seed=3)
    shown = f"---\n{EVIDENCE[0]}\n---\n~Ada>"
    answers = [_ask(blind, shown) for _ in range(60)]
    assert set(answers) == {"Bo", "Pat", "Pip", "Bea"}


def test_the_oracle_guesses_alike_for_a_question_whatever_else_the_prompt_shows() -> None:
    oracle = _oracle(seed=5)
    prompts = ["You are Ada.\n~Ada>", "You are Ada.\n---\nRain.\n---\n~Ada>",
               "You are Ada.\n## Recent past (summary)\nI slept.\n~Ada>"]  # fmt: skip
    assert len({_ask(oracle, p) for p in prompts * 3}) == 1


def test_two_questions_that_read_alike_are_told_apart_by_their_options() -> None:
    other = ("Pat", "Bo", "Pip", "Bea", DONT_KNOW)  # the same question, other options
    known = {question_block("Ada", QUESTION, OPTIONS): Known(OPTIONS, "Bo", EVIDENCE),
             question_block("Ada", QUESTION, other): Known(other, "Pat", ())}  # fmt: skip
    oracle = OracleBackend(known)
    shown = f"---\n{EVIDENCE[0]}\n---\n~Ada>"
    assert _ask(oracle, shown) == "Bo"
    request = LLMRequest(prompt=lambda: question_prompt(shown, "Ada", QUESTION, other),
                         model="oracle")  # fmt: skip
    assert read_answer(asyncio.run(oracle.generate(request)).text, other) == DONT_KNOW


# -- readers of the room (issue 43) -------------------------------------------------
ROOM_OPTIONS = ("Bo", "The Hall", "Pip", "The Yard", DONT_KNOW)
"""Two options the room shows (The Hall, where Ada is; Bo, who is here), two it does not."""
HERE = PromptParts(name="Ada", profile="A gardener.", room_name="The Hall",
                   room_description="A long hall.", exits=["north"], also_here=["Bo", "Bea (asleep)"],
                   memories=["Pat says, \"The well is dry.\""], recent_summary="I waited.",
                   longterm_summary="", knowledge=[], handbook="", examples=[])  # fmt: skip


def _room_prompt(config: str) -> str:
    return render_prompt(configured(HERE, config, immediate=2, journal=HERE.memories))


def _answer(backend: OracleBackend, prompt: str, gold: str = "Pip",
            evidence: tuple[str, ...] = ("Pip hid the key in the yard, by the old gate.",),
            question: str = QUESTION) -> str | None:  # fmt: skip
    backend.known = {question_block("Ada", question, ROOM_OPTIONS): Known(ROOM_OPTIONS, gold,
                                                                          evidence)}  # fmt: skip
    request = LLMRequest(prompt=lambda: question_prompt(prompt, "Ada", question, ROOM_OPTIONS),
                         model="oracle")  # fmt: skip
    return read_answer(asyncio.run(backend.generate(request)).text, ROOM_OPTIONS)


def test_what_the_prompt_shows_of_the_room() -> None:
    shows = room_shows(_room_prompt("none"))
    assert [o for o in ROOM_OPTIONS if shows(o)] == ["Bo", "The Hall"]
    assert shows("Bea")  # asleep, but here
    assert not shows("Hall")
    bare = evidence_prompt("Ada", "A gardener.", ["You are Ada in The Hall. Bo is here."])
    assert not any(room_shows(bare)(o) for o in ROOM_OPTIONS)  # evidence shows no situation
    assert not remembers(_room_prompt("none"))
    assert remembers(_room_prompt("full"))  # a summary and a memory
    assert remembers(_room_prompt("window"))  # no summary: the memory between the fences
    assert not remembers(evidence_prompt("Ada", "A gardener.", []))
    assert remembers(evidence_prompt("Ada", "A gardener.", ["Bo waves."]))


def test_readers_that_pick_or_avoid_what_the_room_shows() -> None:
    """Without the evidence: one guesses only among the shown options, the other only
    among the rest; handed the evidence, both are right; the blind oracle guesses among
    all four."""
    none = _room_prompt("none")
    picks = {_answer(RoomReader({}, seed, "picks"), none) for seed in range(40)}
    avoids = {_answer(RoomReader({}, seed, "avoids"), none) for seed in range(40)}
    oracle = {_answer(OracleBackend({}, seed), none) for seed in range(40)}
    assert picks == {"Bo", "The Hall"}
    assert avoids == {"Pip", "The Yard"}
    assert oracle == {"Bo", "The Hall", "Pip", "The Yard"}
    shown = f"{none}\n---\nPip hid the key in the yard, by the old gate.\n---"
    for way in ("picks", "avoids"):
        assert _answer(RoomReader({}, 3, way), shown) == "Pip"  # type: ignore[arg-type]
    bare = evidence_prompt("Ada", "A gardener.", [])  # no room: a guess among all four
    assert {_answer(RoomReader({}, seed, "picks"), bare) for seed in range(40)} == oracle


def test_a_reader_that_abstains_without_memory_and_answers_with_it() -> None:
    abstains = AbstainingReader({})
    assert _answer(abstains, _room_prompt("none")) == DONT_KNOW
    assert _answer(abstains, _room_prompt("none"), DONT_KNOW, ()) == DONT_KNOW  # right
    full = _room_prompt("full")
    assert _answer(abstains, full, "Bo", ('Pat says, "The well is dry."',)) == "Bo"  # shown
    guesses = {_answer(AbstainingReader({}, seed), full) for seed in range(40)}
    assert guesses == {"Bo", "The Hall", "Pip", "The Yard"}  # not shown: it guesses
    # with memory it answers even where there is nothing to know: a false answer
    assert _answer(abstains, full, DONT_KNOW, ()) != DONT_KNOW
