"""Embeddings without a model: a hashed bag of words (deterministic, unit length), what
the loopback stub's ``/api/embed`` and the scripted backend answer. Texts that share
words point the same way, so tests and demos can exercise semantic retrieval."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol, cast

DIMENSIONS: Final = 64


def bag_of_words(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """Each word adds a fixed pseudo-random vector (from its hash); then unit length."""
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=dimensions).digest()
        vector = [v + (byte - 127.5) / 127.5 for v, byte in zip(vector, digest, strict=True)]
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


class Embeds(Protocol):
    async def embed(self, texts: list[str], model: str) -> list[list[float]]: ...


@dataclass(frozen=True)
class Embedder:
    """The embedding model retrieval compares with: a backend that embeds, and its model."""

    backend: Embeds
    model: str

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await self.backend.embed(texts, self.model)


def choose_embedder(backends: Iterable[object], model: str | None) -> Embedder | None:
    """The first backend that embeds, with ``model`` (the ``embedder`` profile's; None:
    no embeddings, retrieval stays with keywords)."""
    if not model:
        return None
    for backend in backends:
        if callable(getattr(backend, "embed", None)):
            return Embedder(cast(Embeds, backend), model)
    return None
