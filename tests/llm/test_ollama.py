"""The Ollama backend against the shipped loopback stub server (real HTTP on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from engine.errors import LLMResponseError, LLMUnavailableError
from engine.llm.ollama import OllamaBackend
from engine.llm.request import LLMRequest
from engine.llm.stub_server import StubOllama


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(replies=["say Hello there", "look"], models=["tiny:latest"]) as server:
        yield server


def _request(**options: object) -> LLMRequest:
    return LLMRequest(prompt=lambda: "You are Ada.\n~Ada>", model="tiny:latest",
                      options={"stop": ["\n"], "num_ctx": 2048, **options})  # fmt: skip


@pytest.mark.parametrize("stream", [True, False])
async def test_generate_reads_text_and_counts(stub: StubOllama, stream: bool) -> None:
    backend = OllamaBackend(stub.url, stream=stream)
    try:
        result = await backend.generate(_request())
    finally:
        await backend.aclose()
    assert result.text == "say Hello there"
    assert result.done_reason == "stop"
    assert result.prompt_tokens == len("You are Ada.\n~Ada>") // 4
    assert result.completion_tokens >= 1
    sent = stub.requests[0]
    assert sent["raw"] is True
    assert sent["stream"] is stream
    assert sent["options"] == {"stop": ["\n"], "num_ctx": 2048}
    assert "system" not in sent


async def test_http_error_carries_status_and_retryability(stub: StubOllama) -> None:
    backend = OllamaBackend(stub.url)
    stub.fail_next(503)
    stub.fail_next(400)
    try:
        with pytest.raises(LLMResponseError) as server_error:
            await backend.generate(_request())
        with pytest.raises(LLMResponseError) as client_error:
            await backend.generate(_request())
        assert (await backend.generate(_request())).text == "say Hello there"
    finally:
        await backend.aclose()
    assert server_error.value.status == 503
    assert server_error.value.retryable
    assert client_error.value.status == 400
    assert not client_error.value.retryable


async def test_unknown_model_is_a_404_that_is_not_retried(stub: StubOllama) -> None:
    backend = OllamaBackend(stub.url)
    try:
        with pytest.raises(LLMResponseError, match="not found") as caught:
            await backend.generate(LLMRequest(prompt=lambda: "x", model="missing"))
    finally:
        await backend.aclose()
    assert caught.value.status == 404
    assert not caught.value.retryable


async def test_error_line_inside_a_200_stream_is_an_error(stub: StubOllama) -> None:
    stub.error_mid_stream = True
    backend = OllamaBackend(stub.url)
    try:
        with pytest.raises(LLMResponseError, match="mid-stream"):
            await backend.generate(_request())
    finally:
        await backend.aclose()


async def test_slow_answer_times_out_as_unavailable(stub: StubOllama) -> None:
    stub.delay = 0.5
    backend = OllamaBackend(stub.url, timeout=httpx.Timeout(0.1))
    try:
        with pytest.raises(LLMUnavailableError, match="timed out"):
            await backend.generate(_request())
    finally:
        await backend.aclose()


async def test_unreachable_server_is_unavailable() -> None:
    with StubOllama() as server:
        url = server.url
    backend = OllamaBackend(url)
    try:
        with pytest.raises(LLMUnavailableError, match="cannot reach"):
            await backend.generate(_request())
    finally:
        await backend.aclose()


async def test_version_and_models(stub: StubOllama) -> None:
    backend = OllamaBackend(stub.url)
    try:
        assert await backend.version() == "0.0.0-stub"
        assert await backend.models() == ["tiny:latest"]
    finally:
        await backend.aclose()


def test_system_prompt_only_without_raw() -> None:
    backend = OllamaBackend("http://127.0.0.1:9")
    raw = backend.body(LLMRequest(prompt=lambda: "p", model="m", system="Be brief."))
    chat = backend.body(
        LLMRequest(prompt=lambda: "p", model="m", system="Be brief.", raw=False, keep_alive="10m")
    )
    assert "system" not in raw
    assert chat["system"] == "Be brief."
    assert chat["keep_alive"] == "10m"
    assert chat["raw"] is False


@pytest.mark.parametrize("stream", [True, False])
async def test_calls_reuse_one_connection(stub: StubOllama, stream: bool) -> None:
    backend = OllamaBackend(stub.url, stream=stream)
    try:
        for _ in range(5):
            assert (await backend.generate(_request())).text
    finally:
        await backend.aclose()
    assert stub.connections == 1
