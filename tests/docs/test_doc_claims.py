"""What the docs say about the repository holds: every folder or file the examples
write is ignored by git, and the demo world is as its header says (issue 46)."""

from __future__ import annotations

import re
import subprocess

import yaml
from helpers import REPO

WRITTEN = re.compile(r"--(?:vault|out) ([A-Za-z0-9_][A-Za-z0-9_.-]*)(?:/[A-Za-z0-9_./-]*)?")
"""A relative ``--vault`` or ``--out`` path an example writes (its first part)."""
PLACEHOLDERS = frozenset({"V", "V2", "V3", "NEW", "DIR", "DEST", "FILE", "OUT"})


CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.DOTALL)
"""A fenced block or an inline code span: where a command is (prose may say "--vault")."""


def written_paths() -> set[str]:
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    found: set[str] = set()
    for page in pages:
        for code in CODE.finditer(page.read_text(encoding="utf-8")):
            for match in WRITTEN.finditer(code.group(1) or code.group(2)):
                if match.group(1) not in PLACEHOLDERS:
                    found.add(match.group(1))
    return found


def test_every_path_the_docs_examples_write_is_ignored_by_git() -> None:
    paths = sorted(written_paths())
    assert {"my-vault", "pocket-vault", "replayed", "turns.csv", "run.md"} <= set(paths)
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths], cwd=REPO, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    ignored = set(checked.stdout.split())
    assert [p for p in paths if p not in ignored] == []


def test_the_demo_worlds_header_counts_its_rooms() -> None:
    text = (REPO / "worlds" / "demo.yaml").read_text(encoding="utf-8")
    rooms = len(yaml.safe_load(text)["rooms"])
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    assert f"The demo world: {words[rooms]} rooms," in text
