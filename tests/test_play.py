"""``mudsim play`` as a real process: lines on stdin, the narrative on stdout; agents
thinking through the loopback stub server while the player types, or ``--frozen``."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURE_WORLD, REPO, mudsim, mudsim_command, mudsim_env

from engine.llm.stub_server import StubOllama, is_knowledge_prompt

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

STUB_SAY = "say Hello from the stub."


def _play(
    world_file: Path, vault_dir: Path, stdin: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return mudsim("play", world_file, "--vault", vault_dir, *extra, stdin=stdin)


def _journal(vault_dir: Path, folder: str) -> list[dict[str, Any]]:
    path = vault_dir / "agents" / folder / "memories.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(replies=[STUB_SAY, "look"], models=["tiny"]) as server:
        yield server


PROFILES = {"Ada": "    profile: A careful gardener.\n", "Bo": "    profile: A quiet smith.\n"}


def _quick_world(tmp_path: Path, *agents: str) -> Path:
    """The fixture world, with ``agents`` thinking every 0.2 s of real time."""
    text = FIXTURE_WORLD
    for agent in agents:
        assert PROFILES[agent] in text
        text = text.replace(PROFILES[agent], PROFILES[agent] + "    think_interval: 0.2\n")
    quick = tmp_path / "quick.yaml"
    quick.write_text(text, encoding="utf-8")
    return quick


class Session:
    """A ``mudsim play`` process the test types into, line by line, reading as it goes."""

    def __init__(self, *argv: object, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            mudsim_command("play", *argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd=REPO, env=env or mudsim_env(),
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def until(self, text: str, within: float = 20.0) -> None:
        """Read output until a line holds ``text``."""
        deadline = time.monotonic() + within
        while not any(text in line for line in self.seen):
            left = deadline - time.monotonic()
            if left <= 0:
                self.process.kill()
                raise AssertionError(f"never saw {text!r}; saw {self.seen}")
            try:
                self.seen.append(self.lines.get(timeout=left))
            except queue.Empty:
                continue

    def end(self, *, close: bool = True) -> tuple[int, str, str]:
        """Close stdin (unless not ``close``), wait: (exit code, all stdout, stderr)."""
        process = self.process
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        if close:
            process.stdin.close()
        code = process.wait(timeout=30)
        self.reader.join(timeout=5)  # it ends at the end of stdout
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        err = process.stderr.read()
        for stream in (process.stdin, process.stdout, process.stderr):
            with contextlib.suppress(OSError):
                stream.close()
        return code, "".join(self.seen), err


# -- frozen -------------------------------------------------------------------------


def test_play_frozen_runs_lines_until_quit_and_saves(world_file: Path, vault_dir: Path) -> None:
    done = _play(
        world_file, vault_dir, "say Hello there\n\ngo north\nquit\nsay never runs\n", "--frozen"
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert out.startswith(
        "You are Pat, in Fixture. Frozen world: only you act. "
        "Type 'help' for commands, 'quit' to leave.\n"
    )
    assert "The Hall" in out  # the opening look
    assert 'You say, "Hello there"' in out
    assert "You go north to The Yard." in out
    assert "never runs" not in out
    assert out.endswith("Saved. Goodbye.\n")
    assert [m["text"] for m in _journal(vault_dir, "Ada")] == [
        'Pat says, "Hello there"',
        "Pat leaves north to The Yard.",
    ]
    world = (vault_dir / "world" / "world.yaml").read_text()
    assert "Pat is in The Yard" in world


def test_frozen_asks_no_llm_even_when_one_answers(
    world_file: Path, vault_dir: Path, stub: StubOllama
) -> None:
    env = {**mudsim_env(), "MUDSIM_LLM_URL": stub.url}
    session = Session(world_file, "--vault", vault_dir, "--frozen", env=env)
    session.type("say Anyone?")
    session.until('You say, "Anyone?"')
    time.sleep(1.0)  # time enough for agents to think, were they not frozen
    code, out, err = session.end()
    assert code == 0, err
    assert "Frozen world: only you act." in out
    assert stub.calls == 0
    assert stub.requests == []
    assert [m["kind"] for m in _journal(vault_dir, "Ada")] == ["observation"]
    assert _journal(vault_dir, "Bo") == []


def test_play_ends_cleanly_at_end_of_input(world_file: Path, vault_dir: Path) -> None:
    done = _play(world_file, vault_dir, "look", "--as", "Bea", "--frozen")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("You are Bea, in Fixture.")
    assert "Saved. Goodbye." in done.stdout
    assert "Traceback" not in done.stderr


def test_bytes_that_are_not_utf8_are_replaced_not_a_crash(
    world_file: Path, vault_dir: Path
) -> None:
    session = Session(world_file, "--vault", vault_dir, "--frozen")
    assert session.process.stdin is not None
    session.process.stdin.buffer.write(b"say caf\xe9 au lait\n")
    session.process.stdin.flush()
    session.until("You say")
    code, out, err = session.end()
    assert code == 0, err
    assert 'You say, "caf\ufffd au lait"' in out


def test_quit_ends_play_while_stdin_stays_open(world_file: Path, vault_dir: Path) -> None:
    session = Session(world_file, "--vault", vault_dir, "--frozen")
    session.type("look")
    session.type("quit")
    code, out, err = session.end(close=False)  # the reader thread is still waiting
    assert code == 0, err
    assert err == ""
    assert out.endswith("Saved. Goodbye.\n")


# -- with thinking agents -----------------------------------------------------------


def test_agents_keep_thinking_while_the_player_types(
    world_file: Path, vault_dir: Path, stub: StubOllama
) -> None:
    session = Session(
        world_file, "--vault", vault_dir, "--llm", stub.url, "--model", "tiny",
        "--turns", "2", "--seed", "3",
    )  # fmt: skip
    session.until("Agents keep thinking while you play")
    session.type("say Good morning, Ada.")
    session.until('You say, "Good morning, Ada."')
    session.until("(Every agent has taken its 2 turns; they stand still now.)")
    session.type("look")
    code, out, err = session.end()

    assert code == 0, err
    assert out.startswith(
        "You are Pat, in Fixture. Agents keep thinking while you play (2 agents, "
        f"backend {stub.url}, model tiny). Type 'help' for commands, 'quit' to leave.\n"
    )
    assert "Ada pauses, deep in thought..." in out  # she is in Pat's room
    assert out.endswith("Saved. Goodbye.\n")
    for agent in ("Ada", "Bo"):
        turns = [m["command"] for m in _journal(vault_dir, agent) if m["kind"] == "result"]
        assert len(turns) == 2, agent
        # the stub's two replies in turn; a line that would repeat the agent's last one
        # is asked again, then falls back to a move of the prompt's examples
        assert STUB_SAY in turns or "look" in turns, agent
        assert turns.count(STUB_SAY) <= 1, agent
    heard = [m["text"] for m in _journal(vault_dir, "Ada") if m["kind"] == "observation"]
    assert 'Pat says, "Good morning, Ada."' in heard
    mine = [m["command"] for m in _journal(vault_dir, "Pat") if m["kind"] == "result"]
    assert mine == ["say Good morning, Ada.", "look"]
    prompts = [str(r["prompt"]) for r in stub.requests if not is_knowledge_prompt(r)]
    assert {p.rsplit("\n", 1)[-1] for p in prompts} == {"~Ada>", "~Bo>"}  # turns only
    # leaving is a stop: the knowledge passes a finished run would start wait for the next
    assert sum(1 for r in stub.requests if is_knowledge_prompt(r)) == 0
    assert err == ""  # nothing was in progress: nothing to say


def test_end_of_input_stops_real_time_agents_with_the_journal_intact(
    tmp_path: Path, vault_dir: Path, stub: StubOllama
) -> None:
    quick = _quick_world(tmp_path, "Ada", "Bo")
    session = Session(quick, "--vault", vault_dir, "--llm", stub.url, "--model", "tiny")
    session.until('Ada says, "Hello from the stub."')
    session.type("say Still here.")
    session.until('You say, "Still here."')
    code, out, err = session.end()

    assert code == 0, err
    assert out.endswith("Saved. Goodbye.\n")
    for agent in ("Ada", "Bo", "Pat"):
        records = _journal(vault_dir, agent)
        assert [m["seq"] for m in records] == list(range(len(records)))
        state = json.loads((vault_dir / "agents" / agent / "memory-state.json").read_text())
        assert state["memories"] == len(records)
        assert state["in_flight"] is False
    assert any(m["kind"] == "result" for m in _journal(vault_dir, "Ada"))
    # the agents think every 0.2 s: input may end between two turns (nothing to say) or
    # during one, when the one line says what is waited for; nothing else is said
    stop = (
        r"mudsim: stopping: waiting at most 30 s for [^\n]+ in progress"
        r"(; [^\n]+ left for the next run)? \(Ctrl-C again to stop at once\)\n"
    )
    assert re.fullmatch(f"({stop})?", err), err


def test_no_llm_answering_means_only_you_act_said_in_one_line(
    world_file: Path, vault_dir: Path
) -> None:
    done = _play(world_file, vault_dir, "look\n")  # MUDSIM_LLM_URL: nothing listens there
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("mudsim: the agents stay still, only you act: cannot reach")
    assert done.stderr.count("\n") == 1
    assert "Frozen world: only you act." in done.stdout


def test_an_llm_named_with_llm_that_does_not_answer_is_exit_3(
    world_file: Path, vault_dir: Path
) -> None:
    done = _play(world_file, vault_dir, "look\n", "--llm", "http://127.0.0.1:9")
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr.startswith("mudsim: cannot reach the LLM at http://127.0.0.1:9")
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "extra",
    [["--frozen", "--llm", "fake:"], ["--frozen", "--turns", "2"], ["--turns", "0"]],
    ids=["frozen with --llm", "frozen with --turns", "no turns"],
)
def test_options_that_make_no_sense_are_one_line_exit_2(
    world_file: Path, vault_dir: Path, extra: list[str]
) -> None:
    done = _play(world_file, vault_dir, "", *extra)
    assert done.returncode == 2
    assert done.stderr.startswith("mudsim: ")
    assert done.stderr.count("\n") == 1
    assert not vault_dir.exists()


def test_play_with_unknown_character_is_one_line_exit_2(world_file: Path, vault_dir: Path) -> None:
    done = _play(world_file, vault_dir, "", "--as", "Nobody")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("mudsim: no character called 'Nobody'")


def test_leaving_while_a_turn_is_in_flight_says_what_it_waits_for(
    tmp_path: Path, vault_dir: Path, stub: StubOllama
) -> None:
    quick = _quick_world(tmp_path, "Ada")
    stub.delay = 3.0  # a slow model: Ada's turn is in flight when the player leaves
    session = Session(quick, "--vault", vault_dir, "--llm", stub.url, "--model", "tiny")
    session.until("Agents keep thinking while you play")
    deadline = time.monotonic() + 20
    while not stub.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    code, out, err = session.end()  # Ctrl-D

    assert code == 0, err
    assert err.startswith("mudsim: stopping: waiting at most 30 s for 1 turn in progress"), err
    assert out.endswith("Saved. Goodbye.\n")
    assert not [r for r in stub.requests if is_knowledge_prompt(r)]  # left for the next run
