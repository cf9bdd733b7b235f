"""Which model a run's calls went to, beyond its name: ``run.json``'s ``model_digests``.

- An Ollama server's digest for the model (``/api/tags``, read when the endpoints are
  checked: ``OllamaBackend.digests``), ``sha256:...``.
- The embedded model: the sha256 of its ``.gguf`` file (read once per file and process).
- The scripted backend (``fake:``): the sha256 of its script, so two scripts differ.
- An OpenAI-compatible server names no digest: ``unknown``.

Where endpoints serving one model disagree, every digest is kept, sorted, joined by
``,``.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from engine.llm.connect import has_model
from engine.llm.dispatcher import Endpoint
from engine.llm.fake import ScriptedBackend
from engine.llm.local import LocalBackend
from engine.llm.ollama import OllamaBackend

UNKNOWN: Final = "unknown"
FAKE_MODEL: Final = "fake"
"""What a scripted run's records name as its model (it runs no model)."""


def model_digests(endpoints: Iterable[Endpoint], models: Iterable[str]) -> dict[str, str]:
    """Model name -> its identity as the ``endpoints`` that serve it give it (after
    ``check_endpoints``, which asked the servers: a dispatcher's ``endpoints``)."""
    endpoints = list(endpoints)
    found: dict[str, set[str]] = {}
    for model in sorted(set(models)):
        for endpoint in endpoints:
            found.setdefault(model, set()).add(_digest(endpoint.backend, model))
    return {model: ",".join(sorted(digests)) for model, digests in found.items()}


def _digest(backend: object, model: str) -> str:
    if isinstance(backend, LocalBackend):
        return file_digest(Path(backend.path))
    if isinstance(backend, ScriptedBackend):
        script = "\n".join(backend.replies) + "\n" + backend.summary
        return f"sha256:{hashlib.sha256(script.encode('utf-8')).hexdigest()}"
    if isinstance(backend, OllamaBackend):
        for name, digest in sorted(backend.digests.items()):
            if has_model(model, [name]):
                return digest
    return UNKNOWN


@functools.cache
def file_digest(path: Path) -> str:
    """``sha256:`` and the file's hash (``unknown`` if it cannot be read)."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return UNKNOWN
    return f"sha256:{digest.hexdigest()}"
