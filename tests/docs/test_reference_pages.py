"""The reference pages are generated from the code (docs/hooks/), the README names every
verb, and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import REPO

from engine.cli import build_parser
from engine.commands import default_registry


def _hooks() -> ModuleType:
    hooks = REPO / "docs" / "hooks"
    sys.path.insert(0, str(hooks))
    try:
        spec = importlib.util.spec_from_file_location("mudsim_docs", hooks / "mudsim_docs.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(hooks))


HOOKS = _hooks()
VERBS = HOOKS.reference.verbs(build_parser())


def test_the_readme_names_every_verb() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [verb for verb in VERBS if not re.search(rf"`mudsim {re.escape(verb)}[ `]", readme)]
    assert not missing, f"README.md does not name these verbs: {missing}"


def test_the_cli_page_has_every_verb_and_flag() -> None:
    page = HOOKS.RENDERERS["cli"]()
    for verb in VERBS:
        assert f"\n## mudsim {verb}\n" in page
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    for action in run._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        for flag in action.option_strings:
            assert f"`{flag}" in page or f", {flag}" in page, flag


def test_the_commands_page_has_every_command() -> None:
    page = HOOKS.RENDERERS["commands"]()
    for command in default_registry().commands.values():
        assert f"`{command.key}`" in page
        assert command.help.split(".")[0] in page


def test_the_config_page_has_every_key() -> None:
    from engine.telnet.settings import TelnetConfig
    from engine.vault.config_files import FILES

    page = HOOKS.RENDERERS["config"]()
    for name, (model, _body) in {**FILES, "telnet.md": (TelnetConfig, "")}.items():
        assert f"## config/{name}" in page
        for key in model.model_fields:
            assert f"| `{key}` |" in page, f"{name}: {key}"


def test_the_world_page_has_every_key() -> None:
    from engine.world.schema import WorldSpec

    page = HOOKS.RENDERERS["world"]()
    for model in HOOKS.reference.nested_models(WorldSpec):
        for key in model.model_fields:
            assert f"| `{key}` |" in page, f"{model.__name__}: {key}"


def test_a_marker_with_no_generator_is_an_error() -> None:
    with pytest.raises(KeyError, match="no generator called 'nope'"):
        HOOKS.reference.fill("<!-- mudsim:nope -->\n", HOOKS.RENDERERS, "x.md")


@pytest.mark.timeout(180)
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed")
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
        cwd=REPO, capture_output=True, text=True, timeout=150, check=False,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()
