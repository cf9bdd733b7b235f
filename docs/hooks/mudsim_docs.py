"""MkDocs hook: fills the reference pages from the code at build time.

A page asks for a generated part with a line of its own, ``<!-- mudsim:NAME -->``:

- ``cli``: every ``mudsim`` verb, walked from ``engine.cli.build_parser()``;
- ``config``: every ``vault/config/*.md`` file (``engine.vault.config_files.FILES`` and
  ``engine.telnet.settings``), keys from the pydantic models and their docstrings;
- ``world``: the world file's keys, from ``engine.world.schema``;
- ``commands``: the in-world commands, from ``engine.commands.default_registry()``.

Nothing is written to disk: a renamed flag changes the docs on the next build, and a
marker with no generator fails the build.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for path in (str(HERE), str(REPO)):
    if path not in sys.path:
        sys.path.insert(0, path)

import mudsim_reference as reference  # noqa: E402  (docs/hooks/mudsim_reference.py)


def _cli() -> str:
    from engine.cli import build_parser

    return reference.render_cli(build_parser())


def _config() -> str:
    from engine.telnet import settings as telnet
    from engine.vault.config_files import FILES

    files = {**FILES, "telnet.md": (telnet.TelnetConfig, telnet._BODY)}
    return reference.render_config(files)


def world_names() -> dict[str, str]:
    from engine.world import schema

    names = {}
    for annotation, label in ((schema.EntityId, "id"), (schema.Text, "name")):
        pattern = reference.pattern_of(annotation)
        if pattern is not None:
            names[pattern] = f"[{label}](#ids-and-names)"
    return names


def _world() -> str:
    from engine.world.schema import WorldSpec

    titles = {
        "WorldSpec": "Top level",
        "ClockSpec": "clock",
        "RoomSpec": "A room",
        "ExitSpec": "An exit",
        "ObjectSpec": "An object",
        "CharacterSpec": "A character",
    }
    text = reference.render_models(WorldSpec, level=3, names=world_names(), titles=titles)
    schema = REPO / "docs" / "schemas" / "world.schema.json"
    if schema.exists():
        text += (
            "\nThe same keys as a JSON Schema, for editors that check YAML as you type: "
            "[world.schema.json](../schemas/world.schema.json).\n"
        )
    return text


def _commands() -> str:
    from engine.commands import default_registry
    from engine.commands.registry import CATEGORIES

    return reference.render_commands(default_registry(), CATEGORIES)


RENDERERS: dict[str, reference.Renderer] = {
    "cli": _cli,
    "config": _config,
    "world": _world,
    "commands": _commands,
}


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return reference.fill(markdown, RENDERERS, page.file.src_uri)


SCREENSHOT = REPO / "tests" / "tui" / "__snapshots__" / "test_snapshot"
SCREENSHOT_SVG = SCREENSHOT / "test_a_paused_demo_world[120x40].svg"
"""The TUI's snapshot test renders this screen; the site shows the same file."""


def on_files(files: Any, config: Any, **_: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, "assets/tui.svg", abs_src_path=str(SCREENSHOT_SVG)))
    return files
