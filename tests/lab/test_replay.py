"""Exact replay and forks: a recorded 3-agent run (concurrent thinking against a loopback
server answering in random order, compactions, knowledge passes, a room dug mid-run)
replays byte for byte with no server; an altered tape says where it diverged; a fork
keeps the first turns and goes its own way after them."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.llm.stub_server import FaultSchedule, StubOllama, is_knowledge_prompt
from engine.vault.run_store import CALLS, EVENTS, manifest, read_tape, runs

WORLD = """\
name: Three
rooms:
  - {id: hall, name: The Hall, description: A long hall., exits: {north: yard}}
  - {id: yard, name: The Yard, description: A muddy yard., exits: {south: hall}}
characters:
  - {name: Ada, type: agent, role: builder, location: hall, profile: A gardener.,
     immediate_window: 4, recent_window: 4}
  - {name: Bo, type: agent, role: builder, location: yard, profile: A smith.,
     immediate_window: 4, recent_window: 4}
  - {name: Cy, type: agent, role: builder, location: hall, profile: A baker.,
     immediate_window: 4, recent_window: 4}
  - {name: Pat, type: player, role: admin, location: hall}
"""
REPLIES = ["say Good morning", "look", "@dig The Shed -> A lean-to of planks.", "go north",
           "say The bread is warm", "go south", "emote stretches", "look"]  # fmt: skip
KNOWLEDGE = ['[{"type": "fact", "text": "The bread is warm in the morning."}]']
TALKED = "They talked in the hall about the bread and the morning, and I listened."

pytestmark = pytest.mark.replay  # .ci/run runs these again under two hash seeds


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(REPLIES, models=["tiny"], jitter=0.03, seed=5, summary=TALKED,
                    knowledge=KNOWLEDGE * 3) as server:  # fmt: skip
        yield server


@pytest.fixture
def recorded(tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Path:  # fmt: skip
    """The record of a headless run of three agents, 6 turns each."""
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)  # llm.md names the server
    return record(tmp_path, stub, capsys)


def record(tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str]) -> Path:
    world, vault = tmp_path / "three.yaml", tmp_path / "vault"
    world.write_text(WORLD, encoding="utf-8")
    config = vault / "config"
    config.mkdir(parents=True)
    (config / "memory_compaction.md").write_text("---\nconsolidate_every: 8\n---\n")
    endpoint = f"{{url: '{stub.url}', kind: ollama, model: tiny, slots: 4}}"
    (config / "llm.md").write_text(f"---\nendpoints: [{endpoint}]\n---\n")  # 4 at once
    code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "6",
                 "--seed", "3"])  # fmt: skip
    _out, err = capsys.readouterr()
    assert code == 0, err
    (run,) = runs(vault)
    return run.folder


def _events(run_dir: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "at"} for e in read_tape(run_dir / EVENTS)]


def test_the_record_has_every_call_and_event_of_the_run(recorded: Path) -> None:
    meta = json.loads((recorded / "run.json").read_text())
    assert meta["reason"] == "turns done"
    assert meta["kind"] == "run"
    assert sorted(meta["models"].values()) == ["tiny"] * 3
    calls = read_tape(recorded / CALLS)
    kinds = {c["kind"] for c in calls}
    assert {"turn", "summary"} <= kinds
    assert kinds & {"extraction", "consolidation"}
    turns = [c for c in calls if c["kind"] == "turn"]
    assert len(turns) >= 18
    assert all(c["prompt"] and c["reply"] for c in turns)
    assert len({(c["agent"], c["turn"], c["kind"], c["index"]) for c in calls}) == len(calls)
    events = _events(recorded)
    assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    sent = [e["key"] for e in events if e["kind"] == "send"]
    answered = [e["key"] for e in events if e["kind"] == "answer"]
    assert sent != answered  # the agents thought at once, answered in another order
    assert sum(e["kind"] == "turn" for e in events) == 18
    assert any(e["kind"] == "command" and e["line"].startswith("@dig") for e in events)
    assert events[-1]["kind"] == "end"
    cost = meta["costs"]
    assert sum(c["tokens_in"] for c in cost.values()) == sum(c["prompt_tokens"] for c in calls)


def test_a_replay_with_no_server_ends_byte_identical(
    recorded: Path, tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.stop()  # nothing to answer: the tape does
    new = tmp_path / "replayed"
    code = main(["replay", str(recorded), "--vault", str(new)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "byte-identical" in out
    end = json.loads((recorded / "end.json").read_text())
    assert manifest(new) == end
    assert any(name.startswith("agents/") and "summaries" in name for name in end)
    (replay,) = runs(new)
    assert _events(replay.folder)[:-1] == _events(recorded)[:-1]  # all but the end's reason


def test_an_altered_reply_stops_the_replay_at_the_first_divergence(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(recorded.parent.parent, copy)
    run_dir = copy / "runs" / recorded.name
    lines = (run_dir / CALLS).read_text().splitlines()
    calls = [json.loads(line) for line in lines]
    index = next(i for i, c in enumerate(calls) if c["kind"] == "turn" and c["turn"] == 3)
    calls[index]["reply"] = "say Something else entirely"
    (run_dir / CALLS).write_text("".join(json.dumps(c) + "\n" for c in calls))
    code = main(["replay", str(run_dir), "--vault", str(tmp_path / "new")])
    err = capsys.readouterr().err
    assert code == 2
    assert "the replay diverged: event " in err
    assert "Something else entirely" in err
    assert "Traceback" not in err


def test_a_fork_keeps_the_first_turns_and_goes_its_own_way(
    recorded: Path, tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.stop()
    new = tmp_path / "fork"
    code = main(["fork", str(recorded), "--at", "10", "--vault", str(new), "--headless",
                 "--turns", "1", "--llm", "fake:say A different morning"])  # fmt: skip
    _out, err = capsys.readouterr()
    assert code == 0, err
    parent = _events(recorded)
    branch = [e["n"] for e in parent if e["kind"] == "turn"][9]
    (fork,) = runs(new)
    mine = _events(fork.folder)
    assert mine[:branch] == parent[:branch]
    assert mine[branch]["kind"] == "branch"
    said = [e["text"] for e in mine[branch:] if e["kind"] == "event"]
    assert any("A different morning" in text for text in said)
    assert not any("A different morning" in e.get("text", "") for e in parent)
    meta = json.loads((fork.folder / "run.json").read_text())
    assert meta["parent"] == recorded.name
    assert meta["branch_at"] == 10


def test_status_json_shows_the_last_runs_cost_per_agent(
    recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = recorded.parent.parent
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    last = json.loads(capsys.readouterr().out)["last_run"]
    assert last["id"] == recorded.name
    calls = read_tape(recorded / CALLS)
    for name in ("Ada", "Bo", "Cy"):
        mine = [c for c in calls if c["agent"] == name]
        cost = last["costs"][name]
        assert cost["tokens_in"] == sum(c["prompt_tokens"] for c in mine) > 0
        assert cost["tokens_out"] == sum(c["completion_tokens"] for c in mine)
        assert cost["calls_total"] == len(mine)


def test_a_real_runs_turns_export_to_parquet_and_its_cost_adds_up(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyarrow_parquet = pytest.importorskip("pyarrow.parquet")
    vault, out = recorded.parent.parent, tmp_path / "turns.parquet"
    assert main(["export", "--vault", str(vault), "--what", "turns", "--out", str(out)]) == 0
    table = pyarrow_parquet.read_table(out).to_pylist()
    assert len(table) == 18
    assert {row["agent"] for row in table} == {"Ada", "Bo", "Cy"}
    capsys.readouterr()
    assert main(["cost", "--vault", str(vault), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    calls = read_tape(recorded / CALLS)
    assert report["total"]["tokens_in"] == sum(c["prompt_tokens"] for c in calls)


def test_a_run_with_retried_and_garbled_calls_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP 500s the dispatcher retried (each attempt builds its prompt again, at its own
    place) and garbage replies the thinker asked again about: the tape has them all."""
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)
    faults = FaultSchedule(fail_every=4, garbage_every=7)
    with StubOllama(REPLIES, models=["tiny"], jitter=0.03, seed=9, summary=TALKED,
                    knowledge=KNOWLEDGE * 3, faults=faults) as stub:  # fmt: skip
        run_dir = record(tmp_path, stub, capsys)
        assert stub.injected["fail"] > 0
        assert stub.injected["garbage"] > 0
    calls = read_tape(run_dir / CALLS)
    assert any(c["builds"] > 1 for c in calls)
    new = tmp_path / "replayed"
    assert main(["replay", str(run_dir), "--vault", str(new)]) == 0, capsys.readouterr().err
    assert manifest(new) == json.loads((run_dir / "end.json").read_text())


