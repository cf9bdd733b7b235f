"""The ``mudsim`` command line: thin wrappers over ``engine.sim``.

Exit codes: 0 success (in-world failures such as "no such exit" are results, not
errors); 2 a bad argument, world file, character name, or a locked or corrupt vault;
3 an unreachable LLM. Every error is one line on stderr, never a traceback.

Built on argparse: Typer 0.29 keeps its click private (``typer._click``), so getting
one-line usage errors out of it would mean leaning on private API.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from engine import schema_verb
from engine.errors import MudsimError, UsageError
from engine.lab import record_verbs
from engine.lab import verbs as lab
from engine.lab.sweep import verbs as sweep_verbs
from engine.memory.knowledge import KNOWLEDGE_TYPES
from engine.sim.status import read_clock, read_status
from engine.telnet import verbs as telnet_verbs

if TYPE_CHECKING:
    from engine.sim.run import RunOptions

SERVE_PORT = 11435


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see: {self.prog} --help)")


def do(args: argparse.Namespace) -> None:
    import asyncio

    from engine.sim.do import do_commands

    with _removed_on_failure(args.vault):
        asyncio.run(do_commands(args.world, args.vault, args.as_name, args.commands, os.environ))


def _run_options(args: argparse.Namespace) -> RunOptions:
    from engine.sim.run import RunOptions

    return RunOptions(
        args.world, args.vault, args.llm, args.model, args.turns, args.seed, args.as_name,
        show_thinking=getattr(args, "show_thinking", False),
    )  # fmt: skip


def run(args: argparse.Namespace) -> None:
    import asyncio

    from engine.sim.run import run_headless

    options = _run_options(args)
    with _removed_on_failure(args.vault):
        if args.headless:
            asyncio.run(run_headless(options, os.environ))
        else:
            from engine.tui.runner import run_tui

            asyncio.run(run_tui(options, os.environ))


def play(args: argparse.Namespace) -> None:
    import asyncio

    from engine.sim.repl import play as play_world

    if args.frozen:
        given = [f"--{name}" for name in AGENT_OPTIONS if getattr(args, name) is not None]
        if given:
            raise UsageError(
                f"play --frozen runs no agents, so {' and '.join(given)} would do nothing; "
                "leave out --frozen to play with thinking agents"
            )
    with _removed_on_failure(args.vault):
        asyncio.run(play_world(_run_options(args), os.environ, frozen=args.frozen))


@contextlib.contextmanager
def _removed_on_failure(vault: Path) -> Iterator[None]:
    """A vault folder this command made is removed again when the command fails before
    anyone made a memory in it (an unreachable server, an unknown --as): a failure leaves
    nothing behind. A vault that held anything before, or holds memories now, stays."""
    existed = vault.exists()
    try:
        yield
    except BaseException:
        if not existed and vault.is_dir() and not _holds_memories(vault):
            shutil.rmtree(vault, ignore_errors=True)
        raise


def _holds_memories(vault: Path) -> bool:
    journals = (vault / "agents").glob("*/memories.jsonl")
    return any(journal.stat().st_size > 0 for journal in journals)


def world_apply(args: argparse.Namespace) -> None:
    from engine.sim.world_apply import apply_world

    print("\n".join(apply_world(args.world, args.vault, dry_run=args.dry_run)))


def status(args: argparse.Namespace) -> None:
    statuses = read_status(args.vault, args.agent)
    if args.json:
        shape = {"clock": read_clock(args.vault), "agents": [s.to_json() for s in statuses],
                 "last_run": _last_run_costs(args.vault)}  # fmt: skip
        print(json.dumps(shape, indent=2))
    else:
        last = _last_run_costs(args.vault)
        ran = ([f"Last run {last['id']}: models {', '.join(last['models']) or 'none'}"]
               if last is not None else [])  # fmt: skip
        print("\n\n".join([*(s.render() for s in statuses), *ran]))


def _last_run_costs(vault: Path) -> dict[str, Any] | None:
    """The latest run's id, the models its calls went to (``fake`` for a script), their
    digests, the commit that ran it, and each agent's cost (``status --json``), or None."""
    from engine.sim.recorder import run_costs
    from engine.vault.run_store import runs

    recorded = runs(vault)
    if not recorded:
        return None
    meta, costs = recorded[-1].meta(), run_costs(recorded[-1])
    used = {str(model) for role in ("models", "summarizers", "consolidators")
            for model in dict(meta.get(role) or {}).values()}  # fmt: skip
    return {"id": recorded[-1].id, "models": sorted(used),
            "model_digests": meta.get("model_digests") or {},
            "git_commit": meta.get("git_commit"), "git_dirty": meta.get("git_dirty"),
            "costs": {name: cost.to_json() for name, cost in sorted(costs.items())}}  # fmt: skip


