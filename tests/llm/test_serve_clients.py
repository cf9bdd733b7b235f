"""The Ollama-compatible server as the official ``ollama`` and ``openai`` Python clients
see it, against the stub on a loopback port: every route serve-llm shares with it, and
its error answers."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import httpx
import ollama
import openai
import pytest

from engine.llm.stub_server import CHAT_TEMPLATE, EMBED_DIMENSIONS, StubOllama

SMALL = "smollm2:135m"
REPLIES = ["say Hello there", "look"]


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(replies=REPLIES, models=["tiny", SMALL],
                    parameters={SMALL: 134_515_008}) as server:  # fmt: skip
        yield server


@pytest.fixture
def client(stub: StubOllama) -> Iterator[ollama.Client]:
    client = ollama.Client(host=stub.url)
    yield client
    client.close()


@pytest.fixture
def oai(stub: StubOllama) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=f"{stub.url}/v1", api_key="x", max_retries=0) as client:
        yield client


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_generate_whole_and_streamed(client: ollama.Client) -> None:
    whole = client.generate(model="tiny", prompt="You are Ada.\n~Ada>", raw=True)
    assert whole.response == "say Hello there"
    assert (whole.done, whole.done_reason) == (True, "stop")
    assert (whole.eval_count or 0) >= 1
    assert whole.created_at
    parts = list(client.generate(model="tiny", prompt="p", stream=True))
    assert "".join(p.response or "" for p in parts) == "look"
    assert parts[-1].done
    assert not any(p.done for p in parts[:-1])


def test_chat_goes_through_the_chat_template(client: ollama.Client, stub: StubOllama) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    reply = client.chat(model="tiny", messages=messages)
    assert reply.message.role == "assistant"
    assert reply.message.content == "say Hello there"
    assert reply.done
    assert reply.done_reason == "stop"
    assert stub.requests[-1]["prompt"] == "<|system|>\nBe brief.\n<|user|>\nHi\n<|assistant|>\n"
    parts = list(client.chat(model="tiny", messages=messages, stream=True))
    assert "".join(p.message.content or "" for p in parts) == "look"
    assert parts[-1].done
    assert parts[-1].eval_count


def test_chat_passes_format_on_and_no_messages_only_loads(client: ollama.Client) -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    reply = client.chat(model="tiny", messages=[{"role": "user", "content": "Go"}], format=schema)
    assert json.loads(reply.message.content or "") == {"command": "say Hello there"}
    loaded = client.chat(model="tiny", messages=[])
    assert (loaded.done, loaded.done_reason) == (True, "load")


def test_show_reports_size_context_and_template(client: ollama.Client, stub: StubOllama) -> None:
    small = client.show(SMALL)
    assert small.details is not None
    assert small.details.parameter_size == "134.52M"
    assert small.details.format == "gguf"
    assert small.details.quantization_level
    assert small.modelinfo is not None
    assert small.modelinfo["general.parameter_count"] == 134_515_008
    arch = small.modelinfo["general.architecture"]
    assert small.modelinfo[f"{arch}.context_length"] == 8192
    assert small.template == CHAT_TEMPLATE
    legacy = httpx.post(f"{stub.url}/api/show", json={"name": SMALL})  # the older field
    assert legacy.json()["details"]["parameter_size"] == "134.52M"
    big = client.show("tiny:latest")  # the tag is optional either way
    assert big.details is not None
    assert big.details.parameter_size == "8B"


def test_ps_and_list_name_the_models_with_their_details(client: ollama.Client) -> None:
    running = client.ps().models
    assert [m.model for m in running] == ["tiny", SMALL]
    assert all(m.context_length == 8192 and m.size_vram == 0 for m in running)
    assert all(m.expires_at is not None and m.details is not None for m in running)
    listed = client.list().models
    assert [m.model for m in listed] == ["tiny", SMALL]
    assert listed[1].details is not None
    assert listed[1].details.parameter_size == "134.52M"


def test_embed_one_text_or_several(client: ollama.Client) -> None:
    one = client.embed(model="tiny", input="the warm kitchen")
    assert len(one.embeddings) == 1
    assert len(one.embeddings[0]) == EMBED_DIMENSIONS
    assert math.isclose(_cosine(list(one.embeddings[0]), list(one.embeddings[0])), 1.0)
    texts = ["the warm kitchen", "a warm kitchen fire", "quantum tunnelling"]
    many = [list(v) for v in client.embed(model="tiny", input=texts).embeddings]
    assert len(many) == 3
    assert many[0] == list(one.embeddings[0])  # deterministic
    assert _cosine(many[0], many[1]) > _cosine(many[0], many[2])
    short = client.embed(model="tiny", input="the warm kitchen", dimensions=8).embeddings[0]
    assert len(short) == 8
    assert math.isclose(_cosine(list(short), list(short)), 1.0)


def test_embed_with_empty_input(client: ollama.Client, stub: StubOllama) -> None:
    assert list(client.embed(model="tiny", input="").embeddings) == []  # as Ollama: a load
    assert list(client.embed(model="tiny", input=[]).embeddings) == []
    with pytest.raises(ollama.ResponseError) as empty:
        client.embed(model="tiny", input=["a kitchen", ""])
    assert empty.value.status_code == 400
    assert empty.value.error == "input 2 is empty"
    wrong = httpx.post(f"{stub.url}/api/embed", json={"model": "tiny", "input": [1, 2]})
    assert wrong.status_code == 400
    assert "input must be a text or a list of texts" in wrong.json()["error"]


def test_openai_completions_whole_and_streamed(oai: openai.OpenAI) -> None:
    whole = oai.completions.create(model="tiny", prompt="You are Ada.\n~Ada>", max_tokens=16)
    assert whole.choices[0].text == "say Hello there"
    assert whole.choices[0].finish_reason == "stop"
    assert whole.usage is not None
    assert whole.usage.completion_tokens >= 1
    chunks = list(oai.completions.create(model="tiny", prompt="p", max_tokens=16, stream=True))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "look"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_openai_chat_completions_whole_and_streamed(oai: openai.OpenAI, stub: StubOllama) -> None:
    messages: list[dict[str, str]] = [{"role": "user", "content": "Hi"}]
    whole = oai.chat.completions.create(model="tiny", messages=messages)
    assert whole.object == "chat.completion"
    assert whole.choices[0].message.role == "assistant"
    assert whole.choices[0].message.content == "say Hello there"
    assert whole.choices[0].finish_reason == "stop"
    assert whole.usage is not None
    assert whole.usage.total_tokens >= 1
    assert stub.requests[-1]["prompt"] == "<|user|>\nHi\n<|assistant|>\n"
    stream = oai.chat.completions.create(
        model="tiny",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "look"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None
    assert len({c.id for c in chunks}) == 1


def test_openai_response_format_becomes_format(oai: openai.OpenAI) -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    reply = oai.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "Go"}],
        response_format={"type": "json_schema", "json_schema": {"name": "c", "schema": schema}},
    )
    assert json.loads(reply.choices[0].message.content or "") == {"command": "say Hello there"}


def test_an_unknown_model_is_404_in_each_dialect(client: ollama.Client, oai: openai.OpenAI) -> None:
    for call in (
        lambda: client.generate(model="nope", prompt="p"),
        lambda: client.chat(model="nope", messages=[{"role": "user", "content": "Hi"}]),
        lambda: client.show("nope"),
        lambda: client.embed(model="nope", input="x"),
    ):
        with pytest.raises(ollama.ResponseError) as caught:
            call()
        assert caught.value.status_code == 404
        assert caught.value.error == "model 'nope' not found"
    with pytest.raises(openai.NotFoundError) as missing:
        oai.chat.completions.create(model="nope", messages=[{"role": "user", "content": "Hi"}])
    assert missing.value.status_code == 404
    assert isinstance(missing.value.body, dict)
    assert missing.value.body["message"] == "model 'nope' not found"


@pytest.mark.parametrize(
    ("path", "content", "message"),
    [
        ("/api/chat", b'{"model": "tiny", "messages": [', "the body is not valid JSON"),
        ("/api/generate", b'["tiny"]', "the body must be a JSON object"),
        ("/api/show", b"{}", "model is required"),
        ("/api/chat", b'{"model": "tiny", "messages": "Hi"}', "messages must be a list"),
        (
            "/api/chat",
            b'{"model": "tiny", "messages": [{"content": "Hi"}]}',
            "message 1 has no role",
        ),
    ],
)
def test_bodies_it_cannot_read_are_400_with_one_line(
    stub: StubOllama, path: str, content: bytes, message: str
) -> None:
    answer = httpx.post(stub.url + path, content=content)
    assert answer.status_code == 400
    assert answer.json()["error"].startswith(message)


def test_the_v1_routes_answer_errors_in_openai_shape(stub: StubOllama) -> None:
    bad = httpx.post(f"{stub.url}/v1/chat/completions", content=b"{not json")
    assert bad.status_code == 400
    assert bad.json()["error"]["message"] == "the body is not valid JSON"
    empty = httpx.post(f"{stub.url}/v1/chat/completions", json={"model": "tiny", "messages": []})
    assert empty.status_code == 400
    assert empty.json()["error"]["type"] == "invalid_request_error"
    assert httpx.post(f"{stub.url}/api/pull", json={"model": "tiny"}).status_code == 404


def test_an_error_mid_stream_reaches_both_clients(
    client: ollama.Client, oai: openai.OpenAI, stub: StubOllama
) -> None:
    stub.error_mid_stream = True
    with pytest.raises(ollama.ResponseError, match="injected error mid-stream"):
        list(client.chat(model="tiny", messages=[{"role": "user", "content": "Hi"}], stream=True))
    with pytest.raises(openai.APIError, match="injected error mid-stream"):
        list(oai.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": "Hi"}], stream=True
        ))  # fmt: skip
