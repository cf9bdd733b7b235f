"""What the sweep's tests share (no tests of its own): a three-agent fixture world, a
loopback stub whose every turn reply depends only on the prompt (so concurrent runs
sharing it cannot change one another), and ways to run and read a sweep."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from helpers import REPO, mudsim_command, mudsim_env

from engine.llm.ollama_server import Completion, Refusal
from engine.llm.stub_server import StubOllama

WORLD = """\
name: Sweep Fixture
rooms:
  - id: hall
    name: The Hall
    description: A long hall with a stone floor.
    exits: {north: yard}
  - id: yard
    name: The Yard
    description: A muddy yard with an old well.
characters:
  - name: Ada
    type: agent
    location: hall
    profile: A careful gardener.
  - name: Bo
    type: agent
    location: hall
    profile: A quiet smith.
  - name: Cy
    type: agent
    location: yard
    profile: A restless messenger.
  - name: Pat
    type: player
    location: hall
"""
SCRIPT = ("say Hello there.", "look", "go north", "go south", "emote waves.",
          "think The well looks deep.", "say Is the well dry?")  # fmt: skip
SUMMARY = "I looked around the hall and the yard and spoke with the others."
TIMINGS = ("seconds", "llm_seconds")
"""Columns that measure time, so differ from one run of the same thing to the next."""


class PromptStub(StubOllama):
    """The loopback stub, but each turn's reply is picked by its prompt's hash: a run's
    replies depend on its own prompts alone, whatever else the stub is serving."""

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        prompt = str(body.get("prompt", ""))
        if not prompt.rstrip().endswith(">"):  # summaries, knowledge passes: as the stub does
            return super().answer(body)
        with self._lock:
            self.calls += 1
            if self.record:
                self.requests.append(body)
        if self.delay:
            time.sleep(self.delay)
        reply = SCRIPT[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % len(SCRIPT)]
        if body.get("format"):
            reply = json.dumps({"command": reply})
        return Completion(iter([reply]), prompt_tokens=len(prompt) // 4,
                          completion_tokens=max(1, len(reply) // 4), done_reason="stop")  # fmt: skip


def prompt_stub(delay: float = 0.0) -> PromptStub:
    return PromptStub(models=["tiny", "small"], summary=SUMMARY, delay=delay)


def write_world(folder: Path) -> Path:
    path = folder / "world.yaml"
    path.write_text(WORLD, encoding="utf-8")
    return path


def write_sweep(folder: Path, text: str) -> Path:
    """A sweep file next to the fixture world (``world: world.yaml``)."""
    write_world(folder)
    path = folder / "sweep.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def sweep_text(url: str, *, turns: int = 2, seeds: str = "2",
               grid: str = "  model: [tiny, small]\n", extra: str = "") -> str:  # fmt: skip
    return f"world: world.yaml\nturns: {turns}\nseeds: {seeds}\nllm: {url}\ngrid:\n{grid}{extra}"


def sweep_process(*argv: object, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``mudsim sweep ...`` as a real process (this checkout's), output captured."""
    return subprocess.Popen(mudsim_command("sweep", *argv), cwd=REPO, text=True,
                            env=dict(env or mudsim_env()), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)  # fmt: skip


def results(out: Path) -> list[dict[str, Any]]:
    """``OUT/results.parquet``, read back with pyarrow."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(out / "results.parquet").to_pylist()
    return rows


def without_timings(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]


def finished_results(out: Path) -> dict[str, bytes]:
    """Run key -> the bytes of its ``result.json``, for every run that finished."""
    found = {}
    for path in sorted((out / "runs").glob("*/result.json")):
        data = path.read_bytes()
        if json.loads(data)["status"] == "finished":
            found[path.parent.name] = data
    return found


def descendants(pid: int) -> set[int]:
    """The processes ``pid`` started, and theirs (Linux: /proc): the pool's fork server
    and the workers it forked."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in (int(p) for p in task.read_text().split()):
            found |= {child, *descendants(child)}
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())


def wait_until(condition: Any, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return bool(condition())


def lines(text: str) -> Iterator[str]:
    yield from (line for line in text.splitlines() if line.strip())
