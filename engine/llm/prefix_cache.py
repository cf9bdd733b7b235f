"""The embedded model's prefix cache: lean in memory, and kept on disk across restarts.

llama-cpp-python's ``LlamaRAMCache`` keeps, with each evaluated prompt, a copy of the
logits of up to ``n_batch`` positions (100 MB for SmolLM2's 49,152-token vocabulary),
which it does not count against its capacity. A completion always evaluates the last
prompt token again, so only that row is ever read: ``LeanRAMCache`` keeps one.

Evaluating a cold prompt is most of the first turn after a restart (about 9 ms a token
on two cores: 9 s for a 1,000-token prompt). ``save_states`` writes the newest states
(each agent's last prompt, about 23 MB for 1,000 tokens) to the user's cache folder when
the backend closes, and ``load_states`` reads them back when the model loads, so the
first turn only evaluates what changed since. The files are a cache: one that cannot be
read, or that this llama.cpp build refuses, is deleted and costs nothing but the cold
evaluation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

STATES_KEPT = 8
"""States written at close (the newest first): a small world's agents' last prompts."""
SUFFIX = ".state"

log = logging.getLogger("mudsim")


def cache_folder(model: Path, n_ctx: int) -> Path:
    """``$XDG_CACHE_HOME/mudsim/prefixes/<model>-<n_ctx>-<digest>`` (``~/.cache`` when
    unset): one folder per model file and context size."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    try:
        size = model.stat().st_size
    except OSError:
        size = 0
    from llama_cpp import __version__ as build

    # flash attention lays the state out its own way: a state saved without it is not reused
    digest = hashlib.sha1(f"{model.resolve()}:{size}:{build}:fa".encode()).hexdigest()[:12]
    return base / "mudsim" / "prefixes" / f"{model.stem}-{n_ctx}-{digest}"


def lean_cache(capacity_bytes: int) -> Any:
    """A ``LlamaRAMCache`` that keeps one row of logits per state."""
    from llama_cpp.llama_cache import LlamaRAMCache

    class LeanRAMCache(LlamaRAMCache):  # type: ignore[misc]
        def __setitem__(self, key: Any, value: Any) -> None:
            value.scores = value.scores[-1:].copy()
            super().__setitem__(key, value)

    return LeanRAMCache(capacity_bytes=capacity_bytes)


def save_states(cache: Any, folder: Path, keep: int = STATES_KEPT) -> int:
    """Write the ``keep`` newest states of ``cache`` to ``folder`` (each file atomically;
    older files go). How many were written; a failure is logged, never raised."""
    states = list(cache.cache_state.items())[-keep:]
    written: set[str] = set()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for key, state in states:
            name = hashlib.sha1(repr(key).encode()).hexdigest()[:16] + SUFFIX
            header = {"n_tokens": state.n_tokens, "seed": state.seed, "tokens": list(key)}
            tmp = folder / f".{name}.{os.getpid()}.tmp"
            with tmp.open("wb") as file:
                file.write(json.dumps(header).encode() + b"\n")
                file.write(state.llama_state)
            os.replace(tmp, folder / name)
            written.add(name)
        for old in folder.glob(f"*{SUFFIX}"):
            if old.name not in written:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("the prefix cache could not be saved in %s: %s", folder, exc)
    return len(written)


def load_states(llama: Any, cache: Any, folder: Path) -> int:
    """Put the states saved in ``folder`` into ``cache`` (oldest first, so the newest
    stay). How many were loaded; unreadable files are deleted."""
    import numpy as np
    from llama_cpp.llama import LlamaState

    loaded = 0
    try:
        files = sorted(folder.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime)
    except OSError:
        files = []
    for path in files:
        try:
            with path.open("rb") as file:
                header = json.loads(file.readline())
                blob = file.read()
            tokens = [int(t) for t in header["tokens"]]
            evaluated = int(header["n_tokens"])  # the last token drawn is not evaluated yet
            n_ctx = int(llama.n_ctx())
            if not 0 < evaluated <= len(tokens) <= n_ctx:
                raise ValueError("the state does not fit this context")
            ids = np.full((n_ctx,), -1, dtype=np.intc)
            ids[:evaluated] = tokens[:evaluated]
            scores = np.zeros((1, llama.n_vocab()), dtype=np.single)
            state = LlamaState(ids, scores, evaluated, blob, len(blob), int(header["seed"]))
            llama.load_state(state)  # refused here, not in the middle of a turn
            llama.reset()
            cache[tokens] = state
            loaded += 1
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            log.warning("a saved prefix state was unreadable and is removed: %s (%s)", path, exc)
            path.unlink(missing_ok=True)
    return loaded
