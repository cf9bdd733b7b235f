"""The ``sweep`` verb: ``mudsim sweep SWEEP.yaml --out DIR [...]`` runs a sweep, and
``mudsim sweep report DIR [--by SETTING ...]`` reports on one. The work is imported
only when the verb runs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from engine.errors import UsageError
from engine.lab.sweep.plan import MAX_RUNS

SUMMARY: Final = ("Run a sweep file's runs (a grid of settings x seeds) on a local process "
                  "pool or Ray, into one results table; or report on one.")  # fmt: skip
USAGE: Final = (
    "mudsim sweep SWEEP.yaml --out DIR [--workers N] [--ray [ADDRESS]] [--dry-run] "
    "[--skip-failed] [--rerun-changed] [--max-runs N]\n"
    "       mudsim sweep report DIR [--by SETTING ...]"
)
DETAILS: Final = (
    SUMMARY + " Each run is what `mudsim run WORLD --headless --turns N --seed S` does, in "
    "its own vault at DIR/runs/<run key>/vault/. A sweep stopped or killed half-way and "
    "started again keeps the finished runs and runs the rest from scratch (failed ones too, "
    "unless --skip-failed). A finished run made with another LLM, model, probe or mudsim "
    "version than the sweep file now gives is never reused: the start is refused, naming "
    "it, unless --rerun-changed. Results: DIR/results.parquet (pip install "
    "'mudsim[analysis]') and DIR/results.csv, one row per run, rewritten as each run ends. "
    "`sweep report DIR` prints each figure's mean "
    "and 95% interval over seeds per configuration, and draws a chart per figure under "
    "DIR/report/. --ray: a local Ray, or --ray ray://HEAD:10001 (or auto) for a cluster "
    "(pip install 'mudsim[sweep]', which brings Ray Client for ray://)."
)
REPORT: Final = "report"


def add(verbs: Any, *, positive: Callable[[str], int]) -> None:
    """Add ``sweep`` to ``mudsim``'s sub-parsers (``positive``: a whole number > 0)."""
    sub = verbs.add_parser("sweep", help=SUMMARY, description=DETAILS, usage=USAGE)
    sub.add_argument("target", nargs="+", metavar="SWEEP.yaml | report DIR",
                     help="the sweep file; or `report` and a sweep's --out")  # fmt: skip
    sub.add_argument("--out", type=Path, metavar="DIR",
                     help="where the runs and results go (required to run a sweep)")  # fmt: skip
    sub.add_argument("--workers", type=positive, metavar="N",
                     help="runs at once (default: this machine's cores; with --ray, the "
                     "cluster's CPUs over each run's)")  # fmt: skip
    sub.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                     help="each run a Ray task: a local Ray, or the cluster at ADDRESS "
                     "(ray://HEAD:10001, auto)")  # fmt: skip
    sub.add_argument("--dry-run", action="store_true",
                     help="print one line per run (its key first); run nothing")  # fmt: skip
    sub.add_argument("--skip-failed", action="store_true",
                     help="keep failed runs as they are instead of running them again")  # fmt: skip
    sub.add_argument("--rerun-changed", action="store_true",
                     help="run again the finished runs made with another LLM, model, probe or "
                     "mudsim version than the sweep file now gives (without it such runs "
                     "refuse the start: exit 2, nothing is run or written)")  # fmt: skip
    sub.add_argument("--max-runs", type=positive, metavar="N", default=MAX_RUNS,
                     help=f"refuse a sweep file that makes more than N runs (default "
                     f"{MAX_RUNS:,}; counted before the runs are made)")  # fmt: skip
    sub.add_argument("--by", nargs="+", metavar="SETTING",
                     help="report: group by these settings (default: every setting swept)")  # fmt: skip
    sub.set_defaults(run=sweep)


def sweep(args: argparse.Namespace) -> None:
    target: list[str] = list(args.target)
    if args.ray is not None and args.ray.endswith((".yaml", ".yml")):
        target.insert(0, args.ray)  # `--ray SWEEP.yaml`: the file, not an address
        args.ray = ""
    if target[0] == REPORT:
        _report(args, target[1:])
    else:
        _run(args, target)


def _run(args: argparse.Namespace, target: list[str]) -> None:
    from engine.lab.sweep.sweep import SweepOptions, failures, run_sweep

    if len(target) != 1:
        raise UsageError(f"sweep takes one sweep file, got {len(target)}: {' '.join(target)}")
    if args.out is None:
        raise UsageError("sweep needs --out DIR: where its runs and results go")
    if args.by:
        raise UsageError("--by is for `mudsim sweep report DIR`")
    options = SweepOptions(Path(target[0]), args.out, args.workers, args.ray, args.dry_run,
                           retry_failed=not args.skip_failed,
                           rerun_changed=args.rerun_changed, max_runs=args.max_runs)  # fmt: skip
    failures(run_sweep(options, os.environ))


def _report(args: argparse.Namespace, target: list[str]) -> None:
    from engine.lab.sweep.report import report

    if len(target) != 1:
        raise UsageError("usage: mudsim sweep report DIR [--by SETTING ...]")
    given = [name for name, on in (("--out", args.out is not None), ("--workers", args.workers),
             ("--ray", args.ray is not None), ("--dry-run", args.dry_run),
             ("--skip-failed", args.skip_failed), ("--rerun-changed", args.rerun_changed),
             ("--max-runs", args.max_runs != MAX_RUNS)) if on]  # fmt: skip
    if given:
        raise UsageError(f"sweep report takes no {' or '.join(given)}")
    print(report(Path(target[0]), args.by))
