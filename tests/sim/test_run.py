"""``mudsim run --headless`` end to end, against the loopback stub over real HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cli import main
from engine.llm.stub_server import StubOllama, is_knowledge_prompt

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

DEMO = Path(__file__).parents[2] / "worlds" / "demo.yaml"


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    replies = ["say Good morning. | to be friendly", "look", "go north", "think Books everywhere."]
    with StubOllama(replies=replies, models=["tiny:latest"]) as server:
        yield server


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_headless_run_of_the_demo_world(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    code, out, err = _run(capsys, str(DEMO), "--vault", str(vault), "--headless", "--turns", "5",
                          "--llm", stub.url, "--model", "tiny", "--seed", "1")  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"Demo: 2 agents, thinking with {stub.url} tiny."
    assert all(re.match(r"^\[The (Lobby|Garden|Library|Attic)\] ", line) for line in lines[1:-2])
    assert 'Eliza says, "Good morning."' in out
    assert "to be friendly" not in out  # the reason is private
    assert "deep in thought" not in out  # ambient lines are left out of the narrative
    assert lines[-2].startswith("Run summary: 2 agents, 10 turns (0 skipped), ")
    assert re.match(r"Cost per agent: Eliza \d+\+\d+ tokens, .*; Moss ", lines[-1])
    # every agent took 5 turns: one executed command each, remembered in the vault
    for name in ("Eliza", "Moss"):
        records = [
            json.loads(line)
            for line in (vault / "agents" / name / "memories.jsonl").read_text().splitlines()
        ]
        assert sum(1 for r in records if r["command"]) == 5
    turns = [body for body in stub.requests if not is_knowledge_prompt(body)]
    assert all(body["prompt"].endswith(("~Eliza>", "~Moss>")) for body in turns)
    passes = [body for body in stub.requests if is_knowledge_prompt(body)]
    assert len(passes) == 2  # the end of the run: one pass each (nothing learned: no 2nd call)
    assert "2 knowledge passes (0 changed a bank, 0 failed), " in lines[-2]
    first = stub.requests[0]
    assert first["raw"] is True
    assert first["model"] == "tiny"
    assert "\n" in first["options"]["stop"]
    assert first["options"]["num_ctx"] == 8192
    assert "system" not in first


def test_constrain_true_sends_the_command_schema_and_runs_the_json_reply(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "llm.md").write_text("---\nprofiles:\n  actor:\n    constrain: true\n---\n")
    code, out, err = _run(capsys, str(DEMO), "--vault", str(vault), "--headless", "--turns", "2",
                          "--llm", stub.url, "--model", "tiny", "--seed", "1")  # fmt: skip
    assert code == 0, err
    assert 'says, "Good morning."' in out
    turns = [body for body in stub.requests if body["prompt"].endswith(("~Eliza>", "~Moss>"))]
    assert len(turns) == 4
    for body in turns:
        pattern = body["format"]["properties"]["command"]["pattern"]
        assert re.fullmatch(pattern, "say Good morning.")
        assert not re.fullmatch(pattern, "fly away")
        assert not re.fullmatch(pattern, "say 2111242232")  # words, not digit strings
        assert "\n" not in body["options"]["stop"]  # the JSON may span lines
    commands = [
        json.loads(line)["command"]
        for name in ("Eliza", "Moss")
        for line in (vault / "agents" / name / "memories.jsonl").read_text().splitlines()
    ]
    assert "say Good morning." in commands  # read out of {"command": ...}


def test_the_prompt_impersonate_shows_is_what_the_llm_gets(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    flags = [
        "--vault",
        str(vault),
        "--headless",
        "--turns",
        "1",
        "--llm",
        stub.url,
        "--model",
        "tiny",
    ]
    _run(capsys, str(DEMO), *flags)
    shown = {}
    for name in ("Eliza", "Moss"):
        main(["do", str(DEMO), "--vault", str(vault), "--as", "Traveler", f"@impersonate {name}"])
        shown[name] = capsys.readouterr().out.rstrip("\n").split("\n", 1)[1]  # (the note)
    sent_before = len(stub.requests)
    _run(capsys, str(DEMO), *flags)
    first = stub.requests[sent_before]["prompt"]  # nothing has happened yet when it is built
    name = "Eliza" if first.endswith("~Eliza>") else "Moss"
    assert first == shown[name]


def test_an_unreachable_llm_exits_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "http://127.0.0.1:9"  # the discard port: nothing listens there
    code, out, err = _run(
        capsys, str(DEMO), "--vault", str(tmp_path / "v"), "--headless", "--llm", url
    )
    assert code == 3
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"mudsim: cannot reach the LLM at {url}")
    assert "ollama serve" in err


def test_a_missing_model_exits_3_naming_ollama_pull(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, str(DEMO), "--vault", str(tmp_path / "v"), "--headless", "--llm", stub.url
    )
    assert code == 3
    assert "`ollama pull gemma3:4b`" in err
    assert err.count("\n") == 1


def test_model_and_url_come_from_the_environment(
    stub: StubOllama,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MUDSIM_LLM_URL", stub.url)
    monkeypatch.setenv("MUDSIM_MODEL", "tiny")
    code, _, err = _run(
        capsys, str(DEMO), "--vault", str(tmp_path / "v"), "--headless", "--turns", "1"
    )
    assert code == 0, err
    assert {b["model"] for b in stub.requests} == {"tiny"}


def test_a_failing_llm_skips_turns_but_the_run_ends(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.fail_next(400, times=100)  # not retried: every call fails at once
    code, out, err = _run(capsys, str(DEMO), "--vault", str(tmp_path / "v"), "--headless", "--turns", "2",
                          "--llm", stub.url, "--model", "tiny")  # fmt: skip
    assert code == 0, err
    assert "Eliza's turn was skipped: HTTP 400" in out
    assert "4 turns (4 skipped), 4 LLM calls (4 failed" in out


def test_the_tui_checks_the_llm_before_it_takes_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, str(DEMO), "--vault", str(tmp_path / "v"))
    assert code == 3
    assert out == ""
    assert err.startswith("mudsim: cannot reach the LLM at http://127.0.0.1:9")
    assert err.count("\n") == 1


@pytest.mark.parametrize("bad", [["--turns", "0"], ["--turns", "x"], ["--seed", "s"]])
def test_bad_flags_exit_2(
    bad: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, str(DEMO), "--vault", str(tmp_path / "v"), "--headless", *bad)
    assert code == 2
    assert err.startswith("mudsim: ")


def _start_and_press(stub: StubOllama, vault: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """A real-time headless run, given a first Ctrl-C once a turn is in flight; what it
    said up to its stop line."""
    env = {**os.environ, "MUDSIM_LLM_URL": stub.url, "MUDSIM_MODEL": "tiny"}
    process = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "run", str(DEMO), "--vault", str(vault), "--headless"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not stub.requests and time.monotonic() < deadline:
        time.sleep(0.02)  # real time: the first turns come within one 6 s interval
    assert stub.requests, "no turn was asked for"
    process.send_signal(signal.SIGINT)
    assert process.stderr is not None
    said: list[str] = []
    while not any(line.startswith("mudsim: stopping") for line in said):
        line = process.stderr.readline()
        assert line, f"the run ended without saying it stops: {said}"
        said.append(line)
    return process, said


def test_ctrl_c_stops_gracefully_and_saves(stub: StubOllama, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    stub.delay = 0.05
    process, said = _start_and_press(stub, vault)
    out, err = process.communicate(timeout=20)
    err = "".join(said) + err
    assert process.returncode == 0, err
    assert "stopping" in err
    assert "Traceback" not in err
    assert out.splitlines()[-2].startswith("Run summary: 2 agents,")
    state = json.loads((vault / "agents" / "Eliza" / "memory-state.json").read_text())
    assert state["memories"] >= 0
    assert (vault / "world" / "world.yaml").exists()


def test_a_first_ctrl_c_waits_for_the_turn_in_flight_counting_down_and_starts_no_pass(
    stub: StubOllama, tmp_path: Path
) -> None:
    stub.delay = 7.0  # a slow model: the turn in flight outlasts the first countdown line
    stub.knowledge = [FACT] * 10
    vault = tmp_path / "vault"
    process, said = _start_and_press(stub, vault)
    out, err = process.communicate(timeout=40)
    assert process.returncode == 0, err
    assert re.search(r"mudsim: stopping: waiting at most 30 s for [12] turns? in progress "
                     r"\(Ctrl-C again to stop at once\)", said[-1]), said  # fmt: skip
    assert re.search(r"mudsim: still waiting for [12] turns? \(2\d s left;", err), err
    assert "Traceback" not in err
    # the passes a finished run would start are left for the next run: none was asked for
    assert not [body for body in stub.requests if is_knowledge_prompt(body)]
    assert "knowledge pass" not in out
    assert re.search(r"Run summary: 2 agents, [12] turns \(0 skipped\)", out), out
    record = json.loads(next((vault / "runs").glob("*/run.json")).read_text())
    assert record["reason"] == "stopped"


def test_a_second_ctrl_c_cuts_the_turns_in_flight_short_and_still_saves(
    stub: StubOllama, tmp_path: Path
) -> None:
    stub.delay = 9.0  # a turn that would hold a first Ctrl-C for 9 s
    vault = tmp_path / "vault"
    process, _ = _start_and_press(stub, vault)
    asked = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=40)
    assert time.monotonic() - asked < 5, err  # not the turn's 9 s
    assert process.returncode == 0, err
    assert re.search(r"mudsim: stopping now: cutting short [12] turns?", err), err
    assert "Traceback" not in err
    assert "Run summary: 2 agents, 0 turns" in out  # cut short: no turn was taken
    assert (vault / "world" / "world.yaml").exists()
    record = json.loads(next((vault / "runs").glob("*/run.json")).read_text())
    assert record["reason"] == "stopped"


LONELY = """\
name: Lonely
rooms:
  - {id: cell, name: The Cell, description: Four walls and a window.}
