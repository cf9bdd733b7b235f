"""One embedded model loaded by llama-cpp-python (``engine.llm.local`` says which model
and runs it behind the ``Backend`` protocol).

- ``LocalModel`` is one loaded model. llama.cpp contexts are not thread-safe, so every
  call holds the model's lock; a prefix cache keeps the evaluated state of recent
  agent prompts (turns and warms; ``engine.llm.local.KEPT_ROLES``), so an agent whose
  prompt starts as last time only pays for what changed, even when other agents'
  prompts came in between; it is kept on disk across restarts
  (``engine.llm.prefix_cache``). A call can be cancelled: llama.cpp's abort callback and
  a stopping criterion stop it, in its prompt or before its next token.
- ``_load`` loads the GGUF with llama.cpp's extra CPU buffer types off (AMX on some
  virtual machines); ``_sampling`` turns Ollama options into llama.cpp arguments.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.errors import LLMRequestError, LLMUnavailableError
from engine.llm.prefix_cache import cache_folder, lean_cache, load_states, save_states

if TYPE_CHECKING:
    from llama_cpp.llama import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

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
