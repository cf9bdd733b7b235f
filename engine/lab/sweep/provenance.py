"""Which mudsim made a sweep's runs: its version and, from a source checkout, the git
commit (each result row records both). Read once per start, without the network; a
missing ``git``, or an installed package that is no checkout, is an empty commit, never
an error."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Final

import engine

SOURCE: Final = Path(engine.__file__).resolve().parent.parent
"""The folder that holds the ``engine`` package: a checkout's root when run from one."""
COMMIT: Final = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
GIT_SECONDS: Final = 5.0


def mudsim_version() -> str:
    return engine.version()


def git_commit(source: Path = SOURCE) -> str:
    """``git rev-parse HEAD`` in ``source`` when it is a git checkout, else ``""``."""
    if not (source / ".git").exists():
        return ""
    environ = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=GIT_SECONDS,
                              env=environ, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and COMMIT.fullmatch(commit) else ""
