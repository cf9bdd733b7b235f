"""The embedded model's own tokenizer, as a ``TokenCounter`` (``engine.memory.tokens``).

Only the GGUF's vocabulary is loaded (llama.cpp's ``vocab_only``: a tenth of a second,
no weights, no context), on the first count, apart from the model that generates: a
prompt can be counted while the model is busy with another call (the generating
model's lock is held for seconds). llama.cpp counts without writing the tokens out (a
call with no room answers with the count). What is counted is what llama.cpp evaluates
for a completion: the text's tokens, special tokens' text counted as plain text, no BOS
(the prompt's ``RESERVED`` tokens cover one).
"""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from engine.errors import LLMUnavailableError

KEPT = 4096
"""Counts remembered (texts of at most ``KEPT_CHARS``): a prompt's memory lines come
back turn after turn."""
KEPT_CHARS = 2048


class EmbeddedTokens:
    """Counts tokens as the embedded model at ``path`` does (thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._vocab: Any = None
        self._model: Any = None
        self._kept: OrderedDict[str, int] = OrderedDict()

    def count(self, text: str) -> int:
        if not text:
            return 0
        if len(text) <= KEPT_CHARS:
            with self._lock:
                known = self._kept.get(text)
                if known is not None:
                    self._kept.move_to_end(text)
                    return known
        found = self._count(text.encode("utf-8", "replace"))
        if len(text) <= KEPT_CHARS:
            with self._lock:
                self._kept[text] = found
                if len(self._kept) > KEPT:
                    self._kept.popitem(last=False)
        return found

    def pieces(self, text: str) -> list[str]:
        """The tokens of ``text`` as text (a token that is part of a character is shown
        as U+FFFD), for the calibration script."""
        from llama_cpp import llama_cpp as native

        data = text.encode("utf-8", "replace")
        with self._lock:
            vocab = self._loaded()
            size = self._tokens(data)
            ids = (native.llama_token * max(1, size))()
            native.llama_tokenize(vocab, data, len(data), ids, size, False, False)
            pieces = []
            for token in ids[:size]:
                buffer = (ctypes.c_char * 256)()
                length = native.llama_token_to_piece(vocab, token, buffer, 256, 0, False)
                pieces.append(buffer.raw[: max(0, length)].decode("utf-8", "replace"))
        return pieces

    def _count(self, data: bytes) -> int:
        with self._lock:
            self._loaded()
            return self._tokens(data)

    def _tokens(self, data: bytes) -> int:
        from llama_cpp import llama_cpp as native

        found = int(native.llama_tokenize(self._vocab, data, len(data), None, 0, False, False))
        return -found if found < 0 else found

    def _loaded(self) -> Any:
        """The vocabulary (loaded on first use; the lock is held)."""
        if self._vocab is not None:
            return self._vocab
        try:
            from llama_cpp import llama_cpp as native
            from llama_cpp._utils import suppress_stdout_stderr
        except ImportError as exc:
            raise LLMUnavailableError("the embedded model is not installed") from exc
        params = native.llama_model_default_params()
        params.vocab_only = True
        with suppress_stdout_stderr(disable=False):
            model = native.llama_model_load_from_file(str(self.path).encode(), params)
        if not model:
            raise LLMUnavailableError(f"cannot read the embedded model's vocabulary: {self.path}")
        self._model, self._vocab = model, native.llama_model_get_vocab(model)
        return self._vocab

    def __del__(self) -> None:
        model, self._model = getattr(self, "_model", None), None
        if model:
            try:
                from llama_cpp import llama_cpp as native

                native.llama_model_free(model)
            except Exception:  # at interpreter exit the module may be gone
                pass