def knowledge(args: argparse.Namespace) -> None:
    from engine.sim.knowledge_report import knowledge_report

    print(knowledge_report(args.vault, args.agent, args.type, as_json=args.json))


def handbook(args: argparse.Namespace) -> None:
    from engine.sim.handbook_report import handbook_report

    print(handbook_report(args.vault, args.agent, as_json=args.json))


def recall(args: argparse.Namespace) -> None:
    from engine.sim.bootstrap import recall_report

    print("\n".join(recall_report(args.vault, args.agent, " ".join(args.words))))


def agent_new(args: argparse.Namespace) -> None:
    from engine.sim.bootstrap import new_agent

    lines = new_agent(
        args.world, args.vault, args.name, role=args.role or "", keywords=args.keywords or [],
        sources=args.sources or [], profile=args.profile,
    )  # fmt: skip
    print("\n".join(lines))


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
    from engine import version

    return version()


AGENT_OPTIONS = ("llm", "model", "turns", "seed")
"""The options that say how agents think (``run`` and ``play``)."""


def _agent_arguments(sub: argparse.ArgumentParser, *, turns: str) -> None:
    """``run``'s and ``play``'s options for the agents' LLM (``AGENT_OPTIONS``)."""
    sub.add_argument(
        "--llm",
        metavar="URL",
        help="LLM server URL (a /v1 URL: OpenAI-compatible), local for the embedded "
        "model, or fake:CMD;CMD... for a scripted demo (each agent follows the script "
        "from its own start)",
    )
    sub.add_argument("--model", metavar="NAME", help="model for every agent (default: gemma3:4b)")
    sub.add_argument("--turns", type=_positive, metavar="N", help=turns)
    sub.add_argument(
        "--seed", type=int, metavar="S", help="fix the agents' order and sampling seeds"
    )


