"""Which LLM and model a run uses, building the dispatcher, and the start-up check.

URL: ``--llm`` > ``MUDSIM_LLM_URL`` > the ``endpoints`` of the vault's ``config/llm.md``
> ``http://localhost:11434``. ``fake:`` (optionally ``fake:look;say Hi``) is the
scripted backend. A URL ending in ``/v1`` is an OpenAI-compatible server
(``/v1/completions``: vLLM, llama.cpp's server); in ``llm.md`` say ``kind: openai``. Model: ``--model`` > ``MUDSIM_MODEL`` > the character's ``model``
in the world file > the role profile in ``llm.md`` (then the first endpoint's
``model``) > ``gemma3:4b``.

Before the first turn every Ollama endpoint is asked for ``/api/version`` and
``/api/tags`` (an OpenAI-compatible one for ``/v1/models``); an endpoint that does not answer, or lacks a model, is one line and
exit 3 (``LLMUnavailableError``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.config import DEFAULT_LLM_URL, DEFAULT_MODEL, LLMConfig, RoleName
from engine.errors import LLMError, LLMUnavailableError, UsageError
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.llm.ollama import OllamaBackend
from engine.llm.openai import OpenAIBackend

FAKE_PREFIX = "fake:"


@dataclass(frozen=True)
class EndpointChoice:
    url: str
    slots: int = 1
    kind: str = "ollama"
    """``ollama`` (/api/generate) or ``openai`` (/v1/completions)."""


@dataclass(frozen=True)
class LLMChoice:
    endpoints: tuple[EndpointChoice, ...]
    source: str
    """Where the choice came from: ``--llm``, ``MUDSIM_LLM_URL``, ``config/llm.md``, ``default``."""

    @property
    def fake(self) -> bool:
        return self.endpoints[0].url.startswith(FAKE_PREFIX)

    @property
    def describe(self) -> str:
        return ", ".join(e.url for e in self.endpoints)


def choose_llm(flag: str | None, environ: Mapping[str, str], config: LLMConfig) -> LLMChoice:
    named = [(flag, "--llm"), (environ.get("MUDSIM_LLM_URL"), "MUDSIM_LLM_URL")]
    for url, source in named:
        if url:
            checked = _checked(url, source)
            kind = "openai" if checked.endswith("/v1") else "ollama"
            return LLMChoice((EndpointChoice(checked, _slots(url, config), kind),), source)
    if config.endpoints:
        for endpoint in config.endpoints:
            if endpoint.kind == "local":
                raise UsageError(
                    "config/llm.md: endpoint kind 'local' (the embedded model) is not "
                    "available in this version; use kind: ollama or kind: openai"
                )
        chosen = tuple(
            EndpointChoice(_checked(e.url, "config/llm.md"), e.slots, e.kind)
            for e in config.endpoints
        )
        return LLMChoice(chosen, "config/llm.md")
    return LLMChoice((EndpointChoice(DEFAULT_LLM_URL),), "default")


def _checked(url: str, source: str) -> str:
    if url.startswith(FAKE_PREFIX):
        return url
    if url == "local":
        raise UsageError(
            f"{source}: the embedded model ('local') is not available in this version; "
            "point --llm at an Ollama-compatible server, or use --llm fake: for a scripted demo"
        )
    if not url.startswith(("http://", "https://")):
        raise UsageError(
            f"{source}: {url!r} is not an LLM URL (expected http://host:port or fake:)"
        )
    return url.rstrip("/")


def _slots(url: str, config: LLMConfig) -> int:
    """A URL named on the command line keeps the slots ``llm.md`` gives the same URL."""
    same = [e.slots for e in config.endpoints if e.url.rstrip("/") == url.rstrip("/")]
    return same[0] if same else 1


def choose_model(
    flag: str | None,
    environ: Mapping[str, str],
    config: LLMConfig,
    *,
    character_model: str | None = None,
    role: RoleName = "actor",
) -> str:
    profile = config.profiles.get(role)
    endpoint_model = config.endpoints[0].model if config.endpoints else None
    for candidate in (
        flag,
        environ.get("MUDSIM_MODEL"),
        character_model,
        profile.model if profile else None,
        endpoint_model,
    ):
        if candidate:
            return candidate
    return DEFAULT_MODEL


def has_model(wanted: str, available: Iterable[str]) -> bool:
    """``gemma3`` matches ``gemma3:latest``, and ``gemma3:latest`` matches ``gemma3``."""

    def full(name: str) -> str:
        return name if ":" in name else f"{name}:latest"

    return full(wanted) in {full(name) for name in available}


def build_dispatcher(
    choice: LLMChoice, *, retry: RetryPolicy | None = None, stream: bool = True
) -> Dispatcher:
    retry = retry or RetryPolicy()
    if choice.fake:
        spec = choice.endpoints[0].url[len(FAKE_PREFIX) :]
        return Dispatcher([Endpoint(FAKE_PREFIX, ScriptedBackend.from_spec(spec))], retry=retry)
    return Dispatcher([Endpoint(e.url, _backend(e, stream), e.slots) for e in choice.endpoints],
                      retry=retry)  # fmt: skip


def _backend(endpoint: EndpointChoice, stream: bool) -> OllamaBackend | OpenAIBackend:
    if endpoint.kind == "openai":
        return OpenAIBackend(endpoint.url, stream=stream)
    return OllamaBackend(endpoint.url, stream=stream)


async def check_endpoints(dispatcher: Dispatcher, models: Iterable[str]) -> None:
    """Every Ollama endpoint answers and has every model, or one clear line (exit 3)."""
    wanted = sorted(set(models))
    for endpoint in dispatcher.endpoints:
        backend = endpoint.backend
        if not isinstance(backend, OllamaBackend | OpenAIBackend):
            continue
        try:
            if isinstance(backend, OllamaBackend):
                await backend.version()
            available = await backend.models()
        except LLMError as exc:
            raise LLMUnavailableError(
                f"cannot reach the LLM at {endpoint.name} ({_reason(exc)}). Start Ollama "
                "with `ollama serve`, or point --llm (or MUDSIM_LLM_URL) at a running "
                "server; --llm fake: runs a scripted demo without one"
            ) from exc
        missing = [m for m in wanted if not has_model(m, available)]
        if missing:
            have = ", ".join(available) or "no models"
            raise LLMUnavailableError(
                f"model {missing[0]!r} is not on {endpoint.name} (it has {have}): "
                f"run `ollama pull {missing[0]}`, or pick another with --model"
            )


def _reason(error: Exception) -> str:
    text = str(error)
    return text.split(": ", 1)[1] if text.startswith("cannot reach") and ": " in text else text
