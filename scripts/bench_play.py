"""``bench.py play``: how sensibly agents play, on a named backend.

    python scripts/bench.py play                     # the embedded model, 201 turns
    python scripts/bench.py play --llm local:gemma3  # another embedded model
    python scripts/bench.py play --llm http://127.0.0.1:11434 --model qwen2.5:0.5b
    python scripts/bench.py play --turns 60 --log /tmp/play.jsonl

``worlds/trio.yaml`` (three agents, short memory windows) runs with a fixed seed as
``mudsim run --headless`` would, compactions included, and every LLM call is logged.
Reported:

- ``sensible_pct``: turns that ran a valid command that is not a no-op, not one of the
  agent's last three commands, not a note whose title is not words, and not speech
  that fails the speech check (``engine.agents.play_quality``); ``verb_<verb>_pct`` for each verb run;
- ``say_with_others_pct``: of the turns taken while someone else was in the agent's
  room (when its turn's first call went out), the share that ran a ``say`` (target 15);
- ``speech_pass_pct``: the ``say``/``emote`` lines that pass the speech check
  (``engine.agents.speech_check``: no prompt markup, nothing copied from the prompt's
  instructions, 80% dictionary words, not one of the agent's last five; target 85),
  and ``speech_lines``, how many there were;
- ``summaries_accepted_pct``: summarizer replies the quality gate accepted;
- ``prompt_tokens_start`` / ``_end``: median prompt tokens of the first and last ten turns;
- ``prefix_reuse_pct``: the share of the turns' prompt tokens the model did not evaluate
  again (its prefix cache served them; the embedded model says, others give 0);
- ``turn_s_median`` / ``_p90``: the model's seconds for a turn's calls (re-asks included;
  waiting for another agent's call is not counted);
- ``warm_calls`` / ``warm_s``: prompts evaluated ahead of a turn after a compaction (the
  embedded model's prefix cache), and their seconds: background work the turns do not
  wait for, but the model does;
- ``restart_turn_s``: the first turn after the vault is opened again with a freshly
  loaded model (cold caches), and ``restart_load_s``, loading the model.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.agents.play_quality import judge_turn
from engine.agents.reply import repeat_key
from engine.agents.speech_check import (
    SPEECH_VERBS,
    Instructions,
    check_speech,
    instruction_lines,
)
from engine.agents.thinker import Thinker, Turn
from engine.commands import parse_line
from engine.llm.dispatcher import Dispatcher
from engine.llm.request import Generation, LLMRequest
from engine.sim.run import RunOptions, connect, make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import LLMLink, Simulation
from engine.world.loader import load_world_file
from engine.world.model import Role

TRIO = Path(__file__).parents[1] / "worlds" / "trio.yaml"
TURNS = 201
SEED = 7
FAST = 1000.0
"""Scheduler speed: think intervals shrink to nothing, turns follow each other."""


@dataclass
class Recorder:
    """Passes calls to the dispatcher and keeps what each one cost."""

    dispatcher: Dispatcher
    company: Callable[[str], bool] = lambda agent: False
    """Whether someone else is in the named agent's room now."""
    calls: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    """Agent name -> its actor calls since its last turn ended."""

    async def generate(self, request: LLMRequest) -> Generation:
        turn_starts = request.role == "actor" and request.agent and not self.pending[request.agent]
        company = self.company(request.agent) if turn_starts and request.agent else None
        generation = await self.dispatcher.generate(request)
        call = {
            "role": request.role,
            "agent": request.agent,
            "prompt_tokens": generation.prompt_tokens,
            "cached_tokens": generation.cached_tokens,
            "completion_tokens": generation.completion_tokens,
            "seconds": generation.latency,
            "reply": generation.text,
        }
        self.calls.append(call)
        if request.role == "actor" and request.agent:
            call["company"] = company
            self.pending[request.agent].append(call)
        return generation


