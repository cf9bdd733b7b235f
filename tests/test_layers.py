"""The engine's floors, top to bottom, and no import pointing up (issue 34, item 5).

    entry points   cli.py, tui/, telnet/, web/, schema_verb.py, and the CLI verbs that
                   live beside their work (lab/verbs.py, lab/record_verbs.py,
                   lab/sweep/verbs.py: argparse glue)
    lab/           replay, forks, export, the probe, sweeps
    sim/           the Simulation, the run loop, the recorder
    agents/        thinkers, memory streams, background workers
    commands/      the registry, the parser, the command families
    llm/           backends and the dispatcher
    vault/         files: journals, banks, handbooks, records, accounts
    memory/        pure memory rules (compaction, quality, knowledge, retrieval)
    world/         the world's value types, its clock, its loader, folder names

The vault persists what memory and the world define, so it sits above both; memory and
the world are pure, at the bottom. Top-level modules (``config.py``, ``errors.py``,
``wallclock.py`` ...) are the ground every floor stands on. An import inside a function
counts like any other, and there is no exception.
"""

from __future__ import annotations

import ast
from pathlib import Path

import engine

FLOORS = ["entry", "lab", "sim", "agents", "commands", "llm", "vault", "memory", "world"]
ENTRY = {"cli", "tui", "telnet", "web", "schema_verb", "__main__"}
VERBS = {"engine.lab.verbs", "engine.lab.record_verbs", "engine.lab.sweep.verbs"}
"""CLI verbs kept beside the work they start: entry points, like cli.py."""

ROOT = Path(engine.__file__).parent


def _floor(module: str) -> str | None:
    if module in VERBS:
        return "entry"
    parts = module.split(".")
    if parts[0] != "engine" or len(parts) < 2:
        return None
    if parts[1] in ENTRY:
        return "entry"
    return parts[1] if parts[1] in FLOORS else None  # top-level modules: the ground


def _imports() -> list[tuple[str, str]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(("engine", *path.relative_to(ROOT).with_suffix("").parts))
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.append((module, node.module))
            elif isinstance(node, ast.Import):
                found.extend((module, alias.name) for alias in node.names)
    return found


def test_no_import_points_up() -> None:
    up = []
    for source, target in _imports():
        here, there = _floor(source), _floor(target)
        if here is None or there is None:
            continue
        if FLOORS.index(there) < FLOORS.index(here):
            up.append(f"{source} ({here}) imports {target} ({there})")
    assert up == [], "imports pointing up a floor:\n" + "\n".join(up)


def test_the_floors_named_in_the_issue_have_no_arrow_up_at_all() -> None:
    for source, target in _imports():
        here, there = _floor(source), _floor(target)
        if here in ("world", "vault", "commands", "memory") and there is not None:
            assert FLOORS.index(there) >= FLOORS.index(here), f"{source} imports {target}"
