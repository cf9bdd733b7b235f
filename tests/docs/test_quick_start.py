"""The quick starts give their documented output on every fresh vault.

The README's quick start (the runnable examples of its "The main command" section) and
the tutorial's (every runnable example of ``docs/tutorial.md``, in order, as a reader
follows them) run as a new user runs them: each command line of the text itself, as its
own ``mudsim`` process, in a fresh folder holding ``worlds/``; ten times each. The output
shown after an example (the next ```` ```text ```` block of its section) is what the
example's commands print: every line of it is a whole line of their output (a line
ending in ``...`` the beginning of one; a line ``...`` alone stands for any lines), and
the lines not of the agents' narrative (``[Room] ...``, whose order in a round varies)
come in the order shown.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import REPO, mudsim_env

pytestmark = pytest.mark.slow  # whole runs in subprocesses, ten times over

MARKER = "<!-- runnable -->"
BASH = re.compile(r"^```bash\s*$")
SHOWN = re.compile(r"^```(text)?\s*$")
ROUNDS = 10
ELLIPSIS = "..."


@dataclass(frozen=True)
class Example:
    commands: tuple[str, ...]
    shown: tuple[str, ...]
    """The output shown after it (its non-blank lines), or nothing."""


def _fence_end(lines: list[str], start: int) -> int:
    return next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))


def _commands(block: list[str]) -> tuple[str, ...]:
    joined = "\n".join(block).replace("\\\n", " ")
    return tuple(line.strip() for line in joined.splitlines() if line.strip())


def examples(path: Path, section: str | None = None) -> list[Example]:
    """The runnable examples of ``path`` (of its ``## section`` only, if given), each with
    the output shown after it in its section."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if section is not None:
        start = lines.index(f"## {section}")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
                   len(lines))  # fmt: skip
        lines = lines[start:end]
    found: list[Example] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() != MARKER or not BASH.match(lines[index + 1]):
            index += 1
            continue
        close = _fence_end(lines, index + 1)
        commands = _commands(lines[index + 2 : close])
        shown: tuple[str, ...] = ()
        after = close + 1
        while after < len(lines) and not lines[after].startswith(("#", MARKER)):
            if SHOWN.match(lines[after]):
                end = _fence_end(lines, after)
                shown = tuple(line for line in lines[after + 1 : end] if line.strip())
                break
            after += 1
        found.append(Example(commands, shown))
        index = close + 1
    return found


def _matches(shown: str, line: str) -> bool:
    if shown.endswith(ELLIPSIS):
        return line.startswith(shown[: -len(ELLIPSIS)])
    return line == shown


def _narrative(line: str) -> bool:
    return line.startswith("[")


def unmatched(shown: tuple[str, ...], output: str) -> list[str]:
    """The lines of ``shown`` that ``output`` does not bear out."""
    lines = output.splitlines()
    missing = [s for s in shown if s != ELLIPSIS and not any(_matches(s, ln) for ln in lines)]
    position = 0
    for expected in (s for s in shown if s != ELLIPSIS and not _narrative(s)):
        at = next((i for i in range(position, len(lines)) if _matches(expected, lines[i])), None)
        if at is None:
            missing.append(f"{expected}  (not in the order shown)")
            continue
        position = at + 1
    return list(dict.fromkeys(missing))


def _run(command: str, cwd: Path) -> str:
    argv = shlex.split(command)
    assert argv[0] == "mudsim", f"not a mudsim command: {command}"
    env = mudsim_env()
    env["MUDSIM_LLM_URL"] = "fake:look"  # what names no LLM stays offline (no agent thinks)
    env.pop("MUDSIM_MODEL", None)
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", *argv[1:]], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{command}\n{done.stderr}"
    assert "Traceback" not in done.stdout + done.stderr
    return done.stdout


QUICK_STARTS = {
    "README": (REPO / "README.md", "The main command"),
    "tutorial": (REPO / "docs" / "tutorial.md", None),
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", list(QUICK_STARTS))
def test_the_quick_start_shows_what_it_says_on_every_fresh_vault(name: str, tmp_path: Path) -> None:
    path, section = QUICK_STARTS[name]
    steps = examples(path, section)
    assert any("fake:" in c for step in steps for c in step.commands), "no scripted quick start"
    assert any(step.shown for step in steps), "no output shown to check"
    for attempt in range(ROUNDS):
        folder = tmp_path / f"user-{attempt}"
        folder.mkdir()
        (folder / "worlds").symlink_to(REPO / "worlds", target_is_directory=True)
        for step in steps:
            output = "".join(_run(command, folder) for command in step.commands)
            wrong = unmatched(step.shown, output)
            assert not wrong, f"try {attempt + 1}: {step.commands}\nnot as shown: {wrong}\n{output}"
