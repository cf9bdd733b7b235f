"""The one protocol every language-model backend implements.

Cross-cutting concerns (retries, per-endpoint limits, metrics) are wrappers that
implement the same protocol around another backend.
"""

from __future__ import annotations

from typing import Protocol

from engine.llm.request import Generation, LLMRequest


class Backend(Protocol):
    async def generate(self, request: LLMRequest) -> Generation:
        """Complete ``request``; raise an ``LLMError`` on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