@dataclass
class TurnLog:
    sim: Simulation
    recorder: Recorder
    thinkers: dict[str, Thinker] = field(default_factory=dict)
    """Agent name -> its thinker (whose last prompt the speech check reads)."""
    turns: list[dict[str, Any]] = field(default_factory=list)
    keys: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    speech: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Agent name -> its say/emote texts so far."""

    def __call__(self, happening: Happening) -> None:
        if isinstance(happening, Turn):
            self.turns.append(self.record(happening))

    def record(self, turn: Turn) -> dict[str, Any]:
        calls = self.recorder.pending.pop(turn.agent, [])
        parsed = parse_line(turn.command) if turn.command else None
        verb = None
        if parsed is not None:
            resolved = self.sim.registry.resolve(parsed.verb, Role.PLAYER)
            verb = resolved.command.key if resolved.command else parsed.verb
        key = repeat_key(turn.command) if turn.command else None
        ok = turn.result is not None and turn.result.ok and turn.error is None
        thinker = self.thinkers.get(turn.agent)
        prompt = thinker.last_prompt if thinker and thinker.last_prompt else ""
        instructions = Instructions.of(instruction_lines(prompt))
        argument = parsed.args if parsed else ""
        recent_speech = self.speech[turn.agent]
        noise_check = thinker.noise_check if thinker else False  # (on for the embedded model)
        verdict = judge_turn(
            verb if turn.command else None,
            argument,
            ok=ok,
            key=key,
            recent_keys=self.keys[turn.agent],
            instructions=instructions,
            recent_speech=recent_speech,
            noise_check=noise_check,
        )
        speech = None
        if turn.command and verb in SPEECH_VERBS:
            speech = check_speech(argument, instructions, recent_speech,
                                  noise_check=noise_check).why  # fmt: skip
            recent_speech.append(argument)
        if key is not None:
            self.keys[turn.agent].append(key)
        return {
            "agent": turn.agent,
            "command": turn.command,
            "verb": verb if turn.command else None,
            "result": turn.result.text if turn.result else turn.error,
            "verdict": verdict.why,
            "speech": speech,
            "sensible": verdict.sensible,
            "asks": turn.asks,
            "fell_back": turn.fell_back,
            "seconds": sum(c["seconds"] for c in calls),
            "prompt_tokens": calls[-1]["prompt_tokens"] if calls else 0,
            "cached_tokens": calls[-1]["cached_tokens"] if calls else 0,
            "replies": [c["reply"] for c in calls],
            "company": bool(calls and calls[0].get("company")),
        }


async def _session(
    vault: Path, world: Path, llm: str, model: str | None, seed: int, turns_per_agent: int,
    knowledge_tokens: int | None = None,
) -> tuple[TurnLog, dict[str, float]]:  # fmt: skip
    sim = Simulation.open(vault, world)
    if knowledge_tokens is not None:  # the actor profile's, as llm.md would set it
        llm_config = sim.settings.llm
        actor = llm_config.profiles["actor"].model_copy(
            update={"knowledge_tokens": knowledge_tokens}
        )
        profiles = {**llm_config.profiles, "actor": actor}
        sim.settings = sim.settings.model_copy(
            update={"llm": llm_config.model_copy(update={"profiles": profiles})}
        )
    try:
        options = RunOptions(world=world, vault=vault, llm=llm, model=model, seed=seed)
        started = time.perf_counter()
        dispatcher, models = await connect(sim, options, {})
        load_s = time.perf_counter() - started
        recorder = Recorder(dispatcher, company=lambda agent: _company(sim, agent))
        sim.compactor.llm = recorder
        thinkers = make_thinkers(sim, models, seed)
        names = {sim.world.characters[a].name: m for a, m in models.items()}
        sim.llm = LLMLink(dispatcher, names, thinkers)
        scheduler = Scheduler(sim, recorder, thinkers, seed=seed, speed=FAST)
        log = TurnLog(sim, recorder, {t.name: t for t in thinkers.values()})
        scheduler.listen(log)
        started = time.perf_counter()
        try:
            await scheduler.run(turns_per_agent)
        finally:
            await scheduler.finish(30.0)
            await sim.compactor.drain(600.0)
            await sim.supervisor.aclose()
            await dispatcher.aclose(grace=1.0)
            sim.save()
        tally = sim.compactor.tally
        summaries = [c for c in recorder.calls if c["role"] == "summarizer"]
        return log, {
            "wall_s": time.perf_counter() - started,
            "load_s": load_s,
            "summary_calls": len(summaries),
            "summaries_rejected": tally.rejected,
            "compactions": tally.committed,
            "warm_calls": sum(1 for c in recorder.calls if c["role"] == "warm"),
            "warm_s": sum(c["seconds"] for c in recorder.calls if c["role"] == "warm"),
            "extractive": tally.extractive,
        }
    finally:
        sim.close()


def _company(sim: Simulation, agent: str) -> bool:
    """Whether anyone but ``agent`` (a character's name) is in its room."""
    for character in sim.world.characters.values():
        if character.name == agent:
            return bool(sim.world.characters_in(character.location, besides=character))
    return False


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]


