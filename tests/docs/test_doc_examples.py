"""Every shell example in the docs marked runnable runs, so none goes stale.

The convention: an HTML comment ``<!-- runnable -->`` on the line right before a
```` ```bash ```` fence (invisible on the built site and on GitHub). The block runs with
``bash -e -o pipefail`` in an empty folder holding a link to the repository's
``worlds/``, ``mudsim`` on the PATH as this checkout's, and ``MUDSIM_LLM_URL`` set to the
scripted backend, so an example that names no LLM never reaches a server or loads the
embedded model. A renamed flag or verb fails here, naming the file and line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import REPO, mudsim_env

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^```(bash|sh|shell|console)\s*$")
TIMEOUT_S = 90
MIN_EXAMPLES = 8


@dataclass(frozen=True)
class Example:
    path: Path
    line: int
    """1-based line of the opening fence."""
    script: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO).as_posix()}:{self.line}"


def documents() -> list[Path]:
    docs = sorted(p for p in (REPO / "docs").rglob("*.md") if "hooks" not in p.parts)
    return [REPO / "README.md", *docs]


def examples_in(path: Path) -> tuple[list[Example], list[str]]:
    """The runnable examples of one Markdown file, and the markers that mark nothing."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, problems = [], []
    for index, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        where = f"{path.relative_to(REPO).as_posix()}:{index + 1}"
        fence = index + 1
        if fence >= len(lines) or not FENCE.match(lines[fence]):
            problems.append(f"{where}: {MARKER} is not right before a ```bash fence")
            continue
        end = next((i for i in range(fence + 1, len(lines)) if lines[i].startswith("```")), None)
        if end is None:
            problems.append(f"{where}: the ```bash fence is never closed")
            continue
        found.append(Example(path, fence + 1, "\n".join(lines[fence + 1 : end]) + "\n"))
    return found, problems


def collect() -> tuple[list[Example], list[str]]:
    examples, problems = [], []
    for path in documents():
        found, wrong = examples_in(path)
        examples += found
        problems += wrong
    return examples, problems


EXAMPLES, PROBLEMS = collect()


def test_every_marker_marks_a_bash_block() -> None:
    assert not PROBLEMS, "\n".join(PROBLEMS)


def test_there_are_enough_runnable_examples() -> None:
    assert len(EXAMPLES) >= MIN_EXAMPLES, [e.where for e in EXAMPLES]


def _sandbox(tmp_path: Path) -> dict[str, str]:
    """``tmp_path`` as a user's folder: ``worlds/`` reachable, ``mudsim`` on the PATH."""
    (tmp_path / "worlds").symlink_to(REPO / "worlds", target_is_directory=True)
    bin_dir = tmp_path.parent / f"{tmp_path.name}-bin"
    bin_dir.mkdir()
    shim = bin_dir / "mudsim"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m engine.cli "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = mudsim_env()
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env["MUDSIM_LLM_URL"] = "fake:look"
    env.pop("MUDSIM_MODEL", None)
    env["PS4"] = "+ "
    return env


@pytest.mark.timeout(TIMEOUT_S + 30)
@pytest.mark.parametrize("example", EXAMPLES, ids=[e.where for e in EXAMPLES])
def test_runnable_example(example: Example, tmp_path: Path) -> None:
    env = _sandbox(tmp_path)
    try:
        done = subprocess.run(
            ["bash", "-e", "-x", "-o", "pipefail", "-c", example.script],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(f"{example.where}: the example ran past {TIMEOUT_S} s", pytrace=False)
    if done.returncode != 0:
        traced = [line for line in done.stderr.splitlines() if line.startswith("+ ")]
        failed = traced[-1][2:] if traced else "(no command ran)"
        pytest.fail(
            f"{example.where}: the example failed (exit {done.returncode}) at: {failed}\n"
            f"--- stdout (end) ---\n{done.stdout[-2000:]}\n"
            f"--- stderr (end) ---\n{done.stderr[-2000:]}",
            pytrace=False,
        )
