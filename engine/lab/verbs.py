"""The lab's CLI verbs, ``export`` and ``cost``: their options and what runs them.

``engine.cli`` makes each verb's parser (with ``--vault``) and hands it here; the work
is imported only when a verb runs, so ``mudsim --help`` stays quick.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from engine.errors import UsageError

WHATS: Final = ("events", "turns", "calls", "memories", "training")
FORMATS: Final = ("jsonl", "csv", "parquet", "md")

EXPORT: Final = (
    "Export a recorded run (default: the latest) as JSONL, CSV, Parquet or Markdown: its "
    "events, agent turns, LLM calls or training pairs, or the agents' memories."
)
EXPORT_DETAILS: Final = (
    EXPORT + " Training pairs are {prompt, completion, agent, verb, ok}, failures "
    "included and identical pairs once; --chat writes them as chat conversations "
    '({"messages": [user, assistant]}). Parquet needs pyarrow: '
    "pip install 'mudsim[analysis]'."
)
COST: Final = (
    "Show what a recorded run's LLM calls cost per agent and in all (tokens, seconds, "
    "calls by kind, retries, failures; money where the run priced its endpoints), "
    "recomputed from its calls.jsonl."
)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of 0 or more, got {text!r}")
    return int(text)


def add_export(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--run", dest="run_id", metavar="ID", help="the run's id, or its unique beginning "
                     "(default: the latest; for memories: every run)")  # fmt: skip
    sub.add_argument("--what", required=True, choices=WHATS, help="what to export")
    sub.add_argument("--format", choices=FORMATS,
                     help="file format (default: from the suffix of --out; jsonl for -)")  # fmt: skip
    sub.add_argument("--out", required=True, type=Path, metavar="PATH",
                     help="the file to write (-: standard output)")  # fmt: skip
    sub.add_argument("--agent", metavar="NAME", help="only this agent's rows (not for events)")
    sub.add_argument("--chat", action="store_true",
                     help="training as chat conversations, JSONL")  # fmt: skip
    sub.add_argument("--successful-only", action="store_true",
                     help="training: only commands that succeeded")  # fmt: skip
    sub.add_argument("--verb", metavar="VERB", help="training: only commands with this verb")
    sub.add_argument("--min-reply-chars", type=_count, default=0, metavar="N",
                     help="training: only completions of at least N characters")  # fmt: skip
    sub.set_defaults(run=export)


def add_cost(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--run", dest="run_id", metavar="ID",
                     help="the run's id, or its unique beginning (default: the latest)")  # fmt: skip
    sub.add_argument("--all", dest="every", action="store_true",
                     help="every recorded run, and their sum")  # fmt: skip
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.set_defaults(run=cost)


def export(args: argparse.Namespace) -> None:
    from engine.lab.export import ExportRequest, run_export
    from engine.lab.export_rows import TrainingFilter

    keep = TrainingFilter(args.successful_only, None, args.verb, args.min_reply_chars)
    request = ExportRequest(args.vault, args.what, args.out, args.format, args.run_id,
                            args.agent, keep, args.chat)  # fmt: skip
    said = run_export(request)
    if said:
        print(said)


def cost(args: argparse.Namespace) -> None:
    from engine.lab.cost import cost_report

    if args.every and args.run_id is not None:
        raise UsageError("give --run or --all, not both")
    print(cost_report(args.vault, args.run_id, every=args.every, as_json=args.json))
