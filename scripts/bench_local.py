"""``bench.py local``: the embedded model (needs the ``local`` extra).

- Turn latency on ``worlds/pocket.yaml`` (two agents taking turns, the world moving on
  as their commands run), with and without prefix reuse: ``prompt_ms`` is a turn cut to
  one new token (almost all of it is evaluating the prompt), ``turn_ms`` a whole
  constrained turn.
- Parse failures with and without the command grammar: the share of replies that hold
  no command whose verb exists (``unparseable``), and that are not a valid command where
  the agent stands (``invalid``: an unknown verb, a made-up exit or thing, a malformed
  note).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from engine.agents.reply import parse_reply
from engine.commands import parse_line
from engine.llm.local import LocalBackend
from engine.llm.request import LLMRequest
from engine.sim.prompting import build_prompt, command_constraint, command_grammar
from engine.sim.simulation import Simulation
from engine.world.model import Role

POCKET = Path(__file__).parents[1] / "worlds" / "pocket.yaml"
TURNS = 24
"""Turns per measurement (alternating agents)."""


async def _turns(
    backend: LocalBackend, *, constrain: bool, num_predict: int, seed: int
) -> list[dict[str, float]]:
    """Play TURNS turns on a fresh pocket world; one record per turn."""
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
    return out
