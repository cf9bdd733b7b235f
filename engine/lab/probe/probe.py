"""``mudsim probe``: quiz each agent about its own past, under several memory
configurations, and report how often it was right (issues 19 and 31).

Everything it writes is in ``vault/probes/<UTC time>/``: ``questions.jsonl`` (written and
flushed before the first question is asked), ``answers.jsonl``, ``report.json``,
``chart.png`` (with the ``analysis`` extra) and its own LLM calls (``calls.jsonl``, kind
``probe``). It reads the vault and changes nothing else: no memory, no knowledge access
count, no world file.

The questions are about the runs asked for (``--run``, repeatable; ``--runs all``;
default the latest record of any kind), each agent's journal cut at each run's end
(``provenance``); they are asked now, of the agent as the vault holds it (its prompt,
summaries and bank), so ``age`` counts memories back from now. "Where is X now?" is
asked only of the latest record's cut (an earlier run's "now" is not the agent's).
The reader's ceiling (``evidence``) is always asked, last, when not in ``--compare``.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from engine import wallclock
from engine.errors import MudsimError, UsageError, VaultError
from engine.lab.probe.ask_llm import answerer, ask_all
from engine.lab.probe.asking import CEILING, CONFIGS
from engine.lab.probe.chart import write_chart
from engine.lab.probe.provenance import (
    chosen_runs,
    cut,
    file_sha256,
    is_latest,
    journal_ends,
    vault_sha256,
)
from engine.lab.probe.question_kinds import CATEGORIES
from engine.lab.probe.questions import Question, generate
from engine.lab.probe.report import Answer, build_report
from engine.lab.probe.report_table import table
from engine.lab.probe.said_did import said_vs_did
from engine.lab.probe.scoring import Situation
from engine.lab.replay import replay_run
from engine.llm.model_identity import model_digests
from engine.memory.record import MemoryRecord
from engine.provenance import code_identity
from engine.sim.recorder import RecordingLLM, RunRecorder
from engine.sim.simulation import Simulation
from engine.vault.files import atomic_write_text, make_folder
from engine.vault.journal_reader import read_records
from engine.vault.run_store import RunFolder, Tape

PROBES = "probes"
LATEST_ONLY = ("knowledge-update",)
"""Categories asked only of the latest record's cut ("now" is the agent's now)."""


@dataclass(frozen=True)
class ProbeOptions:
    vault: Path
    compare: tuple[str, ...] = ("full",)
    runs: tuple[str, ...] = ()
    """Run record ids (or unique beginnings); empty: the latest record of any kind."""
    agents: tuple[str, ...] = ()
    per_category: int = 5
    seed: int = 0
    questions: Path | None = None
    llm: str | None = None
    model: str | None = None
    as_json: bool = False
    all_runs: bool = False
    """``--runs all``: every record's run, each cut at its own end."""
    output: Path | None = None
    """Where the probe's folder goes (None: ``vault``): the vault asked about, when
    ``vault`` is a replay of one of its older runs."""
    label: str | None = None
    """The run the questions are about, when ``vault`` is a replay of it."""


async def probe(options: ProbeOptions, environ: Mapping[str, str],
                out: TextIO | None = None) -> dict[str, Any]:  # fmt: skip
    out = out or sys.stdout
    for config in options.compare:
        if config not in CONFIGS:
            raise UsageError(f"--compare {config!r}: each is one of {', '.join(CONFIGS)}")
    compare = tuple(dict.fromkeys([*options.compare, CEILING]))
    chosen = chosen_runs(options.vault, options.runs, options.all_runs)
    if len(chosen) == 1 and not is_latest(options.vault, chosen[0]) and options.questions is None:
        return await _as_it_was(options, chosen[0], environ, out)
    world = _world_file(options.vault, chosen)
    sim = Simulation.open(options.vault, world, notice=None)
    try:
        journals = _journals(sim)
        situations = {name: _situation(sim, name) for name in journals}
        questions = _questions(options, sim, journals, situations, chosen)
        folder = _folder(options.output or options.vault)
        _write_lines(folder / "questions.jsonl", [json.loads(q.to_json()) for q in questions])
        asked_set = file_sha256(folder / "questions.jsonl")
        asked_from = vault_sha256(options.vault)  # the vault the prompts are built from
        drawn = {q.vault_sha256 for q in questions}
        if drawn - {asked_from}:
            print(f"mudsim: warning: the questions were drawn from another state of the vault "
                  f"({', '.join(sorted(drawn))[:80]}) than the one asked now ({asked_from[:16]}"
                  "...): golds may no longer hold", file=sys.stderr)  # fmt: skip
        answering = await answerer(options.llm, options.model, options.seed, sim, questions,
                                   journals, environ)  # fmt: skip
        recorder = RunRecorder(RunFolder(folder), training=False)
        asking = RecordingLLM(answering.llm, recorder, lambda _name: 0)
        try:
            answers: list[Answer] = []
            for config in compare:
                answers += await ask_all(sim, asking, answering.model, questions, journals, config)
        finally:
            recorder.close()
            await answering.aclose()
        _write_lines(folder / "answers.jsonl", [a.to_json() for a in answers])
        asked = {q.agent for q in questions}
        said = {agent: asdict(s) for agent, s in said_vs_did(journals).items() if agent in asked}
        report = build_report(questions, answers, situations, said)
        report |= {
            "run": options.label or chosen[-1].id,
            "runs": [options.label] if options.label else [r.id for r in chosen],
            "probe": folder.name,
            "questions": len(questions), "question_set_sha256": asked_set,
            "vault_sha256": questions[0].vault_sha256 if questions else "",
            "model": answering.model, "endpoints": answering.endpoints,
            "num_ctx": int(sim.actor_options["num_ctx"]), "seed": options.seed,
            "per_category": options.per_category, "compare": list(compare),
            **code_identity().to_json(),
            "model_digests": model_digests(answering.llm.endpoints, [answering.model]),
            "asked_vault_sha256": asked_from,
        }  # fmt: skip
        atomic_write_text(folder / "report.json", json.dumps(report, indent=2) + "\n")
        chart = write_chart(report, folder / "chart.png")
        if options.as_json:
            print(json.dumps(report, indent=2), file=out)
        else:
            print(f"Probe {folder.name} of {', '.join(r.id for r in chosen)}: "
                  f"{len(questions)} questions, {', '.join(compare)}", file=out)  # fmt: skip
            print(table(report), file=out)
            print(f"Chart: {chart}" if chart.endswith(".png") else chart, file=out)
        return report
    finally:
        sim.close()


