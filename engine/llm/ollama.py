"""The Ollama backend: ``POST /api/generate`` over httpx, streaming (NDJSON) or not.

Completion-style prompts go with ``raw: true`` (else Ollama wraps them in a chat
template); stop sequences go in ``options.stop``. Every NDJSON line is checked for an
``error`` key, because once a stream has started the status is already 200.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx

from engine.errors import LLMError, LLMResponseError, LLMUnavailableError
from engine.llm.request import Generation, LLMRequest

DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=120.0, write=30.0, pool=None)


class OllamaBackend:
    def __init__(
        self,
        base_url: str,
        *,
        stream: bool = True,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.stream = stream
        self._client = httpx.AsyncClient(
            base_url=self.base_url, timeout=timeout, transport=transport
        )

    async def generate(self, request: LLMRequest) -> Generation:
        started = time.perf_counter()
        body = self.body(request)
        try:
            if self.stream:
                text, final = await self._streamed(body)
            else:
                final = await self._whole(body)
                text = str(final.get("response", ""))
        except httpx.TimeoutException as exc:
            raise LLMUnavailableError(f"{self.base_url} timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise LLMUnavailableError(f"cannot reach {self.base_url}: {exc}") from exc
        return Generation(
            text=text,
            prompt_tokens=int(final.get("prompt_eval_count") or 0),
            completion_tokens=int(final.get("eval_count") or 0),
            latency=time.perf_counter() - started,
            done_reason=final.get("done_reason"),
        )

    def body(self, request: LLMRequest) -> dict[str, Any]:
        """The JSON sent to ``/api/generate`` (the prompt factory is called here)."""
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
        return body

    async def _whole(self, body: dict[str, Any]) -> dict[str, Any]:
        response = await self._client.post("/api/generate", json=body)
        check_status(response)
        return _decode(response.text)

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
                    chunk = _decode(line)
                    parts.append(str(chunk.get("response", "")))
                    if chunk.get("done"):
                        final = chunk
        if final is None:
            raise LLMResponseError(f"{self.base_url}: the stream ended before it said done")
        return "".join(parts), final

    async def version(self) -> str:
        response = await self._get("/api/version")
        return str(response.get("version", "?"))

    async def models(self) -> list[str]:
        """Names of the models the server has (``/api/tags``)."""
        response = await self._get("/api/tags")
        return [str(m.get("name", "")) for m in response.get("models", []) if isinstance(m, dict)]

    async def _get(self, path: str) -> dict[str, Any]:
        try:
            response = await self._client.get(path)
        except httpx.TransportError as exc:
            raise LLMUnavailableError(f"cannot reach {self.base_url}: {exc}") from exc
        check_status(response)
        return _decode(response.text)

    async def aclose(self) -> None:
        await self._client.aclose()


@contextlib.contextmanager
def once_started(parts: list[str], where: str) -> Iterator[None]:
    """Errors after the first piece of a streamed reply are marked ``started``: the
    dispatcher then does not retry them elsewhere (the reply was already under way)."""
    try:
        yield
    except LLMError as exc:
        exc.started = bool(parts)
        raise
    except httpx.TransportError as exc:
        if not parts:
            raise
        error = LLMUnavailableError(f"{where}: the stream broke off ({type(exc).__name__})")
        error.started = True
        raise error from exc


def check_status(response: httpx.Response) -> None:
    """Raise ``LLMResponseError`` (with the status) for anything but 200; the message is
    the body's ``error`` (Ollama: a string; OpenAI-style: ``{"message": ...}``)."""
    if response.status_code == 200:
        return
    try:
        error = json.loads(response.text).get("error", response.text)
        message = str(error.get("message", error) if isinstance(error, dict) else error)
    except (ValueError, AttributeError):
        message = response.text[:200]
    raise LLMResponseError(f"HTTP {response.status_code}: {message}", status=response.status_code)


def _decode(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LLMResponseError(f"not JSON: {text[:120]!r}") from exc
    if not isinstance(data, dict):
        raise LLMResponseError(f"expected a JSON object, got {text[:120]!r}")
    if "error" in data:
        raise LLMResponseError(str(data["error"]))
    return data
