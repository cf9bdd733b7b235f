"""Which code made a result: mudsim's version and the git commit it ran from, with a
dirty flag, for ``run.json``, the probe's ``report.json``, sweep rows and exports.

Read from git in the folder that holds the ``engine`` package when that is a checkout
(``git rev-parse HEAD``; dirty when ``git diff HEAD`` shows a change to a tracked file,
as ``git describe --dirty`` counts it); else from the installed package's metadata (a
``pip install git+URL`` records its commit in ``direct_url.json``); else ``unknown``. No
network, never an error: a missing ``git`` is ``unknown``. Read once per process.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import engine

SOURCE: Final = Path(engine.__file__).resolve().parent.parent
"""The folder that holds the ``engine`` package: a checkout's root when run from one."""
UNKNOWN: Final = "unknown"
COMMIT: Final = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
GIT_SECONDS: Final = 5.0


@dataclass(frozen=True)
class CodeIdentity:
    version: str
    commit: str
    """40 (or 64) hex digits, or ``unknown``."""
    dirty: bool | None
    """Tracked files differ from the commit (None: not known)."""
    changes: str = ""
    """sha256 of ``git diff HEAD`` when dirty (two dirty trees of one commit differ
    here when their changes do), else empty."""

    def to_json(self) -> dict[str, str | bool | None]:
        return {"mudsim_version": self.version, "git_commit": self.commit,
                "git_dirty": self.dirty}  # fmt: skip

    @property
    def code(self) -> str:
        """One string that changes whenever the code does (as far as it is known): the
        commit, and the changes' hash when dirty."""
        return f"{self.commit}+{self.changes[:16]}" if self.dirty else self.commit


@functools.cache
def code_identity() -> CodeIdentity:
    """This process's mudsim (read once)."""
    return identity_of(SOURCE)


def identity_of(source: Path) -> CodeIdentity:
    from_git = _git_identity(source)
    if from_git is not None:
        return CodeIdentity(engine.version(), *from_git)
    return CodeIdentity(engine.version(), _installed_commit() or UNKNOWN, None)


def _git(source: Path, *argv: str) -> str | None:
    environ = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(["git", "-C", str(source), *argv], capture_output=True,
                              timeout=GIT_SECONDS, env=environ, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def _git_identity(source: Path) -> tuple[str, bool, str] | None:
    if not (source / ".git").exists():
        return None
    commit = (_git(source, "rev-parse", "HEAD") or "").strip()
    if not COMMIT.fullmatch(commit):
        return None
    diff = _git(source, "diff", "HEAD", "--no-ext-diff", "--binary")
    if diff is None:
        return commit, True, ""  # what changed cannot be told: never call it clean
    changes = hashlib.sha256(diff.encode("utf-8")).hexdigest() if diff else ""
    return commit, bool(diff), changes


def _installed_commit() -> str | None:
    """The commit a VCS install recorded (PEP 610 ``direct_url.json``), if any."""
    try:
        text = importlib.metadata.distribution("mudsim").read_text("direct_url.json")
        commit = json.loads(text or "{}").get("vcs_info", {}).get("commit_id", "")
    except (importlib.metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) and COMMIT.fullmatch(commit) else None
