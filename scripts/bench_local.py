"""``bench.py local``: the embedded model (needs the ``local`` extra).

- Turn latency on ``worlds/pocket.yaml`` (two agents taking turns, the world moving on
  as their commands run), with and without prefix reuse: ``prompt_ms`` is a turn cut to
  one new token (almost all of it is evaluating the prompt), ``turn_ms`` a whole
  constrained turn.
- Parse failures with and without the command grammar: the share of replies that hold
  no command whose verb exists (``unparseable``), and that are not a valid command where
  the agent stands (``invalid``: an unknown verb, a made-up exit or thing, a malformed
  note).
- ``serve_llm_ratio``: the same sequence of turns (the prompts, options, seeds and
  command constraints of a game played in-process, frozen) answered through a loopback
  ``serve-llm`` server (the Ollama backend, constrained as it is by default for this
  model) over answered in-process, each from a fresh model and prefix cache, interleaved
  (in-process, serve-llm, in-process ...); the median ratio of the pairs, with its
  spread. ``serve_llm_same_pct``: the turns whose command came out the same both ways.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from engine.agents.reply import parse_reply
from engine.commands import parse_line
from engine.llm.local import MODEL_NAME, LocalBackend
from engine.llm.ollama import OllamaBackend
from engine.llm.ollama_server import OllamaCompatibleServer
from engine.llm.request import Generation, LLMRequest
from engine.llm.serve import EmbeddedSource
from engine.memory.constraint import Constraint
from engine.sim.prompting import build_prompt, command_constraint, command_grammar
from engine.sim.simulation import Simulation
from engine.world.model import Role

POCKET = Path(__file__).parents[1] / "worlds" / "pocket.yaml"
TURNS = 24
"""Turns per measurement (alternating agents)."""
RATIO_REPEATS = 3
"""Pairs (in-process, serve-llm) the ratio is the median of."""


async def _turns(
    backend: LocalBackend, *, constrain: bool, num_predict: int, seed: int,
    frozen: list[LLMRequest] | None = None,
) -> list[dict[str, float]]:  # fmt: skip
    """Play TURNS turns on a fresh pocket world; one record per turn. ``frozen`` gets
    each turn's request as sent (its prompt and constraint fixed)."""
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        sim = Simulation.open(Path(tmp) / "vault", POCKET)
        options = {**sim.actor_options, "num_predict": num_predict}
        try:
            for turn in range(TURNS):
                agent = sim.character(("Wren", "Ash")[turn % 2])
                grammar = command_grammar(sim, agent)
                request = LLMRequest(
                    prompt=lambda a=agent: build_prompt(sim, a),  # type: ignore[misc]
                    model="local", options={**options, "seed": seed * 1000 + turn},
                    constraint=lambda a=agent: command_constraint(sim, a),  # type: ignore[misc]
                    constrain=constrain,
                )  # fmt: skip
                if frozen is not None:
                    frozen.append(_frozen(request))
                started = time.perf_counter()
                reply = await backend.generate(request)
                elapsed = time.perf_counter() - started
                line = parse_reply(reply.text, agent.name)
                parsed = parse_line(line) if line else None
                known = (
                    parsed is not None
                    and sim.registry.resolve(parsed.verb, Role.PLAYER).how == "exact"
                )
                if line:
                    sim.execute(agent, line)
                records.append({"ms": elapsed * 1000, "prompt_tokens": reply.prompt_tokens,
                                "tokens": reply.completion_tokens,
                                "unparseable": float(not known),
                                "invalid": float(line is None or not grammar.accepts(line))})  # fmt: skip
        finally:
            sim.close()
    return records


def _median(records: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in records)


def _share(records: list[dict[str, float]], key: str) -> float:
    return 100 * sum(r[key] for r in records) / len(records)


def bench_local() -> dict[str, float]:
    return asyncio.run(_bench())


