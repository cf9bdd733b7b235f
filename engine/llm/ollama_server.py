"""An Ollama-compatible HTTP server over any source of completions (loopback only).

It speaks the wire formats mudsim's backends and the official ``ollama`` and ``openai``
clients read, so the stub server (scripted replies that can misbehave) and ``mudsim
serve-llm`` (the embedded model) share one:

- ``GET /api/version``, ``/api/tags``, ``/api/ps``; ``POST /api/show`` (parameter
  count, context length, family, quantization, chat template) and ``/api/embed``;
- ``POST /api/generate`` and ``/api/chat`` (messages rendered through the model's chat
  template, then completed), streamed as chunked NDJSON (the connection stays alive)
  or one JSON object; ``format`` (``"json"`` or a JSON schema) goes to the source;
- Ollama's OpenAI-style ``GET /v1/models``, ``POST /v1/completions`` and
  ``/v1/chat/completions``, as server-sent events ending in ``[DONE]`` or one JSON
  object, with ``usage``.

A source answers a request with a ``Completion`` (pieces of text, then token counts) or
a ``Refusal`` (an HTTP status). A piece iterator that raises ``MidStreamError`` becomes
an ``{"error": ...}`` line after the status was sent, as Ollama does. A body that is
not JSON, or that the server cannot read, is 400; an unknown model is 404 (Ollama's
``{"error": "model 'x' not found"}``; on ``/v1`` OpenAI's ``{"error": {"message"}}``).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Protocol, Self

from engine.llm import ollama_wire as wire
from engine.llm.ollama_wire import ModelInfo, WireError


@dataclass
class Completion:
    pieces: Iterator[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    """Read once ``pieces`` is exhausted, so a source may count as it goes."""
    done_reason: str = "stop"
    cached_tokens: int = 0
    """Prompt tokens not evaluated again (a prefix cache's); set before the first piece."""

    def final(self) -> dict[str, Any]:
        """The fields of Ollama's last (``done``) object: ``prompt_eval_count`` counts the
        prompt tokens evaluated, as Ollama's does (not those its cache held)."""
        evaluated = self.prompt_tokens - self.cached_tokens
        return {"done": True, "done_reason": self.done_reason,
                "prompt_eval_count": evaluated, "eval_count": self.completion_tokens}  # fmt: skip

    def usage(self) -> dict[str, Any]:
        """OpenAI's ``usage`` (cached prompt tokens in ``prompt_tokens_details``)."""
        total = self.prompt_tokens + self.completion_tokens
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": total,
                "prompt_tokens_details": {"cached_tokens": self.cached_tokens}}  # fmt: skip


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str
    retry_after: float | None = None
    """Sent as a ``Retry-After`` header (seconds) when set, as a busy server does."""


@dataclass(frozen=True)
class Embeddings:
    vectors: list[list[float]]
    prompt_tokens: int = 0


class MidStreamError(Exception):
    """Raised by a piece iterator: the answer broke off after it had started."""


class CompletionSource(Protocol):
    version: str

    def models(self) -> list[str]: ...

    def info(self, model: str) -> ModelInfo:
        """What ``/api/show`` says of one of ``models()``."""
        ...

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        """Answer a generate or completions body (a chat's carries its rendered
        ``prompt``); may block (each request has a thread)."""
        ...

    def chat_prompt(self, model: str, messages: list[dict[str, str]]) -> str:
        """``messages`` rendered through the model's chat template, ready to complete;
        ``ValueError`` for messages the template refuses."""
        ...

    def embed(self, model: str, texts: list[str], *, truncate: bool) -> Embeddings | Refusal:
        """One vector per text (``truncate``: cut a text longer than the model takes)."""
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
        self.hits: Counter[str] = Counter()
        """Requests received, by path."""
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

    def _count(self, path: str | None = None) -> None:
        """A connection accepted (no path), or a request for ``path``."""
        with self._count_lock:
            if path is None:
                self.connections += 1
            else:
                self.hits[path] += 1


