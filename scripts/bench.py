"""mudsim benchmarks (run by hand; never part of the test suite).

    python scripts/bench.py            # every benchmark
    python scripts/bench.py engine     # one or more of: engine, dispatch, pool, fairness, memory, tui, commands, journal, retrieval, knowledge, local, telnet, serve, sweep
    python scripts/bench.py retrieval --json   # only the JSON object
    python scripts/bench.py play [--llm URL|local|local:NAME] [--model M] [--turns N] [--seed S] [--log FILE] [--world W]
    python scripts/bench.py engine --baseline REV        # ratios to an earlier commit's
    python scripts/bench.py engine --baseline FILE.json  # ... to figures saved with --json

``--baseline REV`` checks REV out into a temporary worktree and measures it and this
checkout in the same run, interleaved (baseline, this, baseline, ...; ``--repeats``
each, medians), each in its own process, so a slower or busier machine weighs on both
alike; it prints each figure, the baseline's, this checkout's and the ratio (this /
baseline). ``--turns`` sets the engine bench's turns per agent (default 200);
``--repeats`` also sets the runs of each ``fairness`` case (medians, min-max).

``local`` needs the embedded model (the ``local`` extra), ``telnet`` takes some five
minutes, ``serve`` (``mudsim serve`` under 100 telnet and 50 web clients, three runs;
``bench_serve.py`` takes sizes) some eight and ``sweep`` two (with Ray, the ``sweep``
extra): they run only when named, as
does ``play``, the play-quality bench (``bench_play.py``), which takes its own options.

Prints a table and, last, one JSON object with every figure. Each figure is the median
of several repeats; the spread (min-max) is printed next to it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from bench_common import (
    REPEATS,
    BaselineError,
    comparison_rows,
    figures_of,
    load_baseline,
    medians,
    summary,
    world_yaml,
)
from bench_fairness import bench_fairness
from bench_knowledge import bench_knowledge
from bench_llm import bench_dispatch, bench_engine, bench_pool
from bench_local import bench_local
from bench_memory import bench_memory
from bench_play import SEED, TRIO, TURNS, play
from bench_retrieval import bench_retrieval
from bench_serve import bench_serve
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


Figures = Mapping[str, object]
"""A benchmark's figures; a nested object is printed as its parts (``select_ms.median``,
``sizes.100000.select_ms.median``)."""

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
    "serve": bench_serve,
}
OPT_IN = {"local", "telnet", "serve", "sweep"}


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
    parser.add_argument(
        "--baseline",
        metavar="REV|FILE",
        help="engine only: ratios to a commit's figures (or a saved --json)",
    )
    parser.add_argument("--repeats", type=int, default=REPEATS,
                        help="runs of each side (--baseline), of each fairness case")  # fmt: skip
    parser.add_argument("--turns", type=int, default=None, help="engine: turns per agent")
    args = parser.parse_args()
    if args.baseline is not None:
        if set(args.which) - {"engine"}:
            parser.error("--baseline compares the engine bench only")
        try:
            return compare_main(args.baseline, args.repeats, args.turns, quiet=args.json)
        except BaselineError as exc:
            print(f"bench.py: baseline {args.baseline}: {exc}", file=sys.stderr)
            return 2
    names = args.which or [name for name in BENCHMARKS if name not in OPT_IN]
    results: dict[str, Figures] = {}
    if not args.json:
        print(f"mudsim benchmarks: median of {REPEATS} repeats; python "
              f"{sys.version.split()[0]}, {os.cpu_count()} cores")  # fmt: skip
    for name in names:
        if name == "engine" and args.turns:
            results[name] = bench_engine(args.turns)
        elif name == "fairness":
            results[name] = bench_fairness(args.repeats)
        else:
            results[name] = BENCHMARKS[name]()
        if not args.json:
            _print_figures(name, results[name])
    print(json.dumps(results))
    return 0


def _flat(figures: Figures, prefix: str = "") -> dict[str, float]:
    """``figures`` with each nested object's parts as ``key.part`` (at any depth)."""
    flat: dict[str, float] = {}
    for key, value in figures.items():
        if isinstance(value, Mapping):
            flat.update(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, int | float):
            flat[f"{prefix}{key}"] = value
    return flat


