"""The ``schema`` verb: ``mudsim schema world`` and ``mudsim schema sweep`` print the
JSON Schema (draft 2020-12) of a world file and of a sweep file, made from the pydantic
models that validate them. The committed copies under ``docs/schemas/`` are what the
shipped files' ``# yaml-language-server: $schema=...`` first lines point at."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, Final

SUMMARY: Final = ("Print the JSON Schema of a world file or a sweep file, for editors "
                  "(docs/schemas/ holds the committed copies).")  # fmt: skip
DETAILS: Final = (
    SUMMARY + " Start a YAML file with `# yaml-language-server: $schema=PATH` (PATH "
    "relative to the file) and VS Code's YAML extension completes and checks its keys. "
    "After changing the models, regenerate: mudsim schema world > "
    "docs/schemas/world.schema.json (and the same for sweep)."
)


def _world() -> dict[str, Any]:
    from engine.world.json_schema import world_schema

    return world_schema()


def _sweep() -> dict[str, Any]:
    from engine.lab.sweep.schema import sweep_schema

    return sweep_schema()


KINDS: Final[dict[str, Callable[[], dict[str, Any]]]] = {"world": _world, "sweep": _sweep}


def schema_text(kind: str) -> str:
    """What ``mudsim schema KIND`` prints (without the final newline)."""
    from engine.world.json_schema import render

    return render(KINDS[kind]())


def run(args: argparse.Namespace) -> None:
    print(schema_text(args.kind))


def add(verbs: Any) -> None:
    """Add ``schema`` to ``mudsim``'s sub-parsers."""
    sub = verbs.add_parser("schema", help=SUMMARY, description=DETAILS)
    sub.add_argument("kind", choices=list(KINDS), metavar="KIND",
                     help="world or sweep")  # fmt: skip
    sub.set_defaults(run=run)