async def play(
    llm: str = "local",
    *,
    model: str | None = None,
    turns: int = TURNS,
    seed: int = SEED,
    log_path: Path | None = None,
    world: Path = TRIO,
    knowledge_tokens: int | None = None,
) -> dict[str, float]:
    """Play ``turns`` turns of worlds/trio.yaml on ``llm`` and report how sensibly and how
    fast the agents played (see the module's docstring)."""
    agents = sum(1 for c in load_world_file(world).characters.values() if c.type == "agent")
    per_agent = -(-turns // max(1, agents))
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        log, run = await _session(vault, world, llm, model, seed, per_agent, knowledge_tokens)
        after, restart = await _session(vault, world, llm, model, seed + 1, 1, knowledge_tokens)
    records = log.turns
    done = [r for r in records if r["command"]]
    verbs = Counter(r["verb"] for r in done)
    seconds = [r["seconds"] for r in records if r["seconds"]]
    tokens = [r["prompt_tokens"] for r in records if r["prompt_tokens"]]
    accepted = run["summary_calls"] - run["summaries_rejected"]
    first = after.turns[0] if after.turns else {"seconds": float("nan")}
    with_company = [r for r in records if r["company"]]
    speech = [r for r in records if r["speech"] is not None]
    out: dict[str, float] = {
        "turns": len(records),
        "say_with_others_pct": _pct(
            sum(r["verb"] == "say" for r in with_company), len(with_company)
        ),
        "speech_pass_pct": _pct(sum(r["speech"] == "passes" for r in speech), len(speech)),
        "speech_lines": len(speech),
        "speech_fallbacks": sum(r["fell_back"] for r in records),
        "sensible_pct": _pct(sum(r["sensible"] for r in records), len(records)),
        **{f"verb_{v}_pct": _pct(n, len(records)) for v, n in verbs.most_common()},
        **{
            f"not_{why.replace(' ', '_')}_pct": _pct(n, len(records))
            for why, n in Counter(r["verdict"] for r in records).items()
            if why != "sensible"
        },
        "summaries_accepted_pct": _pct(accepted, run["summary_calls"]),
        "summary_calls": run["summary_calls"],
        "compactions": run["compactions"],
        "extractive_summaries": run["extractive"],
        "prompt_tokens_start": statistics.median(tokens[:10]) if tokens else 0,
        "prompt_tokens_end": statistics.median(tokens[-10:]) if tokens else 0,
        "prefix_reuse_pct": _pct(
            sum(r["cached_tokens"] for r in records), sum(r["prompt_tokens"] for r in records)
        ),
        "turn_s_median": statistics.median(seconds) if seconds else 0,
        "turn_s_p90": _p90(seconds) if seconds else 0,
        "warm_calls": run["warm_calls"],
        "warm_s": run["warm_s"],
        "run_wall_s": run["wall_s"],
        "restart_load_s": restart["load_s"],
        "restart_turn_s": first["seconds"],
    }
    if log_path is not None:
        with log_path.open("w", encoding="utf-8") as file:
            for record in records:
                file.write(json.dumps(record, ensure_ascii=False) + "\n")
            for call in log.recorder.calls:
                if call["role"] != "actor":
                    file.write(json.dumps({"call": call}, ensure_ascii=False) + "\n")
            file.write(json.dumps({"summary": out}) + "\n")
    return out