characters:
  - {name: Hermit, type: agent, location: cell, profile: A patient thinker.}
"""


def _history(vault: Path) -> list[tuple[int, int]]:
    from engine.vault.summaries import SummaryStore

    store = SummaryStore(vault / "agents" / "Hermit" / "summaries")
    return [(s.covers_from, s.covers_to) for _, s in store.history()]


def test_300_turns_alone_leave_the_waterfall_of_the_contract(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world, vault = tmp_path / "lonely.yaml", tmp_path / "vault"
    world.write_text(LONELY, encoding="utf-8")
    flags = [str(world), "--vault", str(vault), "--headless", "--llm", "fake:think A;think B"]
    code, out, err = _run(capsys, *flags, "--turns", "300")
    assert code == 0, err
    assert "300 turns" in out
    assert _history(vault) == [(0, 64), (64, 128), (128, 192)]
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    hermit = json.loads(capsys.readouterr().out)["agents"][0]
    assert {k: hermit[k] for k in ("memories", "boundary", "verbatim", "next_compaction_at", "in_flight")} == {
        "memories": 300, "boundary": 192, "verbatim": 108, "next_compaction_at": 321, "in_flight": False,
    }  # fmt: skip
    assert (hermit["short_term"]["covers_from"], hermit["short_term"]["covers_to"]) == (128, 192)
    assert (hermit["long_term"]["covers_from"], hermit["long_term"]["covers_to"]) == (0, 128)

    code, out, err = _run(capsys, *flags, "--turns", "100")  # a restart continues the schedule
    assert code == 0, err
    assert _history(vault) == [(0, 64), (64, 128), (128, 192), (192, 256), (256, 320)]
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    hermit = json.loads(capsys.readouterr().out)["agents"][0]
    assert (hermit["memories"], hermit["boundary"], hermit["next_compaction_at"]) == (400, 320, 449)
    assert hermit["long_term"]["covers_to"] == 256


def test_a_headless_run_against_an_openai_compatible_server(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, str(DEMO), "--vault", str(tmp_path / "v"), "--headless",
                          "--turns", "2", "--llm", stub.url + "/v1", "--model", "tiny")  # fmt: skip
    assert code == 0, err
    assert "4 turns (0 skipped)" in out
    assert all("max_tokens" in body for body in stub.requests)  # it spoke /v1/completions


FACT = json.dumps([{"type": "fact", "tags": ["library"],
                    "content": "The library holds old books and a leather ledger"}])  # fmt: skip


def _bank(vault: Path, name: str) -> list[object]:
    path = vault / "agents" / name / "knowledge" / "long-term-memory.json"
    if not path.exists():
        return []
    entries = json.loads(path.read_text())
    assert isinstance(entries, list)
    return entries


def test_a_run_whose_turns_are_done_waits_for_its_last_knowledge_passes(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    # passes slower than the grace a stopped run gives them: a batch run waits for them
    monkeypatch.setattr("engine.sim.run_ending.SHUTDOWN_GRACE", 0.05)
    stub.knowledge = [FACT] * 10
    stub.knowledge_delay = 0.4
    vault = tmp_path / "vault"
    code, out, err = _run(capsys, str(DEMO), "--vault", str(vault), "--headless", "--turns", "2",
                          "--llm", stub.url, "--model", "tiny")  # fmt: skip
    assert code == 0, err
    assert "mudsim: the turns are done; finishing 2 knowledge passes before saving" in err
    assert "2 knowledge passes (2 changed a bank, 0 failed)" in out
    for name in ("Eliza", "Moss"):
        assert _bank(vault, name), f"{name}'s pass was cut short"


def test_ctrl_c_while_a_finished_run_waits_for_its_passes_leaves_them_for_the_next(
    stub: StubOllama, tmp_path: Path
) -> None:
    stub.knowledge = [FACT] * 10
    stub.knowledge_delay = 120  # a model that will not finish them soon
    vault = tmp_path / "vault"
    env = {**os.environ, "MUDSIM_LLM_URL": stub.url, "MUDSIM_MODEL": "tiny"}
    argv = [sys.executable, "-m", "engine.cli", "run", str(DEMO), "--vault", str(vault),
            "--headless", "--turns", "1"]  # fmt: skip
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env)  # fmt: skip
    assert process.stderr is not None
    said: list[str] = []
    while not any("finishing" in line for line in said):
        line = process.stderr.readline()
        assert line, f"the run ended without waiting for its passes: {said}"
        said.append(line)
    asked = time.monotonic()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert time.monotonic() - asked < 10  # not the 120 s the passes would take
    assert "mudsim: stopping now: leaving 2 knowledge passes for the next run" in err
    assert "Traceback" not in err
    assert "Run summary: 2 agents, 2 turns" in out
    assert _bank(vault, "Eliza") == []  # a cut pass wrote nothing
    record = json.loads(next((vault / "runs").glob("*/run.json")).read_text())
    assert record["reason"] == "turns done"
    stub.knowledge_delay = 0  # the next run does the passes it left
    again = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert again.returncode == 0, again.stderr
    assert _bank(vault, "Eliza")


def test_the_narrative_leaves_out_agents_pausing_to_think_unless_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [str(DEMO), "--headless", "--turns", "2", "--llm", "fake:emote smiles."]
    code, out, err = _run(capsys, *flags, "--vault", str(tmp_path / "a"))
    assert code == 0, err
    assert "Eliza smiles." in out
    assert "deep in thought" not in out
    events = (next((tmp_path / "a" / "runs").glob("*/events.jsonl"))).read_text()
    assert "pauses, deep in thought" in events  # still recorded
    code, out, err = _run(capsys, *flags, "--vault", str(tmp_path / "b"), "--show-thinking")
    assert code == 0, err
    assert "[The Garden] Eliza pauses, deep in thought..." in out


def test_the_first_headless_line_says_which_backend_and_model_think(
    stub: StubOllama, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, str(DEMO), "--vault", str(tmp_path / "a"), "--headless",
                          "--turns", "1", "--llm", "fake:look")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == "Demo: 2 agents, thinking with fake (scripted)."
    code, out, err = _run(capsys, str(DEMO), "--vault", str(tmp_path / "b"), "--headless",
                          "--turns", "1", "--llm", stub.url, "--model", "tiny")  # fmt: skip
    assert code == 0, err
    assert out.splitlines()[0] == f"Demo: 2 agents, thinking with {stub.url} tiny."
