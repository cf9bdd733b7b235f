"""The fake answerers: the oracle is right exactly when the evidence is in the prompt
(as a memory line or kept in a summary), guesses otherwise, and says it does not know
when there is nothing to find; the blind one always guesses, never "I don't know"."""

from __future__ import annotations

import asyncio
import json

from engine.lab.probe.asking import DONT_KNOW, question_prompt, read_answer
from engine.lab.probe.fakes import BlindBackend, Known, OracleBackend, question_block
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
