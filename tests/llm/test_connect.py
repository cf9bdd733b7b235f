"""Choosing the LLM and model, and the start-up check against real loopback servers."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from engine.config import DEFAULT_LLM_URL, DEFAULT_MODEL, EndpointConfig, LLMConfig, RoleProfile
from engine.errors import LLMUnavailableError, UsageError
from engine.llm.connect import (
    EndpointChoice,
    build_dispatcher,
    check_endpoints,
    choose_llm,
    choose_model,
    has_model,
    settle_default,
)
from engine.llm.fake import ScriptedBackend
from engine.llm.stub_server import StubOllama

CONFIGURED = LLMConfig(
    endpoints=[
        EndpointConfig(url="http://gpu1:11434", slots=2, model="llama3.2:3b"),
        EndpointConfig(url="http://gpu2:11434/"),
    ],
    profiles={"actor": RoleProfile(model="qwen3:4b")},
)


def test_the_flag_wins_then_the_environment_then_llm_md_then_the_default() -> None:
    env = {"MUDSIM_LLM_URL": "http://env:1"}
    assert choose_llm("http://flag:1/", env, CONFIGURED).endpoints == (
        EndpointChoice("http://flag:1"),
    )
    assert choose_llm(None, env, CONFIGURED).source == "MUDSIM_LLM_URL"
    from_config = choose_llm(None, {}, CONFIGURED)
    assert from_config.endpoints == (
        EndpointChoice("http://gpu1:11434", 2),
        EndpointChoice("http://gpu2:11434", 1),
    )
    assert choose_llm(None, {}, LLMConfig()).endpoints == (EndpointChoice(DEFAULT_LLM_URL),)


def test_a_named_url_keeps_the_slots_llm_md_gives_it() -> None:
    assert choose_llm("http://gpu1:11434", {}, CONFIGURED).endpoints[0].slots == 2


@pytest.mark.parametrize("bad", ["gpu1:11434", "ftp://x", "Local", "local:"])
def test_a_bad_url_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="--llm"):
        choose_llm(bad, {}, LLMConfig())


def test_local_names_the_embedded_model_everywhere() -> None:
    for choice in (
        choose_llm("local", {}, CONFIGURED),
        choose_llm(None, {"MUDSIM_LLM_URL": "local"}, CONFIGURED),
        choose_llm(None, {}, LLMConfig(endpoints=[EndpointConfig(url="local", kind="local")])),
    ):
        assert choice.local
        assert choice.endpoints == (EndpointChoice("local", 1, "local"),)
    assert not choose_llm(None, {}, CONFIGURED).local


async def test_a_named_or_configured_llm_is_never_swapped_for_the_embedded_one() -> None:
    notices: list[str] = []
    for choice in (choose_llm("http://127.0.0.1:9", {}, LLMConfig()),
                   choose_llm(None, {}, CONFIGURED)):  # fmt: skip
        assert await settle_default(choice, notices.append) is choice
    assert notices == []


def test_fake_is_the_scripted_backend() -> None:
    choice = choose_llm("fake:look;say Hi", {}, LLMConfig())
    assert choice.fake
    backend = build_dispatcher(choice).endpoints[0].backend
    assert isinstance(backend, ScriptedBackend)
    assert backend.replies == ["look", "say Hi"]


def test_model_order() -> None:
    env = {"MUDSIM_MODEL": "env-model"}
    assert choose_model("flag-model", env, CONFIGURED, character_model="mine") == "flag-model"
    assert choose_model(None, env, CONFIGURED, character_model="mine") == "env-model"
    assert choose_model(None, {}, CONFIGURED, character_model="mine") == "mine"
    assert choose_model(None, {}, CONFIGURED) == "qwen3:4b"
    assert choose_model(None, {}, CONFIGURED, role="summarizer") == "llama3.2:3b"
    assert choose_model(None, {}, LLMConfig()) == DEFAULT_MODEL == "gemma3:4b"


def test_model_names_match_with_and_without_latest() -> None:
    assert has_model("gemma3", ["gemma3:latest"])
    assert has_model("gemma3:latest", ["gemma3"])
    assert has_model("gemma3:4b", ["llama3:8b", "gemma3:4b"])
    assert not has_model("gemma3:4b", ["gemma3:latest"])
    assert not has_model("gemma3", [])


async def test_the_check_passes_when_the_server_has_the_model() -> None:
    with StubOllama(models=["gemma3:latest"]) as stub:
        dispatcher = build_dispatcher(choose_llm(stub.url, {}, LLMConfig()))
        await check_endpoints(dispatcher, ["gemma3"])
        await dispatcher.aclose()


async def test_a_missing_model_names_ollama_pull() -> None:
    with StubOllama(models=["llama3:8b"]) as stub:
        dispatcher = build_dispatcher(choose_llm(stub.url, {}, LLMConfig()))
        with pytest.raises(LLMUnavailableError) as caught:
            await check_endpoints(dispatcher, ["gemma3:4b"])
        await dispatcher.aclose()
    message = str(caught.value)
    assert "`ollama pull gemma3:4b`" in message
    assert "llama3:8b" in message
    assert caught.value.exit_code == 3


async def test_a_missing_model_with_another_tag_there_names_it() -> None:
    with StubOllama(models=["smollm2:135m"]) as stub:  # what serve-llm serves
        dispatcher = build_dispatcher(choose_llm(stub.url, {}, LLMConfig()))
        with pytest.raises(LLMUnavailableError) as caught:
            await check_endpoints(dispatcher, ["smollm2"])
        await dispatcher.aclose()
    assert str(caught.value) == (
        f"model 'smollm2' is not on {stub.url} (it has smollm2:135m): run `ollama pull "
        "smollm2`, or pick another with --model (did you mean --model smollm2:135m?)"
    )


async def test_a_missing_model_on_an_openai_compatible_server_does_not_name_ollama() -> None:
    with StubOllama(models=["qwen3-4b"]) as stub:
        dispatcher = build_dispatcher(choose_llm(stub.url + "/v1", {}, LLMConfig()))
        with pytest.raises(LLMUnavailableError) as caught:
            await check_endpoints(dispatcher, ["gemma3:4b"])
        await dispatcher.aclose()
    message = str(caught.value)
    assert "(it has qwen3-4b): pick another with --model" in message
    assert "ollama" not in message


async def test_an_unreachable_server_says_how_to_start_ollama() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    dispatcher = build_dispatcher(choose_llm(url, {}, LLMConfig()))
    with pytest.raises(LLMUnavailableError) as caught:
        await check_endpoints(dispatcher, ["gemma3:4b"])
    await dispatcher.aclose()
    message = str(caught.value)
    assert message.startswith(f"cannot reach the LLM at {url} for model 'gemma3:4b' (")
    assert "ollama serve" in message
    assert "--llm" in message
    assert "\n" not in message


def test_a_v1_url_is_an_openai_compatible_server() -> None:
    from engine.llm.openai import OpenAIBackend

    choice = choose_llm("http://gpu1:8000/v1/", {}, LLMConfig())
    assert choice.endpoints == (EndpointChoice("http://gpu1:8000/v1", 1, "openai"),)
    assert isinstance(build_dispatcher(choice).endpoints[0].backend, OpenAIBackend)
    mixed = LLMConfig(endpoints=[EndpointConfig(url="http://a:8000", kind="openai", slots=4),
                                 EndpointConfig(url="http://b:11434")])  # fmt: skip
    kinds = [(e.kind, e.slots) for e in choose_llm(None, {}, mixed).endpoints]
    assert kinds == [("openai", 4), ("ollama", 1)]


async def test_the_check_asks_an_openai_server_for_its_models() -> None:
    with StubOllama(models=["tiny"]) as stub:
        dispatcher = build_dispatcher(choose_llm(stub.url + "/v1", {}, LLMConfig()))
        await check_endpoints(dispatcher, ["tiny"])
        with pytest.raises(LLMUnavailableError, match="model 'big' is not on"):
            await check_endpoints(dispatcher, ["big"])
        await dispatcher.aclose()


def test_local_colon_picks_an_embedded_model_by_name_or_path(tmp_path: Path) -> None:
    from engine.llm.local import choose_local_model

    assert choose_llm("local:gemma3", {}, LLMConfig()).endpoints == (
        EndpointChoice("local:gemma3", 1, "local"),
    )
    assert choose_llm("local:gemma3", {}, LLMConfig()).local
    assert choose_local_model("gemma").name == "gemma3:270m"
    assert choose_local_model("SmolLM2").name == "smollm2:135m"
    assert choose_local_model(None).name == "smollm2:135m"
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")
    assert choose_local_model(str(gguf)).path == gguf
    assert choose_local_model(str(tmp_path / "absent.gguf")).path is None
    with pytest.raises(UsageError, match="not an embedded model"):
        choose_llm("local:nonsense", {}, LLMConfig())


def test_an_embedded_model_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    from engine.llm.local import LocalBackend

    with pytest.raises(LLMUnavailableError, match="no model file at"):
        LocalBackend(model=str(tmp_path / "absent.gguf"))
