"""``held_for_memory`` counts every wait memory causes (issue 42, A): a crowd in one room
on a loopback server that summarizes slowly, whose turn calls queue in the dispatcher
while the compactions of characters falling behind go first. What each agent's
``memory-state.json`` says its calls queued agrees with the run record's ``calls.jsonl``
(``memory_wait_s``, within ``queue_s``), ``mudsim status`` says the whole wait, and a
replay, whose own queue never fills, counts the same from the tape. A run where nothing
falls behind counts nothing, though its turns queue behind each other."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.llm.stub_server import RELATED, StubOllama
from engine.vault.run_store import CALLS, read_tape, runs

AGENTS = [f"Ag{n}" for n in range(5)]
REPLIES = ["say Good morning to you all", "say The bread is warm today",
           "say The well is cold", "say I mended the fence"]  # fmt: skip
SUMMARY_DELAY = 0.05
"""Seconds the stub takes over each summary: compactions fall behind the crowd's talk."""
QUEUE_SLACK = 0.05
"""Seconds a call's ``queue_s`` may hold beyond what it queued in the dispatcher (its
prompt built, the record's gates passed), per call."""


def _world(window: int) -> str:
    lines = ["name: Crowd", "rooms:", "  - {id: hall, name: The Hall, description: A long hall.}",
             "characters:"]  # fmt: skip
    lines += [f"  - {{name: {name}, type: agent, location: hall, profile: A talker., "
              f"immediate_window: {window}, recent_window: {window}}}" for name in AGENTS]  # fmt: skip
    lines.append(f"  - {{name: Pat, type: player, location: hall, immediate_window: {window}, "
                 f"recent_window: {window}}}")  # fmt: skip
    return "\n".join(lines) + "\n"


def _run(tmp_path: Path, window: int, capsys: pytest.CaptureFixture[str]) -> Path:
    """A headless run of the crowd (2 turns each, 2 slots); its vault."""
    world, vault = tmp_path / "crowd.yaml", tmp_path / "vault"
    world.write_text(_world(window), encoding="utf-8")
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "memory_compaction.md").write_text("---\nknowledge: false\n---\n")
    with StubOllama(REPLIES, models=["tiny"], jitter=0.01, seed=3, summary=RELATED) as stub:
        stub.summary_delay = SUMMARY_DELAY
        endpoint = f"{{url: '{stub.url}', kind: ollama, model: tiny, slots: 2}}"
        (vault / "config" / "llm.md").write_text(f"---\nendpoints: [{endpoint}]\n---\n")
        code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "2",
                     "--seed", "2"])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    return vault


def _held(vault: Path) -> dict[str, dict[str, Any]]:
    """Each character's ``held_for_memory`` as its memory-state.json has it."""
    return {name: json.loads((vault / "agents" / name / "memory-state.json")
                             .read_text(encoding="utf-8"))["held_for_memory"]
            for name in [*AGENTS, "Pat"]}  # fmt: skip


def _turn_calls(vault: Path) -> list[dict[str, Any]]:
    (run,) = runs(vault)
    return [c for c in read_tape(run.folder / CALLS) if c["kind"] == "turn"]


@pytest.mark.replay
def test_turn_calls_queued_behind_urgent_compactions_are_held_for_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)  # llm.md names the server
    vault = _run(tmp_path, 2, capsys)
    held = _held(vault)
    calls = _turn_calls(vault)
    waited = [c for c in calls if c["memory_wait_s"] > 0]
    assert waited, "no turn call queued behind an urgent compaction"
    queued = sum(h.get("queued_seconds", 0.0) for h in held.values())
    assert queued > 0
    # what the vault counts is what the record says each call waited, agent by agent ...
    by_agent: dict[str, float] = defaultdict(float)
    turns: dict[str, set[int]] = defaultdict(set)
    for call in waited:
        by_agent[call["agent"]] += call["memory_wait_s"]
        turns[call["agent"]].add(call["turn"])
    for name in AGENTS:
        assert held[name].get("queued_seconds", 0.0) == pytest.approx(by_agent[name], abs=0.002)
        assert held[name].get("queued_turns", 0) == len(turns[name])
    assert "queued_turns" not in held["Pat"]  # a player's turns are a person's: never queued
    # ... and it is the queue time of those calls, which also holds their prompts' building
    # and the record's gates
    queue_s = sum(c["queue_s"] for c in waited)
    assert queued <= queue_s + 0.002 * len(waited)
    assert queued == pytest.approx(queue_s, rel=0.1, abs=QUEUE_SLACK * len(waited))
    for call in waited:
        assert call["memory_wait_s"] <= call["queue_s"] + 0.002, call["key"]

    capsys.readouterr()
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    shown = {a["name"]: a["held_for_memory"] for a in json.loads(capsys.readouterr().out)["agents"]}
    assert sum(h["queued_seconds"] for h in shown.values()) == pytest.approx(queued, abs=0.001)
    assert main(["status", "--vault", str(vault), "--agent", waited[0]["agent"]]) == 0
    text = capsys.readouterr().out
    mine = held[waited[0]["agent"]]
    total = mine["seconds"] + mine["queued_seconds"]
    assert f"held for memory: {total:.1f} s in all for summaries" in text
    assert "queued behind urgent summaries" in text

    # a replay's queue never fills (its tape answers at once): it counts the run's figures
    again = tmp_path / "replayed"
    code = main(["replay", str(runs(vault)[0].folder), "--vault", str(again)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "byte-identical" in out
    assert _held(again) == held


def test_a_crowd_nobody_falls_behind_in_counts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows 64/64: no compaction is due in 10 turns, so none is urgent; the turns still
    queue behind each other on two slots, and that is no wait for memory."""
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)
    vault = _run(tmp_path, 64, capsys)
    calls = _turn_calls(vault)
    assert any(c["queue_s"] > 0.001 for c in calls)  # they queued
    assert all(c["memory_wait_s"] == 0 for c in calls)
    for held in _held(vault).values():
        assert held == {"turns": 0, "seconds": 0.0}  # (the queued figures written only once not 0)
    capsys.readouterr()
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    for agent in json.loads(capsys.readouterr().out)["agents"]:
        assert agent["held_for_memory"] == {"turns": 0, "seconds": 0.0, "queued_turns": 0,
                                            "queued_seconds": 0.0}  # fmt: skip
