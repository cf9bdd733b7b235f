"""The sweep benchmark (run by ``bench.py sweep``): 8 runs of a 3-agent world
(``worlds/trio.yaml``) on the loopback stub (its own process, answering at once), run

- one after another in this process (``InProcess``: the baseline, no pool at all);
- on the process pool with 1 worker, then 2 (``--workers``), with no Ray up;
- then, with a local Ray up (2 CPUs, started before the clock), in this process again
  and as Ray tasks, 1 run at a time, then 2. Ray's idle daemons take a share of two
  cores (the pool's speed-up fell from 1.75x to 1.45x with them up), so each executor
  is measured beside its own baseline under the same load.

Figures: the pool's speed-up from 1 worker to 2 (target >= 1.7x on two cores), beside
what two processes of plain Python get on the machine at the same moment (the ceiling: a
shared VM gives less than 2); the overhead per run of the pool and of Ray, each with one
run at a time, against the same runs in this process ((executor's time - in-process
time) / runs; targets: pool <= 0.5 s, Ray <= 2 s); and, on their own, what starts once
per sweep: the pool's fork server (it imports mudsim once; every worker is then forked
from it) and a local Ray. Medians of ``REPEATS`` repeats.
"""

from __future__ import annotations

import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_common import REPEATS, summary

from engine.lab.sweep.executor import Executor, InProcess
from engine.lab.sweep.pool import PoolExecutor
from engine.lab.sweep.sweep import SweepOptions, run_sweep

RUNS = 8
TURNS = 20
TRIO = Path(__file__).resolve().parent.parent / "worlds" / "trio.yaml"
REPLIES = ("say Hello there.", "look", "go east", "emote waves.", "go west", "think Quiet.")


def _sweep_file(folder: Path, url: str) -> Path:
    shutil.copy(TRIO, folder / "trio.yaml")
    path = folder / "bench.yaml"
    path.write_text(f"world: trio.yaml\nturns: {TURNS}\nseeds: {RUNS}\nllm: {url}\n"
                    "runs:\n  - {model: bench}\n", encoding="utf-8")  # fmt: skip
    return path


def _timed(path: Path, folder: Path, name: str, executor: Callable[[Path], Executor]) -> float:
    """Seconds for the whole sweep into a fresh OUT (every run must finish)."""
    out = folder / name
    started = time.perf_counter()
    with open(os.devnull, "w") as quiet:
        results = run_sweep(SweepOptions(path, out), {}, err=quiet, executor=executor(out))
    seconds = time.perf_counter() - started
    failed = [r.outcome.error for r in results if r.outcome.status != "finished"]
    if len(results) != RUNS or failed:
        raise RuntimeError(f"the {name} sweep did not finish every run: {failed[:1]}")
    shutil.rmtree(out)
    return seconds


def _spin(n: int = 5_000_000) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _machine_speedup() -> float:
    """What two processes of pure Python get over one after another on this machine now
    (the ceiling for the pool's speed-up; a shared VM gives less than 2)."""
    started = time.perf_counter()
    _spin()
    _spin()
    serial = time.perf_counter() - started
    with PoolExecutor(2)._pool() as pool:
        list(pool.map(_spin, [10, 10]))  # both workers up before the clock
        started = time.perf_counter()
        list(pool.map(_spin, [5_000_000, 5_000_000]))
        return serial / (time.perf_counter() - started)


def _first_pool_start() -> float:
    """Seconds until a fresh process's first pool worker answers: the fork server starts
    and imports mudsim, once per sweep (the timed sweeps after it reuse it)."""
    started = time.perf_counter()
    with PoolExecutor(1)._pool() as pool:
        pool.submit(os.getpid).result()
    return time.perf_counter() - started


def _pool_phase(path: Path, folder: Path) -> dict[str, list[float]]:
    """In-process, 1 worker, 2 workers, and the machine's ceiling: with no Ray up (its
    idle daemons take a share of two cores that is not the pool's to pay)."""
    times: dict[str, list[float]] = {k: [] for k in ("ceiling", "in", "pool1", "pool2")}
    for _ in range(REPEATS):
        times["ceiling"].append(_machine_speedup())
        times["in"].append(_timed(path, folder, "in", lambda _out: InProcess()))
        for n in (1, 2):
            times[f"pool{n}"].append(_timed(path, folder, f"pool{n}",
                                            lambda _out, n=n: PoolExecutor(n)))  # type: ignore[misc]  # fmt: skip
    return times


def _ray_phase(path: Path, folder: Path) -> tuple[dict[str, list[float]], float]:
    """In-process, then Ray 1 and 2 runs at a time, all with the local Ray up (so its
    overhead is measured against the same runs under the same load); and Ray's start."""
    import ray

    from engine.lab.sweep.ray import RayExecutor

    times: dict[str, list[float]] = {k: [] for k in ("in", "ray1", "ray2")}
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    ray_start = time.perf_counter() - started
    try:
        for _ in range(REPEATS):
            times["in"].append(_timed(path, folder, "in", lambda _out: InProcess()))
            for n in (1, 2):
                times[f"ray{n}"].append(_timed(path, folder, f"ray{n}",
                                               lambda out, n=n: RayExecutor(None, out.resolve(), workers=n)))  # type: ignore[misc]  # fmt: skip
    finally:
        ray.shutdown()
    return times, ray_start


def bench_sweep() -> dict[str, float]:
    server = subprocess.Popen(
        [sys.executable, "-m", "engine.llm.stub_server", "--model", "bench",
         *(part for reply in REPLIES for part in ("--reply", reply))],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    pool_start = _first_pool_start()
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            path = _sweep_file(folder, url)
            pool = _pool_phase(path, folder)
            ray, ray_start = _ray_phase(path, folder)
    finally:
        server.terminate()
        server.wait(timeout=10)
    p = {name: statistics.median(values) for name, values in pool.items()}
    r = {name: statistics.median(values) for name, values in ray.items()}
    return (
        summary("in_process_s", pool["in"])
        | summary("pool_1_worker_s", pool["pool1"])
        | summary("pool_2_workers_s", pool["pool2"])
        | {"pool_speedup_2_vs_1": p["pool1"] / p["pool2"],
           "machine_2_process_speedup": p["ceiling"],
           "pool_overhead_s_per_run": (p["pool1"] - p["in"]) / RUNS}
        | summary("in_process_ray_up_s", ray["in"])
        | summary("ray_1_at_a_time_s", ray["ray1"])
        | summary("ray_2_at_a_time_s", ray["ray2"])
        | {"ray_speedup_2_vs_1": r["ray1"] / r["ray2"],
           "ray_overhead_s_per_run": (r["ray1"] - r["in"]) / RUNS,
           "ray_start_s": ray_start,
           "pool_first_start_s": pool_start,
           "in_process_s_per_run": p["in"] / RUNS}
    )  # fmt: skip


if __name__ == "__main__":
    import json

    print(json.dumps(bench_sweep(), indent=2))
