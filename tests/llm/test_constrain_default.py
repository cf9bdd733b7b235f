"""The ``constrain`` default over HTTP: an Ollama server's ``/api/show`` (asked once per
model) turns it on for a model under a billion parameters; a profile's word wins; a
server that does not say leaves it off. Real loopback servers throughout."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.config import LLMConfig
from engine.llm.connect import build_dispatcher, check_endpoints, choose_llm
from engine.llm.model_facts import (
    ModelFacts,
    facts_from_show,
    human_number,
    parse_parameter_size,
)
from engine.llm.ollama import OllamaBackend
from engine.llm.request import LLMRequest
from engine.llm.stub_server import StubOllama
from engine.memory.constraint import Constraint

SMALL, BIG = "smollm2:135m", "llama3:8b"
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(replies=["look"], models=[SMALL, BIG],
                      parameters={SMALL: 134_515_008, BIG: 8_030_261_248}) as server:  # fmt: skip
        yield server


def _turn(model: str, constrain: bool | None = None) -> LLMRequest:
    constraint = Constraint(gbnf='root ::= "look"', json_schema=SCHEMA)
    return LLMRequest(prompt=lambda: "~Ada>", model=model, options={"stop": ["\n"]},
                      constraint=lambda: constraint, constrain=constrain)  # fmt: skip


async def test_a_small_model_is_constrained_and_a_big_one_is_not(stub: StubOllama) -> None:
    backend = OllamaBackend(stub.url)
    try:
        small = await backend.generate(_turn(SMALL))
        await backend.generate(_turn(BIG))
        await backend.generate(_turn(SMALL))
    finally:
        await backend.aclose()
    first, big, again = stub.requests
    assert first["format"] == SCHEMA
    assert "\n" not in first["options"]["stop"]  # the JSON may span lines
    assert json.loads(small.text) == {"command": "look"}
    assert "format" not in big
    assert big["options"]["stop"] == ["\n"]
    assert again["format"] == SCHEMA
    assert stub.hits["/api/show"] == 2  # once per model


async def test_the_profile_wins_both_ways(stub: StubOllama) -> None:
    backend = OllamaBackend(stub.url, stream=False)
    try:
        await backend.generate(_turn(SMALL, constrain=False))
        await backend.generate(_turn(BIG, constrain=True))
    finally:
        await backend.aclose()
    assert "format" not in stub.requests[0]
    assert stub.requests[1]["format"] == SCHEMA
    assert stub.hits["/api/show"] == 0  # nothing to decide, nothing asked


async def test_facts_give_parameters_and_context(stub: StubOllama) -> None:
    backend = OllamaBackend(stub.url)
    try:
        assert await backend.facts("smollm2:135m") == ModelFacts(134_515_008, 8192, "stub")
        assert await backend.facts("missing") is None  # a 404: not Ollama's word on size
    finally:
        await backend.aclose()


async def test_the_start_up_check_asks_show_once_per_model(stub: StubOllama) -> None:
    dispatcher = build_dispatcher(choose_llm(stub.url, {}, LLMConfig()))
    try:
        await check_endpoints(dispatcher, [SMALL, BIG, SMALL])
        assert stub.hits["/api/show"] == 2
        backend = dispatcher.endpoints[0].backend
        assert isinstance(backend, OllamaBackend)
        await backend.generate(_turn(SMALL))
    finally:
        await dispatcher.aclose()
    assert stub.hits["/api/show"] == 2  # the first turn asks nothing more
    assert stub.requests[0]["format"] == SCHEMA


class _OldOllama(BaseHTTPRequestHandler):
    """An Ollama-like server from before ``/api/show``: generate only, 404 otherwise."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/api/generate":
            sent = {"response": json.dumps(body), "done": True, "done_reason": "stop"}
            self._send(200, sent)
        else:
            self._send(404, {"error": "404 page not found"})

    def _send(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


async def test_a_server_without_show_keeps_it_off_quietly() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OldOllama)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    backend = OllamaBackend(f"http://127.0.0.1:{server.server_address[1]}", stream=False)
    try:
        sent = json.loads((await backend.generate(_turn(SMALL))).text)
        assert await backend.facts(SMALL) is None
    finally:
        await backend.aclose()
        server.shutdown()
        server.server_close()
    assert "format" not in sent


async def test_an_unreachable_show_is_asked_again_next_time() -> None:
    backend = OllamaBackend("http://127.0.0.1:9")
    try:
        assert await backend.facts(SMALL) is None
        assert SMALL not in backend._facts  # not remembered: the server may come up
    finally:
        await backend.aclose()


def test_a_headless_run_over_http_constrains_a_small_model(
    tmp_path: Path, world_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    with StubOllama(replies=["look"], models=[SMALL], parameters={SMALL: 134_515_008}) as stub:
        code = main(["run", str(world_file), "--vault", str(vault), "--headless",
                     "--turns", "1", "--llm", stub.url, "--model", SMALL])  # fmt: skip
        assert code == 0, capsys.readouterr().err
        turns = [b for b in stub.requests if b["prompt"].rstrip().endswith(">")]
        assert turns
        assert all("command" in b["format"]["properties"] for b in turns)
        (vault / "config" / "llm.md").write_text(
            "---\nprofiles:\n  actor:\n    constrain: false\n---\n"
        )
        sent_before = len(stub.requests)
        assert main(["run", str(world_file), "--vault", str(vault), "--headless",
                     "--turns", "1", "--llm", stub.url, "--model", SMALL]) == 0  # fmt: skip
        later = [b for b in stub.requests[sent_before:] if b["prompt"].rstrip().endswith(">")]
    assert later
    assert all("format" not in b for b in later)


@pytest.mark.parametrize(
    ("count", "shown"),
    [(8_030_261_248, "8.0B"), (8_000_000_000, "8B"), (1_500_000_000, "1.5B"),
     (134_515_008, "134.52M"), (135_000_000, "135M"), (22_000, "22K"), (7, "7")],
)  # fmt: skip
def test_parameter_sizes_as_ollama_writes_them(count: int, shown: str) -> None:
    assert human_number(count) == shown
    parsed = parse_parameter_size(shown)
    assert parsed is not None
    assert abs(parsed - count) <= count * 0.01


def test_show_answers_read_with_what_they_have() -> None:
    assert parse_parameter_size("about 8B") is None
    assert parse_parameter_size(8) is None
    full = {"model_info": {"general.architecture": "gemma3", "general.parameter_count": 268_098_176,
                           "gemma3.context_length": 32768}, "details": {"family": "gemma3"}}  # fmt: skip
    assert facts_from_show(full) == ModelFacts(268_098_176, 32768, "gemma3")
    assert facts_from_show(full).small
    sized = facts_from_show({"details": {"parameter_size": "3.2B"}})
    assert sized == ModelFacts(3_200_000_000, None, None)
    assert not sized.small
    assert not facts_from_show({}).small
    odd = {"model_info": {"general.parameter_count": True, "x.context_length": 4096}}
    assert facts_from_show(odd) == ModelFacts(None, 4096, None)
