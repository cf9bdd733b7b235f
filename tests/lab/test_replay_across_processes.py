"""A long run recorded in one process replays byte for byte in others that hash strings
differently: the village for 60 turns an agent against a loopback server answering in
random order, with summaries the gate rejects (so merges are extractive) and knowledge
passes that change the banks, recorded under ``PYTHONHASHSEED=11`` and replayed under
12 and 13; a fork at turn 250 under 14 goes on from the same state."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import REPO, mudsim_command, mudsim_env

from engine.llm.stub_server import StubOllama
from engine.vault.run_store import CALLS, manifest, read_tape, runs

pytestmark = [pytest.mark.slow, pytest.mark.replay, pytest.mark.timeout(300)]

REPLIES = ["say Good morning to you all", "look", "go north", "say The flour came late today",
           "go south", "go east", "emote wipes her hands", "say The anvil rang twice",
           "go west", "look", "go east", "say Seven sacks are in the mill", "go west"]  # fmt: skip
NOT_GROUNDED = "They talked in the hall about the bread and the morning, and I listened."
"""Every summary the stub writes: about none of the village's memories, so the gate
rejects it and the compactor writes extractive summaries and merges."""
KNOWLEDGE = [json.dumps([{"type": "fact", "content": text}]) for text in (
    "The flour came late to the mill today.", "The anvil in the smithy rang twice.",
    "Seven sacks of flour are in the mill.",
)] * 8  # fmt: skip
"""What the knowledge passes learn: what the agents said (a pass keeps what its memories
show)."""


def _mudsim(*argv: object, seed: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = mudsim_env() | {"PYTHONHASHSEED": str(seed)}
    env.pop("MUDSIM_LLM_URL", None)  # llm.md names the server
    return subprocess.run(mudsim_command(*argv), capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=240, check=False)  # fmt: skip


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(REPLIES, models=["tiny"], jitter=0.005, seed=7, summary=NOT_GROUNDED,
                    knowledge=KNOWLEDGE) as server:  # fmt: skip
        yield server


def test_a_long_village_run_replays_byte_for_byte_under_other_hash_seeds(
    tmp_path: Path, stub: StubOllama
) -> None:
    world, vault = tmp_path / "village.yaml", tmp_path / "vault"
    shutil.copy(REPO / "worlds" / "village.yaml", world)
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "memory_compaction.md").write_text("---\nconsolidate_every: 12\n---\n")
    endpoint = f"{{url: '{stub.url}', kind: ollama, model: tiny, slots: 4}}"
    (vault / "config" / "llm.md").write_text(f"---\nendpoints: [{endpoint}]\n---\n")
    done = _mudsim("run", world, "--vault", vault, "--headless", "--turns", 60, "--seed", 5,
                   seed=11, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    stub.stop()  # from here on the tape answers
    (run,) = runs(vault)
    calls = read_tape(run.folder / CALLS)
    summaries = "".join(p.read_text() for p in (vault / "agents").glob("*/summaries/*.md"))
    assert "method: extractive" in summaries  # the merges a weak model's run reaches
    assert sum(c["kind"] == "extraction" for c in calls) >= 10
    banks = (vault / "agents").glob("*/knowledge/long-term-memory.json")
    assert sum(len(json.loads(bank.read_text())) for bank in banks) >= 3  # passes changed them
    for seed in (12, 13):
        replayed = tmp_path / f"replayed-{seed}"
        done = _mudsim("replay", run.folder, "--vault", replayed, seed=seed, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "byte-identical" in done.stdout
        assert manifest(replayed) == json.loads((run.folder / "end.json").read_text())
    fork = tmp_path / "fork"
    done = _mudsim("fork", run.folder, "--at", 250, "--vault", fork, "--headless", "--turns", 2,
                   "--llm", "fake:say A new morning", seed=14, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert os.listdir(fork / "runs")