def _vault_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--vault",
        type=Path,
        default=Path("vault"),
        metavar="DIR",
        help="vault folder (default: ./vault)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mudsim",
        description="A MUD-style text world where LLM-driven agents live, talk, build and remember.",
    )
    parser.add_argument("--version", action="version", version=f"mudsim {_version()}")
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", parser_class=_Parser)
    verbs.required = True

    def verb(
        name: str,
        summary: str,
        *,
        world: bool = True,
        character: bool = True,
        description: str | None = None,
    ) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=summary, description=description or summary)
        if world:
            sub.add_argument(
                "world",
                type=Path,
                metavar="WORLD",
                help="world file (YAML): seeds a new vault; a seeded vault keeps its own "
                "world, but the file is still checked, and what it adds is named "
                "(see: mudsim world apply --help)",
            )
        _vault_argument(sub)
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
    _agent_arguments(sub, turns="stop once every agent took N turns")
    sub.add_argument("--headless", action="store_true", help="print the narrative, no TUI")
    sub.add_argument(
        "--show-thinking",
        action="store_true",
        help="--headless: print the 'X pauses, deep in thought...' lines too",
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
    sub = verb(
        "play",
        "Play the world as a character at a prompt while the agents keep thinking "
        "(--frozen: only you act).",
        description="Play the world as a character at an interactive prompt. The agents "
        "keep thinking while you play, the LLM chosen as for run (if none answers and "
        "--llm names none, only you act, said in one line); what happens in your room is "
        "printed as it happens. --frozen: a world where only you act and no LLM is asked. "
        "End with quit, Ctrl-D (the end of input) or Ctrl-C: turns in progress finish "
        "(at most 30 s; Ctrl-C again stops at once), knowledge passes wait for the next "
        "run, the vault is saved.",
    )
    _agent_arguments(sub, turns="each agent takes N turns, then stands still (you play on)")
    sub.add_argument(
        "--frozen", action="store_true", help="no agent thinks and no LLM is asked: only you act"
    )
    sub.set_defaults(run=play)
    world = verbs.add_parser(
        "world", help="Change a seeded vault's world from a world file.",
        description="Change a seeded vault's world from a world file.",
    )  # fmt: skip
    world_verbs = world.add_subparsers(dest="world_verb", metavar="VERB", parser_class=_Parser)
    world_verbs.required = True
    summary = (
        "Add to the vault what WORLD declares and the vault lacks (rooms, exits, objects, "
        "characters); nothing the vault has is changed or removed (what agents built, "
        "moved or remember stays)."
    )
    sub = world_verbs.add_parser("apply", help=summary, description=summary)
    sub.add_argument("world", type=Path, metavar="WORLD", help="world file (YAML)")
    _vault_argument(sub)
    sub.add_argument(
        "--dry-run", action="store_true", help="list what would be added; write nothing"
    )
    sub.set_defaults(run=world_apply)
    sub = verb(
        "status",
        "Show every character's memory status (reads the vault without taking it; an "
        "in_flight mark no live process holds the vault for is called stale).",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", help="only this character")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.set_defaults(run=status)
    sub = verb(
        "knowledge",
        "List an agent's knowledge bank (typed entries learned from its notes, memories "
        "and conversations) and what its last knowledge pass did.",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", required=True, help="whose bank")
    sub.add_argument("--type", choices=KNOWLEDGE_TYPES, help="only entries of this type")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.set_defaults(run=knowledge)
    sub = verb(
        "handbook",
        "Show where an agent's handbook is (memory_summary.md, MEMORY.md, its skills), "
        "each file's size, and how it was last written.",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", required=True, help="whose handbook")
    sub.add_argument("--json", action="store_true", help="print JSON")
    sub.set_defaults(run=handbook)
    sub = verb(
        "recall",
        "Show what an agent brings to mind for some words: the best five of its knowledge, "
        "notes, skills and past experiences, with their scores (reads the vault without "
        "taking it).",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", required=True, help="whose memory")
    sub.add_argument("words", nargs="+", metavar="WORDS", help="what to recall")
    sub.set_defaults(run=recall)
    agent = verbs.add_parser(
        "agent", help="Add to a seeded vault's agents.",
        description="Add to a seeded vault's agents.",
    )  # fmt: skip
    agent_verbs = agent.add_subparsers(dest="agent_verb", metavar="VERB", parser_class=_Parser)
    agent_verbs.required = True
    summary = (
        "Add an agent to a seeded vault, in the world's first room, its knowledge bank seeded "
        "with what the other agents (or those named) know that fits its role and keywords."
    )
    sub = agent_verbs.add_parser("new", help=summary, description=summary)
    sub.add_argument("world", type=Path, metavar="WORLD", help="the vault's world file (YAML)")
    _vault_argument(sub)
    sub.add_argument("--name", required=True, metavar="NEW", help="the new agent's name")
    sub.add_argument("--role", metavar="R",
                     help="what it does (a gardener, the innkeeper): retrieval weighs it")  # fmt: skip
    sub.add_argument("--keywords", nargs="+", metavar="W", help="topics it cares about")
    sub.add_argument("--from", dest="sources", nargs="+", metavar="NAME",
                     help="seed only from these agents (default: every agent)")  # fmt: skip
    sub.add_argument("--profile", metavar="TEXT", help="who it is, in a sentence")
    sub.set_defaults(run=agent_new)
    sub = verb(
        "repair",
        "Make each character's memory state agree with what its journal holds, and clear "
        "an in_flight mark a killed process left; say what changed (what it removes is kept "
        "in agents/NAME/repair-UTC/).",
        world=False,
        character=False,
    )
    sub.add_argument("--agent", metavar="NAME", help="only this character")
    sub.set_defaults(run=repair)
    record_verbs.add(verbs, positive=_positive)
    telnet_verbs.add(verbs, agent_arguments=_agent_arguments, parser_class=_Parser)
    sweep_verbs.add(verbs, positive=_positive)
    schema_verb.add(verbs)
    lab.add_export(verb("export", lab.EXPORT, world=False, character=False,
                        description=lab.EXPORT_DETAILS))  # fmt: skip
    lab.add_cost(verb("cost", lab.COST, world=False, character=False))
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
