"""Asking the questions through an LLM: the answerer (chosen as for ``run``, or one of
the probe's fakes), each configuration's prompt, and each reply scored as an outcome
(``scoring.outcome``: a reply that names no option, twice, is ``unparsed``)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from engine.agents.prompt import fit_prompt
from engine.agents.thinker import Generator
from engine.errors import LLMError
from engine.lab.probe.asking import (
    CEILING,
    DONT_KNOW,
    answer_constraint,
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
)
from engine.lab.probe.questions import Question
from engine.lab.probe.report import Answer
from engine.lab.probe.scoring import outcome
from engine.llm.connect import (
    build_dispatcher,
    check_endpoints,
    choose_llm,
    choose_model,
    named_model,
    settle_default,
)
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.request import LLMRequest, Priority
from engine.memory.record import MemoryRecord
from engine.memory.secrets import redact
from engine.memory.tokens import ESTIMATE, TokenCounter, counter_of, cut_text, fits, prompt_room
from engine.sim.prompting import prompt_parts
from engine.sim.simulation import Simulation

ASKS = 2
"""A reply that names no option is asked once more; then it is ``unparsed``."""
REPLY_TOKENS = 12
"""An answer's ``num_predict`` (a letter, or a short JSON object)."""
FAKES = ("oracle:", "blind:", "oracle:picks-shown", "oracle:avoids-shown", "oracle:abstains")
"""The probe's own fake readers (``engine.lab.probe.fakes``)."""


@dataclass
class Answerer:
    llm: Dispatcher
    model: str
    endpoints: list[str]

    async def aclose(self) -> None:
        await self.llm.aclose(grace=0)


async def answerer(llm: str | None, model: str | None, seed: int, sim: Simulation,
                   questions: Sequence[Question], journals: Mapping[str, Sequence[MemoryRecord]],
                   environ: Mapping[str, str]) -> Answerer:  # fmt: skip
    """The LLM that answers (chosen as for ``run``; one of ``FAKES``: that fake)."""
    if llm in FAKES:
        backend = _fake(llm, known(questions, journals), seed)
        dispatcher = Dispatcher([Endpoint(llm, backend, slots=64)])
        return Answerer(dispatcher, llm.rstrip(":"), [llm])

    def notice(line: str) -> None:
        print(f"mudsim: {line}", file=sys.stderr, flush=True)

    named = named_model(model, environ, sim.settings.llm)  # never swapped for another
    choice = await settle_default(choose_llm(llm, environ, sim.settings.llm), notice,
                                  named=named)  # fmt: skip
    name = choice.embedded_model if choice.local else choose_model(model, environ, sim.settings.llm)
    dispatcher = build_dispatcher(choice, retry=RetryPolicy(deadline=sim.settings.llm.timeout))
    try:
        await check_endpoints(dispatcher, [name], int(sim.actor_options["num_ctx"]))
    except BaseException:
        await dispatcher.aclose()
        raise
    return Answerer(dispatcher, name, [redact(e.url) for e in choice.endpoints])


def _fake(llm: str, knows: Mapping[str, Known], seed: int) -> OracleBackend | BlindBackend:
    if llm == "blind:":
        return BlindBackend(seed)
    if llm == "oracle:abstains":
        return AbstainingReader(knows, seed)
    if llm in ("oracle:picks-shown", "oracle:avoids-shown"):
        return RoomReader(knows, seed, "picks" if llm == "oracle:picks-shown" else "avoids")
    return OracleBackend(knows, seed)


def known(questions: Sequence[Question],
          journals: Mapping[str, Sequence[MemoryRecord]]) -> dict[str, Known]:  # fmt: skip
    found = {}
    for q in questions:
        found[question_block(q.agent, q.question, q.options)] = Known(
            tuple(q.options), q.gold, evidence_texts(q, journals)
        )
    return found


