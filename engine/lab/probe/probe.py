"""``mudsim probe``: quiz each agent about its own past, under several memory
configurations, and report how often it was right (issue 19).

Everything it writes is in ``vault/probes/<UTC time>/``: ``questions.jsonl`` (written and
flushed before the first question is asked), ``answers.jsonl``, ``report.json``,
``chart.png`` (with the ``analysis`` extra) and its own LLM calls (``calls.jsonl``, kind
``probe``). It reads the vault as the latest ``run`` left it and changes nothing else:
no memory, no knowledge access count, no world file.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from engine import wallclock
from engine.agents.prompt import char_budget, fit_prompt
from engine.agents.thinker import Generator
from engine.errors import LLMError, UnknownRunError, UsageError, VaultError
from engine.lab.probe.asking import (
    CONFIGS,
    DONT_KNOW,
    answer_constraint,
    configured,
    question_prompt,
    read_answer,
)
from engine.lab.probe.chart import write_chart
from engine.lab.probe.fakes import BlindBackend, Known, OracleBackend, question_block
from engine.lab.probe.questions import Question, generate
from engine.lab.probe.report import Answer, build_report, table
from engine.lab.probe.said_did import said_vs_did
from engine.llm.connect import (
    build_dispatcher,
    check_endpoints,
    choose_llm,
    choose_model,
    settle_default,
)
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.local import MODEL_NAME as LOCAL_MODEL
from engine.llm.request import LLMRequest, Priority
from engine.memory.record import MemoryRecord
from engine.sim.prompting import prompt_parts
from engine.sim.recorder import RecordingLLM, RunRecorder
from engine.sim.simulation import Simulation
from engine.vault.files import atomic_write_text, make_folder
from engine.vault.journal_reader import read_records
from engine.vault.run_store import RunFolder, Tape, runs

PROBES = "probes"
ASKS = 2
"""A reply that names no option is asked once more; then it counts as "I don't know"."""


@dataclass(frozen=True)
class ProbeOptions:
    vault: Path
    compare: tuple[str, ...] = ("full",)
    run: str | None = None
    agents: tuple[str, ...] = ()
    per_category: int = 5
    seed: int = 0
    questions: Path | None = None
    llm: str | None = None
    model: str | None = None
    as_json: bool = False


def probed_run(vault: Path, wanted: str | None) -> RunFolder:
    """The run the probe is about: ``wanted`` (an id), else the latest ``run`` record."""
    found = runs(vault)
    if wanted is not None:
        match = [r for r in found if r.id == wanted]
        if not match:
            raise UnknownRunError(f"{vault} has no run record {wanted!r}")
        return match[0]
    kinds = [r for r in found if r.meta().get("kind") == "run"]
    if not kinds:
        raise UnknownRunError(f"{vault} has no recorded run (a `mudsim run` makes one)")
    return kinds[-1]


async def probe(options: ProbeOptions, environ: Mapping[str, str],
                out: TextIO | None = None) -> dict[str, Any]:  # fmt: skip
    out = out or sys.stdout
    for config in options.compare:
        if config not in CONFIGS:
            raise UsageError(f"--compare {config!r}: each is one of {', '.join(CONFIGS)}")
    run = probed_run(options.vault, options.run)
    world = run.folder / "world.yaml"
    sim = Simulation.open(options.vault, world, notice=None)
    try:
        journals = _journals(sim)
        questions = _questions(options, sim, journals)
        folder = _folder(options.vault)
        _write_lines(folder / "questions.jsonl", [json.loads(q.to_json()) for q in questions])
        llm, model, closing = await _answerer(options, sim, questions, journals, environ)
        recorder = RunRecorder(RunFolder(folder), training=False)
        asking = RecordingLLM(llm, recorder, lambda _name: 0)
        try:
            answers = [answer for config in options.compare
                       for answer in await _ask_all(sim, asking, model, questions, journals, config)]  # fmt: skip
        finally:
            recorder.close()
            await closing.aclose()
        _write_lines(folder / "answers.jsonl", [a.to_json() for a in answers])
        asked = {q.agent for q in questions}
        said = {agent: asdict(s) for agent, s in said_vs_did(journals).items() if agent in asked}
        shapes = {q.id: {"category": q.category, "age": q.age} for q in questions}
        report = build_report(shapes, answers, said)
        report |= {"run": run.id, "probe": folder.name, "questions": len(questions)}
        atomic_write_text(folder / "report.json", json.dumps(report, indent=2) + "\n")
        chart = write_chart(report, folder / "chart.png")
        if options.as_json:
            print(json.dumps(report, indent=2), file=out)
        else:
            print(f"Probe {folder.name} of run {run.id}: {len(questions)} questions, "
                  f"{', '.join(options.compare)}", file=out)  # fmt: skip
            print(table(report), file=out)
            print(f"Chart: {chart}" if chart.endswith(".png") else chart, file=out)
        return report
    finally:
        sim.close()


def _journals(sim: Simulation) -> dict[str, list[MemoryRecord]]:
    """Every character's whole journal, by name (agents are asked; what the players
    perceived also gives questions no agent can answer)."""
    return {c.name: read_records(sim.vault.journal_path(c.folder), warn=sim.warn)
            for c in sim.world.characters.values()}  # fmt: skip


def _questions(options: ProbeOptions, sim: Simulation,
               journals: Mapping[str, Sequence[MemoryRecord]]) -> list[Question]:  # fmt: skip
    if options.questions is not None:
        try:
            lines = options.questions.read_text(encoding="utf-8").splitlines()
            return [Question.from_json(line) for line in lines if line.strip()]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"--questions {options.questions}: {exc}") from exc
    everyone = [c.name for c in sim.world.characters.values() if c.type == "agent"]
    agents = [a for a in everyone if not options.agents or a.lower() in
              {n.lower() for n in options.agents}]  # fmt: skip
    if options.agents and not agents:
        raise UsageError(f"--agent {', '.join(options.agents)}: no such agent")
    found = generate(journals, sim.world, per_category=options.per_category, seed=options.seed,
                     agents=agents)  # fmt: skip
    if not found:
        raise UsageError("the agents remember too little to ask them anything yet")
    return found


def _folder(vault: Path) -> Path:
    base = vault / PROBES / f"{wallclock.now():%Y%m%d-%H%M%S}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    try:
        make_folder(folder)
    except OSError as exc:
        raise VaultError(f"cannot make {folder}: {exc}") from exc
    return folder


def _write_lines(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    tape = Tape(path, sync_group=None)  # fsynced line by line: complete before the asking
    try:
        for row in rows:
            tape.append(dict(row))
    finally:
        tape.close()


class _Closing:
    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher

    async def aclose(self) -> None:
        await self.dispatcher.aclose(grace=0)


async def _answerer(options: ProbeOptions, sim: Simulation, questions: Sequence[Question],
                    journals: Mapping[str, Sequence[MemoryRecord]],
                    environ: Mapping[str, str]) -> tuple[Generator, str, _Closing]:  # fmt: skip
    """The LLM that answers (chosen as for ``run``; ``oracle:``/``blind:``: the fakes)."""
    if options.llm in ("oracle:", "blind:"):
        backend: OracleBackend | BlindBackend = (
            OracleBackend(_known(questions, journals), options.seed)
            if options.llm == "oracle:" else BlindBackend(options.seed)
        )  # fmt: skip
        dispatcher = Dispatcher([Endpoint(options.llm, backend, slots=64)])
        return dispatcher, options.llm.rstrip(":"), _Closing(dispatcher)

    def notice(line: str) -> None:
        print(f"mudsim: {line}", file=sys.stderr, flush=True)

    choice = await settle_default(choose_llm(options.llm, environ, sim.settings.llm), notice)
    model = LOCAL_MODEL if choice.local else choose_model(options.model, environ, sim.settings.llm)
    dispatcher = build_dispatcher(choice, retry=RetryPolicy(deadline=sim.settings.llm.timeout))
    try:
        await check_endpoints(dispatcher, [model], int(sim.actor_options["num_ctx"]))
    except BaseException:
        await dispatcher.aclose()
        raise
    return dispatcher, model, _Closing(dispatcher)


def _known(questions: Sequence[Question],
           journals: Mapping[str, Sequence[MemoryRecord]]) -> dict[str, Known]:  # fmt: skip
    known = {}
    for q in questions:
        texts = {r.seq: r.text for r in journals.get(q.agent, ())}
        evidence = tuple(texts[s] for s in q.evidence if s in texts)
        known[question_block(q.agent, q.question, q.options)] = Known(
            tuple(q.options), q.gold, evidence
        )
    return known


async def _ask_all(sim: Simulation, llm: Generator, model: str, questions: Sequence[Question],
                   journals: Mapping[str, Sequence[MemoryRecord]], config: str) -> list[Answer]:  # fmt: skip
    return list(await asyncio.gather(
        *(_ask(sim, llm, model, q, journals, config) for q in questions)
    ))  # fmt: skip


async def _ask(sim: Simulation, llm: Generator, model: str, question: Question,
               journals: Mapping[str, Sequence[MemoryRecord]], config: str) -> Answer:  # fmt: skip
    character = sim.character(question.agent)
    mind = sim.minds[character.id]
    parts = configured(prompt_parts(sim, character), config, immediate=mind.windows.immediate,
                       journal=[r.text for r in journals.get(question.agent, ())])  # fmt: skip
    options = dict(sim.actor_options) | {"temperature": 0.0, "num_predict": 12, "stop": []}
    budget = char_budget(int(options["num_ctx"]), int(options["num_predict"]))
    text = question_prompt(fit_prompt(parts, budget).text, character.name, question.question,
                           question.options)  # fmt: skip
    constraint = answer_constraint(question.options)
    tokens = 0
    for _ in range(ASKS):
        request = LLMRequest(prompt=lambda: text, model=model, options=options,
                             agent=character.name, priority=Priority.CONSOLIDATION,
                             purpose="probe", constraint=lambda: constraint, constrain=True)  # fmt: skip
        try:
            generation = await llm.generate(request)
        except LLMError:  # asked once more, then "I don't know"
            continue
        tokens = generation.prompt_tokens or len(text) // 4
        chosen = read_answer(generation.text, question.options)
        if chosen is not None:
            break
    else:
        chosen = DONT_KNOW
    return Answer(question.id, config, chosen, chosen == question.gold, tokens)
