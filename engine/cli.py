"""The ``mudsim`` command line: thin wrappers over ``engine.sim``.

Exit codes: 0 success (in-world failures such as "no such exit" are results, not
errors); 2 a bad argument, world file, character name, or a locked or corrupt vault;
3 an unreachable LLM. Every error is one line on stderr, never a traceback.

Built on argparse: Typer 0.29 keeps its click private (``typer._click``), so getting
one-line usage errors out of it would mean leaning on private API.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from engine.errors import MudsimError, UsageError
from engine.sim.status import read_status

SERVE_PORT = 11435


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see: {self.prog} --help)")


def do(args: argparse.Namespace) -> None:
    import asyncio

    from engine.sim.do import do_commands

    asyncio.run(do_commands(args.world, args.vault, args.as_name, args.commands, os.environ))


def run(args: argparse.Namespace) -> None:
    import asyncio

    from engine.sim.run import RunOptions, run_headless

    options = RunOptions(
        args.world, args.vault, args.llm, args.model, args.turns, args.seed, args.as_name
    )
    if args.headless:
        asyncio.run(run_headless(options, os.environ))
    else:
        from engine.tui.runner import run_tui

        asyncio.run(run_tui(options, os.environ))


def play(args: argparse.Namespace) -> None:
    from engine.sim.repl import run_repl

    run_repl(args.world, args.vault, args.as_name)


def status(args: argparse.Namespace) -> None:
    statuses = read_status(args.vault, args.agent)
    if args.json:
        print(json.dumps({"agents": [s.to_json() for s in statuses]}, indent=2))
    else:
        print("\n\n".join(s.render() for s in statuses))


def repair(args: argparse.Namespace) -> None:
    from engine.vault.repair import repair_vault

    print("\n".join(repair_vault(args.vault, args.agent)))


def serve_llm(args: argparse.Namespace) -> None:
    from engine.llm.serve import serve

    serve(args.port)


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text!r}")
    return int(text)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _version() -> str:
    try:
        return importlib.metadata.version("mudsim")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout, not installed
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mudsim",
        description="A MUD-style text world where LLM-driven agents live, talk, build and remember.",
    )
    parser.add_argument("--version", action="version", version=f"mudsim {_version()}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    verbs.required = True

    def verb(
        name: str, summary: str, *, world: bool = True, character: bool = True
    ) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=summary, description=summary)
        if world:
            sub.add_argument(
                "world", type=Path, metavar="WORLD", help="world file (YAML); seeds a new vault"
            )
        sub.add_argument(
            "--vault",
            type=Path,
            default=Path("vault"),
            metavar="DIR",
            help="vault folder (default: ./vault)",
        )
        if character:
            sub.add_argument(
                "--as",
                dest="as_name",
                metavar="NAME",
                help="character to act as (default: the first player)",
            )
        return sub

    sub = verb(
        "run", "Run the world with thinking agents in a terminal UI (--headless: to stdout)."
    )
    sub.add_argument(
        "--llm",
        metavar="URL",
        help="LLM server URL (a /v1 URL: OpenAI-compatible), local for the embedded "
        "model, or fake: for a scripted demo",
    )
    sub.add_argument("--model", metavar="NAME", help="model for every agent (default: gemma3:4b)")
    sub.add_argument("--headless", action="store_true", help="print the narrative, no TUI")
    sub.add_argument(
        "--turns", type=_positive, metavar="N", help="stop once every agent took N turns"
    )
    sub.add_argument(
        "--seed", type=int, metavar="S", help="fix the agents' order and sampling seeds"
    )
    sub.set_defaults(run=run)
    sub = verb(
        "do", "Run commands as a character against the saved world, print each result, save."
    )
    sub.add_argument(
        "commands",
        nargs="+",
        metavar="COMMAND",
        help='commands to run in order, e.g. look "go north"',
    )
    sub.set_defaults(run=do)
    verb("play", "Play the world as a character at an interactive prompt.").set_defaults(run=play)
    sub = verb(
        "status",
        "Show every character's memory status (reads the vault without taking it).",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", help="only this character")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.set_defaults(run=status)
    sub = verb(
        "repair",
        "Make each character's memory state agree with what its journal holds; say what "
        "changed (what it removes is kept in agents/NAME/repair-UTC/).",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", help="only this character")
    sub.set_defaults(run=repair)
    summary = "Serve the embedded model as an Ollama-compatible endpoint on 127.0.0.1."
    sub = verbs.add_parser("serve-llm", help=summary, description=summary)
    sub.add_argument("--port", type=_port, default=SERVE_PORT, metavar="P",
                     help=f"port (default {SERVE_PORT})")  # fmt: skip
    sub.set_defaults(run=serve_llm)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the CLI, turning every error into one line and an exit code."""
    try:
        args = build_parser().parse_args(argv)
        args.run(args)
    except MudsimError as exc:
        print(f"mudsim: {exc}", file=sys.stderr)
        return exc.exit_code
    except SystemExit as exc:  # argparse's --help
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        print("mudsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `mudsim status --json | head`: the reader left; end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush cannot fail again
        return 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left
    except Exception as exc:
        if os.environ.get("MUDSIM_DEBUG"):
            raise
        print(
            f"mudsim: internal error: {type(exc).__name__}: {exc} (set MUDSIM_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