def _print_figures(name: str, figures: Figures) -> None:
    flat = _flat(figures)
    for key, value in flat.items():
        if not key.endswith(("_min", "_max")):
            spread = ""
            if f"{key}_min" in flat:
                spread = f"  (min {flat[f'{key}_min']:,.1f}, max {flat[f'{key}_max']:,.1f})"
            print(f"  {name:10} {key:32} {value:>12,.1f}{spread}")


SCRIPTS = Path(__file__).resolve().parent
DRIVER = """
import runpy, sys
scripts, repeats, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, scripts)
import bench_common
bench_common.REPEATS = repeats
import bench_llm
if turns:
    if len(bench_llm.bench_engine.__defaults__ or ()) != 1:
        sys.exit("its bench_engine takes no turn count")
    bench_llm.bench_engine.__defaults__ = (turns,)
sys.argv = [scripts + "/bench.py", "engine", "--json"]
runpy.run_path(scripts + "/bench.py", run_name="__main__")
"""
"""Runs a tree's ``scripts/bench.py engine --json`` with ``REPEATS`` (and the engine's
turns) set, in that tree (its folder first on the path)."""


def engine_once(tree: Path, repeats: int, turns: int | None) -> dict[str, float]:
    """One run of ``tree``'s engine bench, in its own process: its figures."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(tree / "scripts"), str(repeats), str(turns or 0)],
        cwd=tree, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        missing = re.search(r"No module named '([\w.]+)'", last)
        hint = (f" (it runs in this environment: pip install {missing[1].split('.')[0]}, or"
                " what that commit's pyproject.toml lists)") if missing else ""  # fmt: skip
        raise BaselineError(f"its engine bench failed in {tree}: {last}{hint}")
    return figures_of(done.stdout)


def compare_main(baseline: str, repeats: int, turns: int | None, *, quiet: bool) -> int:
    """``--baseline``: measure, print figure, baseline, this, ratio, and the JSON."""
    here = SCRIPTS.parent
    if not quiet:
        print(f"mudsim engine bench against {baseline}: {repeats} runs each, interleaved; "
              f"python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)  # fmt: skip
    path = Path(baseline)
    if path.suffix == ".json" or path.is_file():
        before = load_baseline(path)
        this = medians(engine_once(here, 1, turns) for _ in range(repeats))
    else:
        with worktree(here, baseline) as tree:
            theirs: list[dict[str, float]] = []
            ours: list[dict[str, float]] = []
            for _ in range(repeats):
                theirs.append(engine_once(tree, 1, turns))
                ours.append(engine_once(here, 1, turns))
            before, this = medians(theirs), medians(ours)
    rows = comparison_rows(before, this)
    if not rows:
        raise BaselineError("no figure in common with this checkout's")
    for key, old, new, ratio in () if quiet else rows:
        print(f"  engine     {key:32} {old:>12,.1f} {new:>12,.1f} {ratio:>8.2f}x")
    print(json.dumps({"engine": this, "baseline": before,
                      "ratio": {key: ratio for key, _, _, ratio in rows}}))  # fmt: skip
    return 0


@contextlib.contextmanager
def worktree(repo: Path, rev: str) -> Iterator[Path]:
    """``rev`` checked out (detached) in a temporary worktree, removed afterwards (on an
    error or Ctrl-C too)."""
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                           cwd=repo, capture_output=True, text=True, check=False)  # fmt: skip
    if found.returncode != 0:
        raise BaselineError("neither a saved JSON file nor a commit of this repository")
    with tempfile.TemporaryDirectory(prefix="mudsim-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        added = subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), found.stdout.strip()],
            cwd=repo, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if added.returncode != 0:
            raise BaselineError(f"git worktree add failed: {added.stderr.strip()}")
        try:
            if not (tree / "scripts" / "bench_llm.py").is_file():
                raise BaselineError("its scripts/ has no engine bench (bench_llm.py)")
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)],
                           cwd=repo, capture_output=True, check=False)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
