"""An Ollama-compatible HTTP server over any source of completions (loopback only).

It speaks the wire formats mudsim's backends read, so the stub server (scripted replies
that can misbehave) and ``mudsim serve-llm`` (the embedded model) share one:

- ``GET /api/version``, ``GET /api/tags``; ``POST /api/generate``, streamed as chunked
  NDJSON (the connection stays alive) or one JSON object;
- Ollama's OpenAI-style ``GET /v1/models`` and ``POST /v1/completions``, as server-sent
  events ending in ``[DONE]`` or one JSON object, with ``usage``.

A source answers a request with a ``Completion`` (pieces of text, then token counts) or
a ``Refusal`` (an HTTP status). A piece iterator that raises ``MidStreamError`` becomes
an ``{"error": ...}`` line after the status was sent, as Ollama does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol, Self


@dataclass
class Completion:
    pieces: Iterator[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    """Read once ``pieces`` is exhausted, so a source may count as it goes."""
    done_reason: str = "stop"


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    retry_after: float | None = None
    """Sent as a ``Retry-After`` header (seconds) when set, as a busy server does."""


class MidStreamError(Exception):
    """Raised by a piece iterator: the answer broke off after it had started."""


class CompletionSource(Protocol):
    version: str

    def models(self) -> list[str]: ...

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        """Answer a generate or completions body; may block (each request has a thread)."""
        ...


def tagged(name: str) -> str:
    """Ollama's reading of a model name: ``gemma3`` is ``gemma3:latest``."""
    return name if ":" in name else f"{name}:latest"


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that hung up on a slow or hanging answer is expected


class OllamaCompatibleServer:
    def __init__(self, source: CompletionSource, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.source = source
        self.connections = 0
        """TCP connections accepted (a client that reuses its connections opens few)."""
        self._count_lock = threading.Lock()
        self._server = _QuietServer((host, port), _handler_for(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _connected(self) -> None:
        with self._count_lock:
            self.connections += 1


def _handler_for(server: OllamaCompatibleServer) -> type[BaseHTTPRequestHandler]:
    source = server.source

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as a Go server does: no 40 ms waits on small writes

        def setup(self) -> None:
            super().setup()
            server._connected()

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            if self.path == "/api/version":
                self._json(200, {"version": source.version})
            elif self.path == "/api/tags":
                models = [{"name": name, "model": name} for name in source.models()]
                self._json(200, {"models": models})
            elif self.path == "/v1/models":
                data = [{"id": name, "object": "model"} for name in source.models()]
                self._json(200, {"object": "list", "data": data})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": "invalid JSON"})
                return
            if self.path not in ("/api/generate", "/v1/completions") or not isinstance(body, dict):
                self._json(404, {"error": "not found"})
                return
            if tagged(str(body.get("model"))) not in {tagged(m) for m in source.models()}:
                self._json(404, {"error": f"model '{body.get('model')}' not found"})
                return
            answer = source.answer(body)
            if isinstance(answer, Refusal):
                headers = (
                    {} if answer.retry_after is None else {"Retry-After": f"{answer.retry_after:g}"}
                )
                self._json(answer.status, {"error": answer.message}, headers)
            elif self.path == "/v1/completions":
                self._completion(body, answer)
            else:
                self._generate(body, answer)

        def _generate(self, body: dict[str, Any], answer: Completion) -> None:
            model = body["model"]
            if not body.get("stream", True):
                try:
                    text = "".join(answer.pieces)
                except MidStreamError as exc:
                    self._json(500, {"error": str(exc)})
                    return
                self._json(200, {"model": model, "response": text, **_final(answer)})
                return
            self._start_chunks("application/x-ndjson")
            try:
                for piece in answer.pieces:
                    self._chunk(_ndjson({"model": model, "response": piece, "done": False}))
            except MidStreamError as exc:
                self._chunk(_ndjson({"error": str(exc)}))
            else:
                self._chunk(_ndjson({"model": model, "response": "", **_final(answer)}))
            self._chunk(b"")

        def _completion(self, body: dict[str, Any], answer: Completion) -> None:
            if not body.get("stream"):
                try:
                    text = "".join(answer.pieces)
                except MidStreamError as exc:
                    self._json(500, {"error": {"message": str(exc)}})
                    return
                choice = {"index": 0, "text": text, "finish_reason": answer.done_reason}
                self._json(200, {"object": "text_completion", "model": body["model"],
                                 "choices": [choice], "usage": _usage(answer)})  # fmt: skip
                return
            self._start_chunks("text/event-stream")
            self._chunk(b": ping\n\n")
            try:
                for piece in answer.pieces:
                    choice = {"index": 0, "text": piece, "finish_reason": None}
                    self._chunk(_event({"object": "text_completion", "choices": [choice]}))
            except MidStreamError as exc:
                self._chunk(_event({"error": {"message": str(exc)}}))
                self._chunk(b"")
                return
            last = {"index": 0, "text": "", "finish_reason": answer.done_reason}
            self._chunk(_event({"object": "text_completion", "choices": [last]}))
            if (body.get("stream_options") or {}).get("include_usage"):
                usage = _usage(answer)
                self._chunk(_event({"object": "text_completion", "choices": [], "usage": usage}))
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _start_chunks(self, content_type: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")  # keeps the connection alive
            self.end_headers()

        def _chunk(self, data: bytes) -> None:
            """One HTTP chunk; an empty one ends the body."""
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _json(
            self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _final(answer: Completion) -> dict[str, Any]:
    return {
        "done": True,
        "done_reason": answer.done_reason,
        "prompt_eval_count": answer.prompt_tokens,
        "eval_count": answer.completion_tokens,
    }


def _usage(answer: Completion) -> dict[str, int]:
    return {
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "total_tokens": answer.prompt_tokens + answer.completion_tokens,
    }


def _ndjson(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode() + b"\n"


def _event(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"