def evidence_texts(question: Question,
                   journals: Mapping[str, Sequence[MemoryRecord]]) -> tuple[str, ...]:  # fmt: skip
    texts = {r.seq: r.text for r in journals.get(question.agent, ())}
    return tuple(texts[s] for s in question.evidence if s in texts)


def query_words(question: Question) -> str:
    """What ``full+query`` brings to mind for: the question and its real options."""
    return " ".join([question.question, *(o for o in question.options if o != DONT_KNOW)])


async def ask_all(sim: Simulation, llm: Generator, model: str, questions: Sequence[Question],
                  journals: Mapping[str, Sequence[MemoryRecord]], config: str) -> list[Answer]:  # fmt: skip
    return list(await asyncio.gather(
        *(ask(sim, llm, model, q, journals, config) for q in questions)
    ))  # fmt: skip


def prompt_for(sim: Simulation, question: Question,
               journals: Mapping[str, Sequence[MemoryRecord]], config: str,
               tokens: TokenCounter = ESTIMATE) -> str:  # fmt: skip
    """The prompt ``config`` shows for ``question``, the question appended, fitted to the
    actor's ``num_ctx`` less the answer (``REPLY_TOKENS``) as ``tokens`` counts."""
    character = sim.character(question.agent)
    asked = question_prompt("", character.name, question.question, question.options)
    room = (prompt_room({**sim.actor_options, "num_predict": REPLY_TOKENS}) or 0) - tokens.count(
        asked
    )
    if config == CEILING:
        head = _evidence(character.name, character.profile, evidence_texts(question, journals),
                         room, tokens)  # fmt: skip
        return question_prompt(head, character.name, question.question, question.options)
    mind = sim.minds[character.id]
    parts = prompt_parts(sim, character)
    if config == "full+query":
        words = query_words(question)
        parts = replace(parts, knowledge=sim.recollection.section(character, words=words))
    parts = configured(parts, config, immediate=mind.windows.immediate,
                       journal=[r.text for r in journals.get(question.agent, ())])  # fmt: skip
    return question_prompt(fit_prompt(parts, room, tokens).text, character.name,
                           question.question, question.options)  # fmt: skip


def _evidence(name: str, profile: str, evidence: Sequence[str], room: int,
              tokens: TokenCounter) -> str:  # fmt: skip
    """``evidence_prompt`` within ``room``: over it, the profile is cut to a quarter of
    it and each memory to its share of half of it, then the oldest memories go."""
    head = evidence_prompt(name, profile, evidence)
    if fits(head, room, tokens):
        return head
    share = max(1, room // (2 * max(1, len(evidence))))
    kept = [cut_text(text, share, tokens) for text in evidence]
    profile = cut_text(profile, max(1, room // 4), tokens)
    head = evidence_prompt(name, profile, kept)
    while kept and not fits(head, room, tokens):
        kept.pop(0)
        head = evidence_prompt(name, profile, kept)
    return head


async def ask(sim: Simulation, llm: Generator, model: str, question: Question,
              journals: Mapping[str, Sequence[MemoryRecord]], config: str) -> Answer:  # fmt: skip
    text = prompt_for(sim, question, journals, config, counter_of(llm))
    options = dict(sim.actor_options) | {
        "temperature": 0.0,
        "num_predict": REPLY_TOKENS,
        "stop": [],
    }
    constraint = answer_constraint(question.options)
    tokens = 0
    chosen: str | None = None
    for _ in range(ASKS):
        request = LLMRequest(prompt=lambda: text, model=model, options=options,
                             agent=question.agent, priority=Priority.CONSOLIDATION,
                             purpose="probe", constraint=lambda: constraint, constrain=True)  # fmt: skip
        try:
            generation = await llm.generate(request)
        except LLMError:  # asked once more, then unparsed
            continue
        tokens = generation.prompt_tokens or len(text) // 4
        chosen = read_answer(generation.text, question.options)
        if chosen is not None:
            break
    return Answer(question.id, config, chosen, outcome(chosen, question.gold), tokens)