async def _bench() -> dict[str, float]:
    out: dict[str, float] = {}
    for label, reuse in (("reuse", True), ("no_reuse", False)):
        backend = LocalBackend(prefix_cache=reuse)
        await backend.load()
        await _turns(backend, constrain=False, num_predict=1, seed=0)  # warm up
        prompt = await _turns(backend, constrain=False, num_predict=1, seed=1)
        whole = await _turns(backend, constrain=True, num_predict=64, seed=2)
        out[f"prompt_tokens_{label}"] = _median(prompt, "prompt_tokens")
        out[f"prompt_ms_{label}"] = _median(prompt, "ms")
        out[f"turn_ms_{label}"] = _median(whole, "ms")
        out[f"turn_tokens_{label}"] = _median(whole, "tokens")
    out["prompt_speedup_x"] = out["prompt_ms_no_reuse"] / out["prompt_ms_reuse"]
    backend = LocalBackend()
    for label, constrain in (("free", False), ("grammar", True)):
        runs = [
            r
            for seed in (3, 4)
            for r in await _turns(backend, constrain=constrain, num_predict=64, seed=seed)
        ]
        out[f"unparseable_pct_{label}"] = _share(runs, "unparseable")
        out[f"invalid_pct_{label}"] = _share(runs, "invalid")
    return out | await serve_llm_ratio()


def _frozen(request: LLMRequest) -> LLMRequest:
    prompt = request.prompt()
    constraint = request.constraint() if request.constraint is not None else None
    return LLMRequest(prompt=lambda: prompt, model=request.model, options=request.options,
                      constraint=None if constraint is None else _const(constraint),
                      constrain=request.constrain)  # fmt: skip


def _const(constraint: Constraint) -> Callable[[], Constraint]:
    return lambda: constraint


async def _answered(backend: LocalBackend | OllamaBackend,
                    requests: list[LLMRequest]) -> tuple[float, list[str]]:  # fmt: skip
    """Seconds the requests took, one after the other, and the commands they gave."""
    spent, commands = 0.0, []
    for request in requests:
        started = time.perf_counter()
        reply = await backend.generate(request)
        spent += time.perf_counter() - started
        commands.append(_command(reply))
    return spent, commands


def _command(reply: Generation) -> str:
    """The command of a reply: as given, or the ``command`` of a JSON reply."""
    try:
        data = json.loads(reply.text)
    except ValueError:
        return reply.text.strip()
    return str(data.get("command", "")) if isinstance(data, dict) else reply.text.strip()


async def serve_llm_ratio(repeats: int = RATIO_REPEATS) -> dict[str, float]:
    """serve-llm's time over in-process time for the same turns (see the module)."""
    turns: list[LLMRequest] = []
    await _turns(LocalBackend(persist=False), constrain=True, num_predict=64, seed=5,
                 frozen=turns)  # fmt: skip
    over_http = [
        LLMRequest(
            prompt=t.prompt,
            model=MODEL_NAME,
            options=t.options,
            constraint=t.constraint,
            constrain=None,
        )
        for t in turns
    ]
    ratios, local_s, served_s, same = [], [], [], []
    for _ in range(repeats):
        local = LocalBackend(persist=False)
        await local.load()
        spent_local, wanted = await _answered(local, turns)
        with OllamaCompatibleServer(EmbeddedSource(LocalBackend(persist=False))) as server:
            client = OllamaBackend(server.url)
            try:
                await client.facts(MODEL_NAME)  # as a run's start-up check does; loads it
                spent_served, got = await _answered(client, over_http)
            finally:
                await client.aclose()
        ratios.append(spent_served / spent_local)
        local_s.append(spent_local)
        served_s.append(spent_served)
        same.append(100 * sum(a == b for a, b in zip(wanted, got, strict=True)) / len(turns))
    return {"serve_llm_ratio": statistics.median(ratios), "serve_llm_ratio_min": min(ratios),
            "serve_llm_ratio_max": max(ratios), "serve_llm_s": statistics.median(served_s),
            "in_process_s": statistics.median(local_s),
            "serve_llm_same_pct": statistics.median(same)}  # fmt: skip
