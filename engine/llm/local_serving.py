"""What ``serve-llm`` reads from the embedded model beyond completions: its facts
(``/api/show``: parameter count, trained context, family, quantization), its chat
template (``/api/chat`` renders messages through it, then completes the text as usual)
and its embeddings (``/api/embed``).

Embeddings need the model loaded in embedding mode, so ``LocalEmbedder`` loads it a
second time, on first use, with a small context of its own (``EMBED_CTX`` tokens: a
longer text is cut, or refused when the request says ``truncate: false``). The GGUF
is memory-mapped, so the weights are shared; the second context costs about 100 MiB.
Vectors are mean-pooled over the text's tokens and of unit length.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import LLMUnavailableError
from engine.llm.local_model import _LOAD_LOCK, INSTALL_HINT, _refusals, _without_extra_buffers

if TYPE_CHECKING:
    from engine.llm.local_model import LocalModel

EMBED_CTX = 512
"""Tokens of one text the embedder reads (its context and batch)."""


@dataclass(frozen=True)
class LocalFacts:
    parameter_count: int
    context_length: int
    """The context the model was trained for."""
    family: str
    quantization: str
    chat_template: str
    size: int
    """Bytes of the GGUF file."""
    embedding_length: int
    metadata: Mapping[str, str] = field(default_factory=dict)


def facts_of(model: LocalModel) -> LocalFacts:
    """What the GGUF and llama.cpp say of a loaded model."""
    from llama_cpp import llama_cpp as native

    llama: Any = model.llama
    metadata = {str(k): str(v) for k, v in dict(llama.metadata).items()}
    return LocalFacts(
        parameter_count=int(native.llama_model_n_params(llama.model)),
        context_length=int(native.llama_model_n_ctx_train(llama.model)),
        family=metadata.get("general.architecture", "llama"),
        quantization=_quantization(native, metadata.get("general.file_type")),
        chat_template=metadata.get("tokenizer.chat_template", ""),
        size=Path(llama.model_path).stat().st_size,
        embedding_length=int(llama.n_embd()),
        metadata=metadata,
    )


def _quantization(native: Any, file_type: str | None) -> str:
    """``general.file_type`` by llama.cpp's name for it (3: ``Q4_1``, 15: ``Q4_K_M``)."""
    names = {
        getattr(native, name): name.split("_", 3)[-1]
        for name in dir(native)
        if name.startswith(("LLAMA_FTYPE_MOSTLY_", "LLAMA_FTYPE_ALL_"))
    }
    try:
        return str(names.get(int(file_type or ""), "unknown"))
    except ValueError:
        return "unknown"


def render_chat(model: LocalModel, messages: Sequence[Mapping[str, str]]) -> str:
    """``messages`` through the GGUF's chat template, ending where the assistant's
    reply begins. ``ValueError`` when there is no template or it refuses them."""
    import jinja2  # llama-cpp-python's own dependency

    llama: Any = model.llama
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError("the model has no chat template")
    eos = llama.detokenize([llama.token_eos()], special=True).decode(errors="replace")
    bos = llama.detokenize([llama.token_bos()], special=True).decode(errors="replace")
    try:
        rendered = _formatter(str(template), eos, bos)(messages=[dict(m) for m in messages])
    except jinja2.TemplateError as exc:
        raise ValueError(str(exc)) from exc
    return str(rendered.prompt)


@functools.lru_cache(maxsize=4)
def _formatter(template: str, eos: str, bos: str) -> Any:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    return Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)


class LocalEmbedder:
    """The model loaded for embeddings; calls are serialized by its own lock (so they
    do not wait for a generation)."""

    def __init__(self, path: Path, *, threads: int | None = None) -> None:
        self.lock = threading.Lock()
        self._llama: Any = _load_embedder(path, threads or os.cpu_count() or 1)

    def embed(
        self, texts: Sequence[str], *, truncate: bool = True
    ) -> tuple[list[list[float]], int]:
        """Unit vectors, one per text, and the tokens read. ``LLMResponseError`` for a
        text longer than ``EMBED_CTX`` tokens when not ``truncate``."""
        with self.lock, _refusals():
            if not truncate:
                for number, text in enumerate(texts, 1):
                    count = len(self._llama.tokenize(text.encode(), add_bos=True))
                    if count > EMBED_CTX:
                        raise ValueError(
                            f"input {number} is {count} tokens; embeddings read at most "
                            f"{EMBED_CTX} (truncate: true cuts it)"
                        )
            vectors, tokens = self._llama.embed(
                list(texts), normalize=True, truncate=truncate, return_count=True
            )
        return [[float(x) for x in vector] for vector in vectors], int(tokens)


def _load_embedder(path: Path, threads: int) -> Any:
    try:
        from llama_cpp import llama_cpp as native
        from llama_cpp.llama import Llama
    except ImportError as exc:
        raise LLMUnavailableError(f"the embedded model is not installed: {INSTALL_HINT}") from exc
    with _LOAD_LOCK, _without_extra_buffers(native), _quiet_load():
        try:
            return Llama(
                model_path=str(path), n_ctx=EMBED_CTX, n_batch=EMBED_CTX, n_ubatch=EMBED_CTX,
                n_threads=threads, embedding=True,
                pooling_type=native.LLAMA_POOLING_TYPE_MEAN, verbose=False,
            )  # fmt: skip
        except (ValueError, RuntimeError) as exc:
            raise LLMUnavailableError(f"cannot load the embedded model {path}: {exc}") from exc


@contextlib.contextmanager
def _quiet_load() -> Iterator[None]:
    """No stderr line while it loads: llama.cpp logs at error level that mean pooling
    is not the model's own (a generative model pools nothing), which is the point.
    ``Llama()`` sets the log level itself, so its setter is wrapped while it loads."""
    import llama_cpp.llama as llama_module

    wrapper: Any = llama_module
    original = wrapper.set_verbose

    def silent(verbose: bool) -> None:
        logging.getLogger("llama-cpp-python").setLevel(logging.CRITICAL)

    wrapper.set_verbose = silent
    try:
        yield
    finally:
        wrapper.set_verbose = original
        original(False)
