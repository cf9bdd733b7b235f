"""mudsim benchmarks (run by hand; never part of the test suite).

    python scripts/bench.py            # every benchmark
    python scripts/bench.py engine     # one or more of: engine, dispatch, pool, fairness, memory, tui, commands, journal, retrieval, knowledge, local, telnet, sweep
    python scripts/bench.py retrieval --json   # only the JSON object
    python scripts/bench.py play [--llm URL|local|local:NAME] [--model M] [--turns N] [--seed S] [--log FILE] [--world W]

``local`` needs the embedded model (the ``local`` extra), ``telnet`` takes some five
minutes and ``sweep`` two (with Ray, the ``sweep`` extra): they run only when named, as
does ``play``, the play-quality bench (``bench_play.py``), which takes its own options.

Prints a table and, last, one JSON object with every figure. Each figure is the median
of several repeats; the spread (min-max) is printed next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_common import REPEATS, summary, world_yaml
from bench_fairness import bench_fairness
from bench_knowledge import bench_knowledge
from bench_llm import bench_dispatch, bench_engine, bench_pool
from bench_local import bench_local
from bench_memory import bench_memory
from bench_play import SEED, TRIO, TURNS, play
from bench_retrieval import bench_retrieval
from bench_sweep import bench_sweep
from bench_telnet import bench_telnet
from bench_tui import bench_tui

from engine.memory.record import MemoryKind, MemoryRecord, utc_now
from engine.sim.simulation import Simulation
from engine.vault.journal import EVERY_100_MS, Journal


def bench_commands(commands_per_agent: int = 200) -> dict[str, float]:
    """50 characters in 5 rooms each run look / say / go in turn through Simulation.execute:
    parse, resolve, run, deliver events to observers, append to every journal."""
    script = [
        "look",
        "say Hello, everyone.",
        "go east",
        "go west",
        "emote nods.",
        "think Quiet today.",
    ]
    rates: list[float] = []
    for _ in range(REPEATS):
        with tempfile.TemporaryDirectory() as tmp:
            world = Path(tmp) / "bench.yaml"
            world.write_text(world_yaml(5, 50), encoding="utf-8")
            sim = Simulation.open(Path(tmp) / "vault", world)
            people = list(sim.world.characters.values())
            start = time.perf_counter()
            for turn in range(commands_per_agent):
                for person in people:
                    sim.execute(person, script[turn % len(script)])
            elapsed = time.perf_counter() - start
            sim.close()
            rates.append(commands_per_agent * len(people) / elapsed)
    return summary("commands/s", rates) | {"us_per_command": 1e6 / statistics.median(rates)}


def bench_journal(appends: int = 5000) -> dict[str, float]:
    """Cost of one memory append: grouped fsync (the default, every 100 ms) vs every append."""
    out: dict[str, float] = {}
    for label, group in (("grouped_fsync", EVERY_100_MS), ("fsync_each", None)):
        costs: list[float] = []
        for _ in range(REPEATS):
            with tempfile.TemporaryDirectory() as tmp:
                journal = Journal(Path(tmp) / "memories.jsonl", 0, sync_group=group)
                record = _record_factory()
                start = time.perf_counter()
                for seq in range(appends):
                    journal.append(record(seq))
                costs.append((time.perf_counter() - start) / appends * 1e6)
                journal.close()
        out[f"{label}_us_per_append"] = statistics.median(costs)
        out[f"{label}_us_per_append_min"] = min(costs)
        out[f"{label}_us_per_append_max"] = max(costs)
    return out


def _record_factory() -> Callable[[int], MemoryRecord]:
    at = utc_now()

    def make(seq: int) -> MemoryRecord:
        return MemoryRecord(seq=seq, at=at, kind=MemoryKind.OBSERVATION, text="Ada says, \"Hello.\"",
                            location="r0", occupants=["Ada", "Bo"])  # fmt: skip

    return make


Figures = dict[str, float | dict[str, float]]
"""A benchmark's figures; a nested object is printed as its parts (``select_ms.median``)."""

BENCHMARKS: dict[str, Callable[[], Figures]] = {
    "engine": bench_engine,
    "dispatch": bench_dispatch,
    "pool": bench_pool,
    "fairness": bench_fairness,
    "memory": bench_memory,
    "tui": bench_tui,
    "commands": bench_commands,
    "journal": bench_journal,
    "retrieval": bench_retrieval,
    "knowledge": bench_knowledge,
    "local": bench_local,
    "sweep": bench_sweep,
    "telnet": bench_telnet,
}
OPT_IN = {"local", "telnet", "sweep"}


def play_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench.py play", description=play.__doc__)
    parser.add_argument("--llm", default="local", help="as `mudsim run --llm` (default: local)")
    parser.add_argument("--model", default=None, help="the model, for an HTTP server")
    parser.add_argument("--turns", type=int, default=TURNS, help=f"turns in all (default {TURNS})")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--log", type=Path, default=None, help="write every turn as JSON lines")
    parser.add_argument("--world", type=Path, default=TRIO, help="default: worlds/trio.yaml")
    parser.add_argument("--knowledge-tokens", type=int, default=None, metavar="N",
                        help="the actor's knowledge_tokens (0: no retrieval section)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    args = parser.parse_args(argv)
    if not args.json:
        print(f"mudsim play bench: {args.llm}, {args.turns} turns, seed {args.seed}, "
              f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)  # fmt: skip
    result = asyncio.run(
        play(
            args.llm,
            model=args.model,
            turns=args.turns,
            seed=args.seed,
            log_path=args.log,
            world=args.world,
            knowledge_tokens=args.knowledge_tokens,
        )
    )
    for key, value in () if args.json else result.items():
        print(f"  play       {key:32} {value:>12,.2f}")
    print(json.dumps({"play": result}))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["play"]:
        return play_main(sys.argv[2:])
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("which", nargs="*", choices=[[], *BENCHMARKS], default=[])
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    args = parser.parse_args()
    names = args.which or [name for name in BENCHMARKS if name not in OPT_IN]
    results: dict[str, Figures] = {}
    if not args.json:
        print(f"mudsim benchmarks: median of {REPEATS} repeats; python "
              f"{sys.version.split()[0]}, {os.cpu_count()} cores")  # fmt: skip
    for name in names:
        results[name] = BENCHMARKS[name]()
        if not args.json:
            _print_figures(name, results[name])
    print(json.dumps(results))
    return 0


def _print_figures(name: str, figures: Figures) -> None:
    flat: dict[str, float] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{part}": number for part, number in value.items()})
        else:
            flat[key] = value
    for key, value in flat.items():
        if not key.endswith(("_min", "_max")):
            spread = ""
            if f"{key}_min" in flat:
                spread = f"  (min {flat[f'{key}_min']:,.1f}, max {flat[f'{key}_max']:,.1f})"
            print(f"  {name:10} {key:32} {value:>12,.1f}{spread}")


if __name__ == "__main__":
    sys.exit(main())