Route = Callable[[str, dict[str, Any]], None]
"""A POST route: (the model, as the source names it; the body)."""


def _handler_for(server: OllamaCompatibleServer) -> type[BaseHTTPRequestHandler]:
    source = server.source

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as a Go server does: no 40 ms waits on small writes

        def setup(self) -> None:
            super().setup()
            server._count()

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            server._count(self.path)
            names = source.models()
            if self.path == "/api/version":
                self._json(200, {"version": source.version})
            elif self.path == "/api/tags":
                self._json(200, {"models": [wire.tags_entry(n, source.info(n)) for n in names]})
            elif self.path == "/api/ps":
                self._json(200, {"models": [wire.ps_entry(n, source.info(n)) for n in names]})
            elif self.path == "/v1/models":
                data = [{"id": n, "object": "model", "created": 0, "owned_by": "mudsim"}
                        for n in names]  # fmt: skip
                self._json(200, {"object": "list", "data": data})
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:
            routes: dict[str, Route] = {
                "/api/generate": self._generate, "/api/chat": self._chat,
                "/api/show": self._show, "/api/embed": self._embed,
                "/v1/completions": self._completions,
                "/v1/chat/completions": self._chat_completions,
            }  # fmt: skip
            server._count(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length)
            route = routes.get(self.path)
            if route is None:
                self._json(404, {"error": "not found"})
                return
            try:
                body = json.loads(payload or b"{}")
            except ValueError:
                self._error(400, "the body is not valid JSON")
                return
            if not isinstance(body, dict):
                self._error(400, "the body must be a JSON object")
                return
            wanted = body.get("model") or body.get("name")  # /api/show's older field
            if not isinstance(wanted, str) or not wanted:
                self._error(400, "model is required")
                return
            model = {tagged(m): m for m in source.models()}.get(tagged(wanted))
            if model is None:
                self._error(404, f"model '{wanted}' not found")
                return
            try:
                route(model, {**body, "model": wanted})  # answers name the model as asked
            except WireError as exc:
                self._error(400, str(exc))

        def _generate(self, model: str, body: dict[str, Any]) -> None:
            answer = source.answer(body)
            echo = body["model"]

            def piece(text: str) -> dict[str, Any]:
                return {"model": echo, "created_at": wire.now(), "response": text, "done": False}

            def final(text: str, done: Completion) -> dict[str, Any]:
                return {**piece(text), **done.final()}

            self._ndjson_reply(answer, body.get("stream", True), piece, final)

        def _chat(self, model: str, body: dict[str, Any]) -> None:
            echo = body["model"]

            def piece(text: str) -> dict[str, Any]:
                message = {"role": "assistant", "content": text}
                return {"model": echo, "created_at": wire.now(), "message": message, "done": False}

            messages = wire.chat_messages(body.get("messages"))
            if not messages:  # as Ollama: no messages only loads the model
                self._json(200, {**piece(""), "done": True, "done_reason": "load"})
                return
            answer = self._chat_answer(model, body, messages)

            def final(text: str, done: Completion) -> dict[str, Any]:
                return {**piece(text), **done.final()}

            self._ndjson_reply(answer, body.get("stream", True), piece, final)

        def _chat_answer(
            self, model: str, body: dict[str, Any], messages: list[dict[str, str]]
        ) -> Completion | Refusal:
            try:
                prompt = source.chat_prompt(model, messages)
            except ValueError as exc:
                raise WireError(f"the chat template refused the messages: {exc}") from exc
            return source.answer({**body, "prompt": prompt, "raw": True})

        def _show(self, model: str, body: dict[str, Any]) -> None:
            self._json(200, wire.show_payload(model, source.info(model)))

        def _embed(self, model: str, body: dict[str, Any]) -> None:
            texts = wire.embed_inputs(body.get("input"))
            vectors = Embeddings([])
            if texts:
                answer = source.embed(model, texts, truncate=body.get("truncate") is not False)
                if isinstance(answer, Refusal):
                    self._refuse(answer)
                    return
                vectors = answer
            self._json(200, {"model": body["model"], "prompt_eval_count": vectors.prompt_tokens,
                             "embeddings": wire.shortened(vectors.vectors, body.get("dimensions"))})  # fmt: skip

        def _completions(self, model: str, body: dict[str, Any]) -> None:
            answer = source.answer(body)
            kind = "text_completion"
            self._sse_reply(body, answer, kind, kind, wire.text_choice, wire.text_delta)

        def _chat_completions(self, model: str, body: dict[str, Any]) -> None:
            body = wire.openai_chat_body(body)
            messages = wire.chat_messages(body.get("messages"))
            if not messages:
                raise WireError("messages must not be empty")
            answer = self._chat_answer(model, body, messages)
            kinds = ("chat.completion", "chat.completion.chunk")
            self._sse_reply(body, answer, *kinds, wire.chat_choice, wire.chat_delta)

        def _ndjson_reply(
            self,
            answer: Completion | Refusal,
            stream: object,
            piece: Callable[[str], dict[str, Any]],
            final: Callable[[str, Completion], dict[str, Any]],
        ) -> None:
            """An Ollama answer: NDJSON pieces then the final object, or one object."""
            if isinstance(answer, Refusal):
                self._refuse(answer)
                return
            if not stream:
                try:
                    text = "".join(answer.pieces)
                except MidStreamError as exc:
                    self._json(500, {"error": str(exc)})
                    return
                self._json(200, final(text, answer))
                return
            self._start_chunks("application/x-ndjson")
            try:
                for text in answer.pieces:
                    self._chunk(wire.ndjson(piece(text)))
            except MidStreamError as exc:
                self._chunk(wire.ndjson({"error": str(exc)}))
            else:
                self._chunk(wire.ndjson(final("", answer)))
            self._chunk(b"")

        def _sse_reply(
            self,
            body: dict[str, Any],
            answer: Completion | Refusal,
            kind: str,
            chunk_kind: str,
            whole: Callable[[str, str | None], dict[str, Any]],
            delta: Callable[[str, bool], dict[str, Any]],
        ) -> None:
            """An OpenAI answer: server-sent chunks ending in ``[DONE]``, or one object."""
            if isinstance(answer, Refusal):
                self._refuse(answer)
                return
            model = str(body["model"])
            if not body.get("stream"):
                try:
                    text = "".join(answer.pieces)
                except MidStreamError as exc:
                    self._json(500, wire.openai_error(str(exc), 500))
                    return
                envelope = wire.openai_envelope(kind, model)
                reply = {**envelope, **whole(text, answer.done_reason), "usage": answer.usage()}
                self._json(200, reply)
                return
            envelope = wire.openai_envelope(chunk_kind, model)  # one id for every chunk
            self._start_chunks("text/event-stream")
            self._chunk(b": ping\n\n")
            try:
                for number, text in enumerate(answer.pieces):
                    self._chunk(wire.event({**envelope, **delta(text, number == 0)}))
            except MidStreamError as exc:
                self._chunk(wire.event(wire.openai_error(str(exc), 500)))
                self._chunk(b"")
                return
            last = delta("", False)
            last["choices"][0]["finish_reason"] = answer.done_reason
            self._chunk(wire.event({**envelope, **last}))
            if (body.get("stream_options") or {}).get("include_usage"):
                self._chunk(wire.event({**envelope, "choices": [], "usage": answer.usage()}))
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
            """Ollama's ``{"error": "..."}``; OpenAI's shape on the ``/v1`` routes."""
            v1 = self.path.startswith("/v1/")
            self._json(status, wire.openai_error(message, status) if v1 else {"error": message},
                       headers)  # fmt: skip

        def _refuse(self, refusal: Refusal) -> None:
            retry = refusal.retry_after
            headers = {} if retry is None else {"Retry-After": f"{retry:g}"}
            self._error(refusal.status, refusal.message, headers)

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