async def _as_it_was(options: ProbeOptions, run: RunFolder, environ: Mapping[str, str],
                     out: TextIO) -> dict[str, Any]:  # fmt: skip
    """Probe an older run with the vault as it was at its end: its record replayed into
    a scratch vault (summaries, bank and handbook as they were then), asked there, the
    probe's folder written in ``options.vault``. A run that does not replay is refused."""
    with tempfile.TemporaryDirectory(prefix="mudsim-probe-") as scratch:
        then = Path(scratch) / "vault"
        try:
            await replay_run(run.folder, then, out=io.StringIO())
        except MudsimError as exc:
            raise UsageError(f"--run {run.id} is not the latest run, and the vault as it was at "
                             f"its end cannot be rebuilt from its record ({exc}); probe the "
                             "latest run instead") from exc  # fmt: skip
        return await probe(replace(options, vault=then, runs=(), output=options.vault,
                                   label=run.id), environ, out)  # fmt: skip


def _world_file(vault: Path, chosen: Sequence[RunFolder]) -> Path:
    """The world file kept by the newest chosen record that kept one."""
    for run in reversed(chosen):
        if (run.folder / "world.yaml").is_file():
            return run.folder / "world.yaml"
    raise VaultError(f"{chosen[-1].folder} kept no world file (world.yaml)")


def _journals(sim: Simulation) -> dict[str, list[MemoryRecord]]:
    """Every character's whole journal, by name (agents are asked; what the players
    perceived also gives questions no agent can answer)."""
    return {c.name: read_records(sim.vault.journal_path(c.folder), warn=sim.warn)
            for c in sim.world.characters.values()}  # fmt: skip


def _situation(sim: Simulation, name: str) -> Situation:
    """What ``name``'s prompt shows of the present: its room, who and what is there."""
    character = sim.character(name)
    room = sim.world.rooms[character.location]
    people = tuple(c.name for c in sim.world.characters_in(room.id, besides=character))
    things = tuple(t.name for t in sim.world.things_in(room.id))
    return Situation(room.name, people, things)


def _questions(options: ProbeOptions, sim: Simulation,
               journals: Mapping[str, Sequence[MemoryRecord]],
               situations: Mapping[str, Situation], chosen: Sequence[RunFolder]) -> list[Question]:  # fmt: skip
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
    drawn_from = vault_sha256(options.vault)
    folders = {c.name: f"agents/{c.folder}/memories.jsonl" for c in sim.world.characters.values()}
    counts = {name: len(records) for name, records in journals.items()}
    found: list[Question] = []
    seen: set[tuple[str, str, str]] = set()
    for run in chosen:
        ends = journal_ends(options.vault, run, folders)
        cuts = {name: cut(records, None if ends is None else ends.get(name, 0))
                for name, records in journals.items()}  # fmt: skip
        latest = is_latest(options.vault, run)
        categories = [c for c in CATEGORIES if latest or c not in LATEST_ONLY]
        for q in generate(cuts, sim.world, per_category=options.per_category, seed=options.seed,
                          agents=agents, situations=situations, counts=counts,
                          run=options.label or run.id,
                          categories=categories):  # fmt: skip
            key = (q.agent, q.question, q.gold)
            if key in seen:
                continue
            seen.add(key)
            ident = q.id if len(chosen) == 1 else f"{run.id}/{q.id}"
            found.append(replace(q, id=ident, vault_sha256=drawn_from))
    golds = Counter((q.agent, q.question) for q in found)  # after `seen`: one per gold
    found = [q for q in found if golds[q.agent, q.question] == 1]  # never two golds
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
