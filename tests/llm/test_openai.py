"""The OpenAI-compatible backend against the stub's /v1 routes (real HTTP, loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.errors import LLMResponseError, LLMUnavailableError
from engine.llm.openai import OpenAIBackend
from engine.llm.request import LLMRequest
from engine.llm.stub_server import StubOllama
from engine.memory.constraint import Constraint


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(replies=["say Hello there", "look"], models=["tiny"]) as server:
        yield server


def _request() -> LLMRequest:
    options = {"stop": ["\n"], "num_ctx": 2048, "num_predict": 32, "temperature": 0.7, "seed": 3}
    return LLMRequest(prompt=lambda: "You are Ada.\n~Ada>", model="tiny", options=options)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
async def test_completions_read_text_usage_and_finish(
    stub: StubOllama, stream: bool, suffix: str
) -> None:
    backend = OpenAIBackend(stub.url + suffix, stream=stream)
    try:
        result = await backend.generate(_request())
        assert await backend.models() == ["tiny"]
    finally:
        await backend.aclose()
    assert result.text == "say Hello there"
    assert result.done_reason == "stop"
    assert result.prompt_tokens == len("You are Ada.\n~Ada>") // 4
    assert result.completion_tokens >= 1
    sent = stub.requests[0]
    assert sent["max_tokens"] == 32  # always sent: the OpenAI default is 16
    assert sent["stop"] == ["\n"]
    assert (sent["temperature"], sent["seed"]) == (0.7, 3)
    assert "num_ctx" not in sent
    assert sent["stream"] is stream
    assert ("stream_options" in sent) is stream


async def test_http_errors_keep_their_status(stub: StubOllama) -> None:
    backend = OpenAIBackend(stub.url)
    stub.fail_next(503)
    try:
        with pytest.raises(LLMResponseError) as caught:
            await backend.generate(_request())
    finally:
        await backend.aclose()
    assert caught.value.status == 503
    assert caught.value.retryable


async def test_an_error_event_inside_the_stream_is_an_error(stub: StubOllama) -> None:
    stub.error_mid_stream = True
    backend = OpenAIBackend(stub.url)
    try:
        with pytest.raises(LLMResponseError, match="injected error mid-stream"):
            await backend.generate(_request())
    finally:
        await backend.aclose()


async def test_an_unreachable_server_is_unavailable() -> None:
    backend = OpenAIBackend("http://127.0.0.1:9/v1")
    try:
        with pytest.raises(LLMUnavailableError, match="cannot reach"):
            await backend.generate(_request())
    finally:
        await backend.aclose()


async def test_streamed_calls_reuse_one_connection(stub: StubOllama) -> None:
    backend = OpenAIBackend(stub.url)
    try:
        for _ in range(4):
            await backend.generate(_request())
    finally:
        await backend.aclose()
    assert stub.connections == 1


async def test_a_request_that_asks_for_its_schema_carries_it_in_each_servers_field(
    stub: StubOllama,
) -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    constraint = Constraint(gbnf='root ::= "[]"', json_schema=schema)
    asked = LLMRequest(
        prompt=lambda: "JSON:", model="tiny", constraint=lambda: constraint, constrain=True
    )
    default = LLMRequest(prompt=lambda: "JSON:", model="tiny", constraint=lambda: constraint)
    backend = OpenAIBackend(stub.url)
    try:
        await backend.generate(asked)
        await backend.generate(default)
    finally:
        await backend.aclose()
    sent, plain = stub.requests
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": schema},
    }
    assert sent["guided_json"] == schema
    assert sent["json_schema"] == schema
    assert not {"response_format", "guided_json", "json_schema"} & set(plain)
