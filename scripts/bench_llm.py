"""Benchmarks of thinking agents: the engine's own cost per turn, and the dispatcher's
throughput and CPU cost against the loopback stub server (run by ``bench.py``)."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
from bench_common import REPEATS, summary, world_yaml

from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.ollama import OllamaBackend
from engine.llm.request import Generation, LLMRequest
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation

SCRIPT = ("look", "say {saying}", "go east", "go west", "emote {gesture}", "think Quiet today.")
SAYINGS = (
    "Hello, everyone.",
    "Good morning to you.",
    "Quiet here today.",
    "Anyone seen the smith?",
)
GESTURES = ("nods.", "smiles.", "waves.", "yawns.")
"""Each round of ``SCRIPT`` says and does the next of these. The speech check asks again
when an agent repeats one of its last five speech lines word for word: a script that
said the same lines every round made 1.47 asks a turn, where the engine before the
speech check made one (``asks_per_turn``)."""
T = TypeVar("T")


class InstantBackend:
    """Answers at once, each agent walking through ``SCRIPT``; builds the prompt as a
    real backend does, and keeps nothing."""

    def __init__(self) -> None:
        self.asked: dict[str | None, int] = defaultdict(int)

    async def generate(self, request: LLMRequest) -> Generation:
        prompt = request.prompt()
        count = self.asked[request.agent]
        self.asked[request.agent] = count + 1
        round_ = count // len(SCRIPT)
        line = SCRIPT[count % len(SCRIPT)].format(
            saying=SAYINGS[round_ % len(SAYINGS)], gesture=GESTURES[round_ % len(GESTURES)]
        )
        return Generation(line, len(prompt) // 4, 3, 0.0, "stop")

    async def aclose(self) -> None:
        return None


def _timed(phases: dict[str, float], phase: str, fn: Callable[..., T]) -> Callable[..., T]:
    def wrapper(*args: Any, **kwargs: Any) -> T:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[phase] += time.perf_counter() - start

    return wrapper


def _timed_async(
    phases: dict[str, float], phase: str, fn: Callable[..., Awaitable[T]]
) -> Callable[..., Awaitable[T]]:
    async def wrapper(*args: Any, **kwargs: Any) -> T:
        start = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            phases[phase] += time.perf_counter() - start

    return wrapper


async def _engine_run(folder: Path, turns: int, phases: dict[str, float] | None,
                      record: bool = False) -> float:  # fmt: skip
    world = folder / "bench.yaml"
    world.write_text(world_yaml(5, 50), encoding="utf-8")
    sim = Simulation.open(folder / "vault", world)
    if record:  # the run record, as `mudsim run` keeps it (tapes, gates)
        sim.begin_record("bench", world, {})
    try:
        models = {c.id: "bench" for c in sim.world.characters.values()}
        thinkers = make_thinkers(sim, models, seed=1)
        backend = InstantBackend()
        dispatcher = Dispatcher([Endpoint("instant", backend, slots=len(models))])
        if phases is not None:
            for thinker in thinkers.values():
                thinker.build_prompt = _timed(phases, "prompt", thinker.build_prompt)
                thinker.execute = _timed(phases, "command", thinker.execute)
            for mind in sim.minds.values():
                mind.record = _timed(phases, "memory", mind.record)  # type: ignore[method-assign]
            recollection = sim.recollection
            recollection.section = _timed(phases, "section", recollection.section)  # type: ignore[method-assign]
            dispatcher.generate = _timed_async(phases, "dispatch", dispatcher.generate)  # type: ignore[method-assign]
        scheduler = Scheduler(sim, sim.recorded(dispatcher), thinkers, seed=1)
        start = time.perf_counter()
        await scheduler.run(turns)
        elapsed = time.perf_counter() - start
        assert all(taken == turns for taken in scheduler.turns_taken.values())
        if phases is not None:
            phases["asks"] = sum(backend.asked.values())
        return elapsed
    finally:
        sim.close()


def bench_engine(turns: int = 200) -> dict[str, float]:
    """50 agents in 5 rooms, an instant in-process backend behind the real dispatcher,
    ``turns`` turns each: agent-turns/s, and microseconds per turn split into prompt
    build (of which the retrieval section: ``section_us``), dispatch (queue, announce,
    backend), command and memory (journal appends); ``asks_per_turn``: the model's
    answers a turn took (more than 1 when the thinker asked again)."""
    agent_turns = 50 * turns
    rates: list[float] = []
    recorded: list[float] = []
    split: dict[str, list[float]] = defaultdict(list)
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as tmp:
            rates.append(agent_turns / asyncio.run(_engine_run(Path(tmp), turns, None)))
        with tempfile.TemporaryDirectory() as tmp:
            run = _engine_run(Path(tmp), turns, None, record=True)
            recorded.append(agent_turns / asyncio.run(run))
        with tempfile.TemporaryDirectory() as tmp:
            phases: dict[str, float] = defaultdict(float)
            total = asyncio.run(_engine_run(Path(tmp), turns, phases))
        split["asks_per_turn"].append(phases.pop("asks") / agent_turns)
        us = {k: v / agent_turns * 1e6 for k, v in phases.items()}
        split["prompt_us"].append(us["prompt"])
        split["section_us"].append(us["section"])
        split["dispatch_us"].append(us["dispatch"] - us["prompt"])
        split["command_us"].append(us["command"] - us["memory"])
        split["memory_us"].append(us["memory"])
        split["scheduling_us"].append(total / agent_turns * 1e6 - us["dispatch"] - us["command"])
    result = summary("agent_turns/s", rates) | {"us_per_turn": 1e6 / statistics.median(rates)}
    result |= summary("recorded_agent_turns/s", recorded)
    return result | {key: statistics.median(values) for key, values in split.items()}


async def _bare_httpx(url: str, requests: int, concurrency: int) -> None:
    """The floor: the same streamed requests through one httpx client and a semaphore."""
    gate = asyncio.Semaphore(concurrency)
    body = {"model": "bench", "prompt": "You are Ada.\n~Ada>", "stream": True, "raw": True,
            "options": {"num_ctx": 2048, "stop": ["\n"]}}  # fmt: skip
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as client:

        async def one() -> str:
            async with gate, client.stream("POST", "/api/generate", json=body) as response:
                parts = []
                async for line in response.aiter_lines():
                    if line.strip():
                        chunk = json.loads(line)
                        parts.append(chunk.get("response", ""))
                return "".join(parts)

        await asyncio.gather(*(one() for _ in range(requests)))


async def _dispatched(url: str, requests: int, concurrency: int) -> None:
    dispatcher = Dispatcher([Endpoint(url, OllamaBackend(url), slots=concurrency)])
    request = LLMRequest(prompt=lambda: "You are Ada.\n~Ada>", model="bench",
                         options={"num_ctx": 2048, "stop": ["\n"]})  # fmt: skip
    await asyncio.gather(*(dispatcher.generate(request) for _ in range(requests)))
    assert dispatcher.metrics.failures == 0
    await dispatcher.aclose()


def _measure(run: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(run())  # type: ignore[arg-type]
    return time.perf_counter() - wall, time.process_time() - cpu


def bench_dispatch(
    requests: int = 400, concurrency: int = 8, latency: float = 0.1
) -> dict[str, float]:
    """The stub (its own process) answers after 100 ms; 400 requests at concurrency 8.
    Target: >= 90% of 8 / 0.1 = 80 req/s, and CPU per request <= 1.2x a bare httpx loop."""
    server = subprocess.Popen(
        [sys.executable, "-m", "engine.llm.stub_server", "--model", "bench", "--reply", "say Hello there",
         "--delay", str(latency)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        rates, bare_rates, cpu, bare_cpu = [], [], [], []
        for _ in range(REPEATS):
            wall, used = _measure(lambda: _bare_httpx(url, requests, concurrency))
            bare_rates.append(requests / wall)
            bare_cpu.append(used / requests * 1e6)
            wall, used = _measure(lambda: _dispatched(url, requests, concurrency))
            rates.append(requests / wall)
            cpu.append(used / requests * 1e6)
    finally:
        server.terminate()
        server.wait(timeout=10)
    ceiling = concurrency / latency
    return (
        summary("req/s", rates)
        | {"share_of_ceiling": statistics.median(rates) / ceiling}
        | summary("bare_httpx_req/s", bare_rates)
        | summary("cpu_us_per_request", cpu)
        | summary("bare_httpx_cpu_us_per_request", bare_cpu)
        | {"cpu_ratio": statistics.median(cpu) / statistics.median(bare_cpu)}
    )


async def _pooled(urls: list[str], requests: int, slots: int) -> None:
    dispatcher = Dispatcher([Endpoint(url, OllamaBackend(url), slots=slots) for url in urls])
    request = LLMRequest(prompt=lambda: "You are Ada.\n~Ada>", model="bench",
                         options={"num_ctx": 2048, "stop": ["\n"]})  # fmt: skip
    await asyncio.gather(*(dispatcher.generate(request) for _ in range(requests)))
    assert dispatcher.metrics.failures == 0
    await dispatcher.aclose()


def bench_pool(
    servers: int = 4, slots: int = 4, requests: int = 800, latency: float = 0.1
) -> dict[str, float]:
    """4 stub servers (each its own process) answering in 100 ms, 4 slots each, 800
    requests: target >= 85% of 4 x 4 / 0.1 = 160 req/s."""
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "engine.llm.stub_server",
                "--model",
                "bench",
                "--reply",
                "say Hello there",
                "--delay",
                str(latency),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(servers)
    ]
    try:
        urls = []
        for process in processes:
            assert process.stdout is not None
            urls.append(process.stdout.readline().strip())
        rates = []
        for _ in range(REPEATS):
            wall, _ = _measure(lambda: _pooled(urls, requests, slots))
            rates.append(requests / wall)
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)
    ceiling = servers * slots / latency
    return summary("req/s", rates) | {"share_of_ceiling": statistics.median(rates) / ceiling}
