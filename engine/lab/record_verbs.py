"""The CLI verbs of recorded runs: ``replay``, ``fork`` and ``probe`` (``export`` and
``cost`` are in ``engine.lab.verbs``). The work is imported only when a verb runs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add(verbs: Any, *, positive: Callable[[str], int]) -> None:
    """Add the verbs to ``mudsim``'s sub-parsers (``positive``: a whole number > 0)."""
    _record_verbs(verbs, positive)
    _probe_verb(verbs, positive)


def replay(args: argparse.Namespace) -> None:
    import asyncio

    from engine.lab.replay import replay_run
    from engine.lab.run_records import run_source

    asyncio.run(replay_run(run_source(args.source, args.run_id), args.vault))


def fork(args: argparse.Namespace) -> None:
    import asyncio

    from engine.lab.fork import ForkOptions, fork_run
    from engine.lab.run_records import run_source

    run_dir = run_source(args.source, args.run_id)
    options = ForkOptions(args.at, args.turns, args.llm, args.model, tuple(args.set or ()),
                          headless=args.headless,
                          override_characters=args.override_characters)  # fmt: skip
    show = None
    if not args.headless:
        from engine.tui.fork_view import in_the_tui

        show = in_the_tui(options.turns, options.model)
    asyncio.run(fork_run(run_dir, args.vault, options, os.environ, show=show))


def probe(args: argparse.Namespace) -> None:
    import asyncio

    from engine.errors import UsageError
    from engine.lab.probe.probe import ProbeOptions
    from engine.lab.probe.probe import probe as run_probe

    compare = tuple(c.strip() for c in args.compare.split(",") if c.strip())
    every = args.runs is not None
    if every and args.runs != "all":
        raise UsageError(f"--runs {args.runs}: only --runs all (or --run ID, repeated)")
    options = ProbeOptions(args.vault, compare, tuple(args.run_id or ()), tuple(args.agent or ()),
                           args.per_category, args.seed, args.questions, args.llm, args.model,
                           args.json, all_runs=every)  # fmt: skip
    asyncio.run(run_probe(options, os.environ))


def _probe_verb(verbs: Any, _positive: Callable[[str], int]) -> None:
    summary = ("Quiz each agent about its own past (questions from the world's ground truth) "
               "under memory configurations, and report how often it is right.")  # fmt: skip
    sub = verbs.add_parser("probe", help=summary, description=summary)
    sub.add_argument("--vault", type=Path, default=Path("vault"), metavar="DIR",
                     help="vault folder (default: ./vault)")  # fmt: skip
    sub.add_argument("--compare", default="full", metavar="A,B,...",
                     help="configurations: full, waterfall, gapped, window, none, full+query, "
                          "evidence (default full; evidence, the reader's ceiling, is always "
                          "asked)")  # fmt: skip
    sub.add_argument("--run", dest="run_id", action="append", metavar="ID",
                     help="a run record, repeatable: questions about what its agents had "
                          "perceived by its end (default: the latest record of any kind)")  # fmt: skip
    sub.add_argument("--runs", metavar="all", help="all: every recorded run, each cut at its end")
    sub.add_argument("--agent", action="append", metavar="NAME", help="only these agents")
    sub.add_argument("--per-category", type=_positive, default=5, metavar="N",
                     help="questions per category and agent (default 5)")  # fmt: skip
    sub.add_argument("--seed", type=int, default=0, metavar="S", help="the questions' seed")
    sub.add_argument("--questions", type=Path, metavar="FILE",
                     help="ask this questions.jsonl again instead of new questions")  # fmt: skip
    sub.add_argument("--llm", metavar="URL",
                     help="as for run; oracle:, blind:, oracle:picks-shown, oracle:avoids-shown "
                          "and oracle:abstains are the probe's own fake readers")  # fmt: skip
    sub.add_argument("--model", metavar="NAME", help="the model that answers")
    sub.add_argument("--json", action="store_true", help="print the report as JSON")
    sub.set_defaults(run=probe)


def _record_verbs(verbs: Any, _positive: Callable[[str], int]) -> None:
    """``replay`` and ``fork``: a run's record played back, or branched."""
    summary = ("Replay a recorded run into a new vault with no LLM server; every file must "
               "end byte-identical to the run's end, or the first difference is said.")  # fmt: skip
    sub = verbs.add_parser("replay", help=summary, description=summary)
    _source(sub)
    sub.add_argument("--vault", type=Path, required=True, metavar="NEW",
                     help="a new (empty) vault to replay into")  # fmt: skip
    sub.set_defaults(run=replay)
    summary = ("Replay a run up to its TURN-th committed turn, then go on live with another "
               "model, LLM or settings.")  # fmt: skip
    sub = verbs.add_parser("fork", help=summary, description=summary)
    _source(sub)
    sub.add_argument("--at", type=_positive, required=True, metavar="TURN",
                     help="keep the first TURN turns of the run (counted across agents, from 1)")  # fmt: skip
    sub.add_argument("--vault", type=Path, required=True, metavar="NEW",
                     help="a new (empty) vault for the fork")  # fmt: skip
    sub.add_argument("--headless", action="store_true", help="print the narrative, no TUI")
    sub.add_argument("--turns", type=_positive, metavar="N",
                     help="each agent takes N live turns after the branch point")  # fmt: skip
    sub.add_argument("--llm", metavar="URL", help="the LLM from the branch point on")
    sub.add_argument("--model", metavar="NAME", help="the model from the branch point on")
    sub.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="a setting from the branch point on, e.g. "
                     "memory_compaction.recent_window=32 (repeatable); run.json holds the "
                     "settings in force after it")  # fmt: skip
    sub.add_argument("--override-characters", action="store_true",
                     help="a --set of memory_compaction.immediate_window or recent_window "
                     "applies to characters whose world file sets their own window too "
                     "(without it they keep theirs, and the fork names them)")  # fmt: skip
    sub.set_defaults(run=fork)


def _source(sub: argparse.ArgumentParser) -> None:
    """The recorded run a ``replay`` or ``fork`` follows: a vault, or one run's folder."""
    sub.add_argument("source", type=Path, metavar="VAULT|RUN-DIR",
                     help="a vault (its latest run, or --run ID's), or one run's folder "
                     "(VAULT/runs/<run id>)")  # fmt: skip
    sub.add_argument("--run", dest="run_id", metavar="ID",
                     help="the vault's run with this id, or its unique beginning "
                     "(default: the latest, of any kind)")  # fmt: skip
