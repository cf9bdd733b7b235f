"""The Ollama backend: ``POST /api/generate`` over httpx, streaming (NDJSON) or not.

Completion-style prompts go with ``raw: true`` (else Ollama wraps them in a chat
template); stop sequences go in ``options.stop``. Every NDJSON line is checked for an
``error`` key, because once a stream has started the status is already 200. With a
profile's ``constrain: true``, ``format`` carries the JSON schema of a valid command.

A profile that leaves ``constrain`` unset gets it for a small model: the first request
for a model asks ``/api/show`` once (the start-up check does it before the first turn),
and a model under a billion parameters is constrained (it rarely writes a valid
command unaided). A server that does not answer ``/api/show`` keeps it off, silently.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from engine.errors import LLMError, LLMResponseError, LLMUnavailableError
from engine.llm.http import HttpBackend, check_status, decode_object, once_started
from engine.llm.model_facts import ModelFacts, facts_from_show
from engine.llm.request import Generation, LLMRequest

SHOW_TIMEOUT = 10.0
"""Seconds ``/api/show`` gets (it reads a file's header: a server that takes longer is
busy, and the constrain default is not worth the wait)."""


class OllamaBackend(HttpBackend):
    def __init__(self, base_url: str, **settings: Any) -> None:
        super().__init__(base_url, **settings)
        self._facts: dict[str, ModelFacts | None] = {}
        self._facts_lock = asyncio.Lock()
        self.server_version = ""
        """What ``/api/version`` said (``mudsim-serve-llm``: the embedded model, served)."""
        self.digests: dict[str, str] = {}
        """Model name -> its digest, as ``/api/tags`` last gave them (``models``)."""

    async def generate(self, request: LLMRequest) -> Generation:
        constrain = request.constrain
        if constrain is None and request.constraint is not None:
            facts = await self.facts(request.model)
            constrain = facts is not None and facts.small
        started = time.perf_counter()
        body = self.body(request, constrain=constrain)
        with self.reaching():
            if self.stream:
                text, final = await self._streamed(body)
            else:
                final = await self._whole(body)
                text = str(final.get("response", ""))
        return Generation(
            text=text,
            prompt_tokens=int(final.get("prompt_eval_count") or 0),
            completion_tokens=int(final.get("eval_count") or 0),
            latency=time.perf_counter() - started,
            done_reason=final.get("done_reason"),
        )

    async def embed(self, texts: list[str], model: str) -> list[list[float]]:
        """``POST /api/embed``: one vector per text (what retrieval compares)."""
        with self.reaching():
            response = await self._client.post(
                "/api/embed", json={"model": model, "input": texts, "truncate": True}
            )
        check_status(response)
        vectors = decode_object(response.text).get("embeddings")
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            raise LLMResponseError(f"{self.base_url}/api/embed answered no vector per text")
        try:
            return [[float(x) for x in vector] for vector in vectors]
        except (TypeError, ValueError) as exc:
            raise LLMResponseError(
                f"{self.base_url}/api/embed answered a vector of non-numbers"
            ) from exc

    def body(self, request: LLMRequest, *, constrain: bool | None = None) -> dict[str, Any]:
        """The JSON sent to ``/api/generate`` (the prompt factory is called here);
        ``constrain`` (default: the request's) sends the command schema as ``format``."""
        body: dict[str, Any] = {
            "model": request.model,
            "prompt": request.prompt(),
            "stream": self.stream,
            "raw": request.raw,
            "options": dict(request.options),
        }
        if request.keep_alive is not None:
            body["keep_alive"] = request.keep_alive
        if request.system and not request.raw:  # raw mode refuses a system prompt
            body["system"] = request.system
        if request.constrain is not None:
            constrain = request.constrain  # the profile's word wins
        if constrain and request.constraint is not None:
            # The reply is then {"command": ...}, which the schema may spread over lines.
            body["format"] = dict(request.constraint().json_schema)
            stops = body["options"].get("stop") or []
            body["options"]["stop"] = [s for s in stops if s != "\n"]
        return body

    async def _whole(self, body: dict[str, Any]) -> dict[str, Any]:
        response = await self._client.post("/api/generate", json=body)
        check_status(response)
        return decode_object(response.text)

    async def _streamed(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        parts: list[str] = []
        final: dict[str, Any] | None = None
        async with self._client.stream("POST", "/api/generate", json=body) as response:
            if response.status_code != 200:
                await response.aread()
                check_status(response)
            # Read to the end even after "done": a response closed half-read cannot
            # go back to the pool, and every later call would open a new connection.
            with once_started(parts, self.base_url):
                async for line in response.aiter_lines():
                    if not line.strip() or final is not None:
                        continue
                    chunk = decode_object(line)
                    parts.append(str(chunk.get("response", "")))
                    if chunk.get("done"):
                        final = chunk
        if final is None:
            raise LLMResponseError(f"{self.base_url}: the stream ended before it said done")
        return "".join(parts), final

    async def version(self) -> str:
        response = await self.get_json("/api/version")
        self.server_version = str(response.get("version", "?"))
        return self.server_version

    async def models(self) -> list[str]:
        """Names of the models the server has (``/api/tags``); each one's digest is kept
        in ``digests`` (``sha256:...``) where the server gives it."""
        response = await self.get_json("/api/tags")
        found = [m for m in response.get("models", []) if isinstance(m, dict)]
        for model in found:
            digest = str(model.get("digest") or "")
            if digest:
                self.digests[str(model.get("name", ""))] = (
                    digest if digest.startswith("sha256:") else f"sha256:{digest}"
                )
        return [str(m.get("name", "")) for m in found]

    async def facts(self, model: str) -> ModelFacts | None:
        """What ``/api/show`` says of ``model`` (parameter count, context length), asked
        once per model; None when the server does not say (an error status, a body that
        is not Ollama's). Not reaching the server is not remembered: the next call asks
        again."""
        async with self._facts_lock:
            if model not in self._facts:
                try:
                    self._facts[model] = await self._show(model)
                except LLMUnavailableError:
                    return None
            return self._facts[model]

    async def _show(self, model: str) -> ModelFacts | None:
        with self.reaching():
            response = await self._client.post(
                "/api/show", json={"model": model}, timeout=SHOW_TIMEOUT
            )
        try:
            check_status(response)
            return facts_from_show(decode_object(response.text))
        except LLMError:
            return None
