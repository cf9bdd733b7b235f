"""What the HTTP backends share: one pooled httpx client per server, the mapping of
transport failures to ``LLMUnavailableError``, status and body checks, and marking
errors that struck after a streamed reply had begun."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from typing import Any

import httpx

from engine.errors import LLMError, LLMResponseError, LLMUnavailableError

DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=120.0, write=30.0, pool=None)


class HttpBackend:
    """Base of the Ollama and OpenAI-compatible backends (one client, kept alive)."""

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

    @contextlib.contextmanager
    def reaching(self) -> Iterator[None]:
        """Timeouts and connection failures become ``LLMUnavailableError``."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise LLMUnavailableError(f"{self.base_url} timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise LLMUnavailableError(f"cannot reach {self.base_url}: {exc}") from exc

    async def get_json(self, path: str) -> dict[str, Any]:
        with self.reaching():
            response = await self._client.get(path)
        check_status(response)
        return decode_object(response.text)

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


def _error_message(error: object) -> str:
    """An ``error`` field: Ollama's is a string, OpenAI-style ones ``{"message": ...}``."""
    return str(error.get("message", error) if isinstance(error, dict) else error)


def check_status(response: httpx.Response) -> None:
    """Raise ``LLMResponseError`` (with the status, and ``Retry-After`` if the server
    sent one) for anything but 200."""
    if response.status_code == 200:
        return
    try:
        message = _error_message(json.loads(response.text).get("error", response.text))
    except (ValueError, AttributeError, RecursionError):
        message = response.text[:200]
    raise LLMResponseError(
        f"HTTP {response.status_code}: {message}",
        status=response.status_code,
        retry_after=retry_after_seconds(response.headers.get("Retry-After")),
    )


def retry_after_seconds(header: str | None) -> float | None:
    """A ``Retry-After`` header in its seconds form (``"3"``, ``"0.5"``); None for none,
    for the HTTP-date form, or for anything that is not a finite number >= 0."""
    if header is None:
        return None
    try:
        seconds = float(header.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def decode_object(text: str) -> dict[str, Any]:
    """One JSON object; an ``error`` in it (a 200 stream can carry one) is raised."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise LLMResponseError(f"not JSON: {text[:120]!r}") from exc
    if not isinstance(data, dict):
        raise LLMResponseError(f"expected a JSON object, got {text[:120]!r}")
    if "error" in data:
        raise LLMResponseError(_error_message(data["error"]))
    return data
