"""Benchmark of the terminal UI (run by ``bench.py tui``): key-to-effect latency while
50 agents think and 8 LLM calls are in flight against the loopback stub."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_common import world_yaml
from textual import events

from engine.sim.run import RunOptions
from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp, PromptScreen
from engine.tui.runner import build_app, close_app

PRESSES = 20


async def _effect(app: MudsimApp, key: str, done: Callable[[], bool]) -> float:
    """Seconds from a key arriving (as the terminal driver delivers it) until its effect
    shows. Pilot's own ``press`` also waits for the whole app to go idle, which a busy
    world never quite does, so it would measure that wait instead."""
    assert app._driver is not None
    event = events.Key(key, " " if key == "space" else key)
    event.set_sender(app)
    start = time.perf_counter()
    app._driver.send_message(event)
    while not done():  # noqa: ASYNC110 - polling is the measurement
        await asyncio.sleep(0.001)
    return time.perf_counter() - start


async def _measure(folder: Path, url: str) -> dict[str, list[float]]:
    world = folder / "fifty.yaml"
    world.write_text(world_yaml(5, 50), encoding="utf-8")
    sim = Simulation.open(folder / "vault", world)
    options = RunOptions(world, folder / "vault", url, "bench")
    app = await build_app(sim, options, os.environ)
    assert app.dispatcher is not None
    app.dispatcher.endpoints[0].slots = 8
    app.scheduler.speed = 64.0
    timings: dict[str, list[float]] = {"pause_ms": [], "filter_ms": [], "prompt_ms": []}
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            while app.dispatcher.in_flight < 8:  # noqa: ASYNC110 - waiting for the load
                await asyncio.sleep(0.01)
            for _ in range(PRESSES):
                state = "running" if app.scheduler.paused else "paused"
                timings["pause_ms"].append(
                    await _effect(app, "space", lambda s=state: s in app.sub_title)  # type: ignore[misc]
                )
                before = app.filter
                timings["filter_ms"].append(
                    await _effect(app, "f", lambda b=before: app.filter != b)  # type: ignore[misc]
                )
                timings["prompt_ms"].append(
                    await _effect(app, "p", lambda: isinstance(app.screen, PromptScreen))
                )
                await pilot.press("escape")
            assert app.dispatcher.in_flight + app.dispatcher.queued > 0
            await pilot.press("q")
    finally:
        await close_app(app)
        sim.close()
    return timings


def bench_tui() -> dict[str, float]:
    """Key-to-effect latency (pause, filter, prompt screen) with 50 agents and 8 calls in
    flight (stub answering in 2 s). Target: <= 100 ms."""
    server = subprocess.Popen(
        [sys.executable, "-m", "engine.llm.stub_server", "--model", "bench", "--reply", "say Hello there",
         "--reply", "look", "--delay", "2.0"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            timings = asyncio.run(_measure(Path(tmp), url))
    finally:
        server.terminate()
        server.wait(timeout=10)
    result: dict[str, float] = {}
    for key, values in timings.items():
        ms = [v * 1000 for v in values]
        result[key] = statistics.median(ms)
        result[f"{key}_min"] = min(ms)
        result[f"{key}_max"] = max(ms)
    return result