def test_a_headless_fork_whose_turns_are_done_waits_for_its_last_knowledge_passes(
    recorded: Path, tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr("engine.sim.run_ending.SHUTDOWN_GRACE", 0.05)  # what a stopped run gives
    stub.knowledge = KNOWLEDGE * 6
    stub.knowledge_delay = 0.4
    new = tmp_path / "fork"
    code = main(["fork", str(recorded), "--at", "10", "--vault", str(new), "--headless",
                 "--turns", "2", "--llm", stub.url, "--model", "tiny"])  # fmt: skip
    _out, err = capsys.readouterr()
    assert code == 0, err
    assert "the turns are done; finishing" in err
    (fork,) = runs(new)
    at_end = [c for c in read_tape(fork.folder / CALLS)
              if c["kind"] == "extraction" and c["turn"] >= 2]  # fmt: skip
    assert at_end, "no knowledge pass at the fork's end"
    assert all(c.get("error") is None for c in at_end)  # none cut short by the grace


CROWD = """\
name: Crowd
rooms:
  - {id: hall, name: The Hall, description: A long hall.}
characters:
""" + "".join(
    f"  - {{name: Ag{n}, type: agent, location: hall, profile: A talker., immediate_window: 2, "
    "recent_window: 2}\n"
    for n in range(4)
)


def test_a_crowd_whose_turns_waited_for_memory_replays_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four agents in one room, windows 2/2, answers in random order from four slots:
    turns wait for memory (the gate's holds and their seconds are in the vault), and the
    replay, following the tape, holds them at the same places."""
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)
    world, vault = tmp_path / "crowd.yaml", tmp_path / "vault"
    world.write_text(CROWD, encoding="utf-8")
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "memory_compaction.md").write_text("---\nknowledge: false\n---\n")
    with StubOllama(["say Good morning to you all", "say The bread is warm today"],
                    models=["tiny"], jitter=0.02, seed=4, summary=TALKED) as stub:  # fmt: skip
        endpoint = f"{{url: '{stub.url}', kind: ollama, model: tiny, slots: 4}}"
        (vault / "config" / "llm.md").write_text(f"---\nendpoints: [{endpoint}]\n---\n")
        code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "8",
                     "--seed", "2"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    (run,) = runs(vault)
    states = [json.loads((vault / "agents" / f"Ag{n}" / "memory-state.json").read_text())
              for n in range(4)]  # fmt: skip
    assert sum(s["held_for_memory"]["turns"] for s in states) > 0, "no turn waited"
    assert json.loads((run.folder / "run.json").read_text())["memory_gate"] is True
    new = tmp_path / "replayed"
    code = main(["replay", str(run.folder), "--vault", str(new)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "byte-identical" in out


def test_a_forks_record_replays_byte_identical(
    recorded: Path, tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 31, item 12: forked early, with windows and knowledge passes changed (passes
    start at once, while calls sent before the branch are still landing), the fork's own
    record replays byte for byte with no server."""
    new = tmp_path / "fork"
    code = main(["fork", str(recorded), "--at", "4", "--vault", str(new), "--headless",
                 "--turns", "3", "--llm", stub.url, "--model", "tiny",
                 "--set", "memory_compaction.recent_window=2",
                 "--set", "memory_compaction.consolidate_every=3"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    (fork,) = runs(new)
    stub.stop()
    again = tmp_path / "replayed"
    code = main(["replay", str(fork.folder), "--vault", str(again)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "byte-identical" in out
    assert manifest(again) == json.loads((fork.folder / "end.json").read_text())
    (replay,) = runs(again)
    assert _events(replay.folder)[:-1] == _events(fork.folder)[:-1]


def test_a_run_stopped_by_ctrl_c_with_passes_in_flight_replays_byte_identical(
    tmp_path: Path, stub: StubOllama, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A first Ctrl-C cuts the knowledge passes in progress at once (issue 32): the record
    says where, and the replay cuts them at the same place."""
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)
    world, vault = tmp_path / "three.yaml", tmp_path / "vault"
    world.write_text(WORLD.replace("immediate_window: 4", "think_interval: 0.3, "
                                   "immediate_window: 4"), encoding="utf-8")  # fmt: skip
    config = vault / "config"
    config.mkdir(parents=True)
    (config / "memory_compaction.md").write_text("---\nconsolidate_every: 4\n---\n")
    endpoint = f"{{url: '{stub.url}', kind: ollama, model: tiny, slots: 4}}"
    (config / "llm.md").write_text(f"---\nendpoints: [{endpoint}]\n---\n")
    stub.knowledge_delay = 60  # passes that will not end by themselves
    process = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "run", str(world), "--vault", str(vault),
         "--headless", "--seed", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not any(is_knowledge_prompt(b) for b in stub.requests) and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert re.search(r"knowledge pass(es)? left for the next run", err), err
    (run,) = runs(vault)
    kinds = [event["kind"] for event in _events(run.folder)]
    assert "leave-memory-work" in kinds
    stub.stop()
    code = main(["replay", str(run.folder), "--vault", str(tmp_path / "replayed")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "byte-identical" in out
