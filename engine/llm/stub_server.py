"""A loopback Ollama-compatible stub server, shipped for tests, demos and benchmarks.

    with StubOllama(replies=["look", "say Hi"], models=["gemma3:4b"]) as server:
        backend = OllamaBackend(server.url)

It serves ``GET /api/version``, ``GET /api/tags`` and ``POST /api/generate`` (streamed
as NDJSON or whole), and Ollama's OpenAI-style ``GET /v1/models`` and
``POST /v1/completions`` (server-sent events or whole), records every request body, and can misbehave on purpose:
``fail_next(status, times)``, ``hang_next(times)`` (never answer, until stopped),
``delay`` seconds before answering, ``error_mid_stream``.
It listens on 127.0.0.1 only, on a free port, in a background thread.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client that hung up on a slow or hanging answer is expected


class StubOllama:
    def __init__(self, replies: list[str] | None = None, *, models: list[str] | None = None,
                 delay: float = 0.0, port: int = 0) -> None:  # fmt: skip
        self.replies = replies or ["look"]
        self.models = models if models is not None else ["gemma3:4b"]
        self.delay = delay
        self.error_mid_stream = False
        self.requests: list[dict[str, Any]] = []
        self.connections = 0
        """TCP connections accepted (a client that reuses its connections opens few)."""
        self._failures: list[int | None] = []
        self._released = threading.Event()
        self._next = 0
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def fail_next(self, status: int, times: int = 1) -> None:
        """Answer the next ``times`` generate calls with HTTP ``status``."""
        with self._lock:
            self._failures.extend([status] * times)

    def hang_next(self, times: int = 1) -> None:
        """Leave the next ``times`` generate calls unanswered until the server stops."""
        with self._lock:
            self._failures.extend([None] * times)

    def start(self) -> StubOllama:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StubOllama:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _take(self, body: dict[str, Any]) -> tuple[int | None, str]:
        """(status to fail with, or None; the reply). Blocks here for a hang."""
        with self._lock:
            self.requests.append(body)
            failure = self._failures.pop(0) if self._failures else 0
        if failure is None:
            self._released.wait(timeout=120)
            return 503, ""
        if failure:
            return failure, ""
        with self._lock:
            reply = self.replies[self._next % len(self.replies)]
            self._next += 1
            return None, reply


def _handler_for(stub: StubOllama) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # as a Go server does: no 40 ms waits on small writes

        def setup(self) -> None:
            super().setup()
            with stub._lock:
                stub.connections += 1

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            if self.path == "/api/version":
                self._json(200, {"version": "0.0.0-stub"})
            elif self.path == "/api/tags":
                self._json(200, {"models": [{"name": name, "model": name} for name in stub.models]})
            elif self.path == "/v1/models":
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": name, "object": "model"} for name in stub.models],
                    },
                )
            else:
                self._json(404, {"error": "not found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": "invalid JSON"})
                return
            if self.path not in ("/api/generate", "/v1/completions"):
                self._json(404, {"error": "not found"})
                return
            if _tagged(str(body.get("model"))) not in {_tagged(m) for m in stub.models}:
                self._json(404, {"error": f"model '{body.get('model')}' not found"})
                return
            status, reply = stub._take(body)
            if stub.delay:
                time.sleep(stub.delay)
            if status is not None:
                self._json(status, {"error": f"injected failure {status}"})
                return
            if self.path == "/v1/completions":
                self._completion(body, reply)
                return
            final = {"done": True, "done_reason": "stop", "prompt_eval_count": len(str(body.get("prompt", ""))) // 4,
                     "eval_count": max(1, len(reply) // 4), "total_duration": int(stub.delay * 1e9)}  # fmt: skip
            if not body.get("stream", True):
                self._json(200, {"model": body["model"], "response": reply, **final})
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")  # keeps the connection alive
            self.end_headers()
            words = reply.split(" ")
            for index, word in enumerate(words):
                piece = word if index == 0 else " " + word
                self._line({"model": body["model"], "response": piece, "done": False})
                if stub.error_mid_stream:
                    self._line({"error": "injected error mid-stream"})
                    self._end_chunks()
                    return
            self._line({"model": body["model"], "response": "", **final})
            self._end_chunks()

        def _completion(self, body: dict[str, Any], reply: str) -> None:
            """OpenAI-style: one JSON object, or server-sent events ending in [DONE]."""
            usage = {"prompt_tokens": len(str(body.get("prompt", ""))) // 4,
                     "completion_tokens": max(1, len(reply) // 4)}  # fmt: skip
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            choice = {"index": 0, "text": reply, "finish_reason": "stop"}
            if not body.get("stream"):
                self._json(200, {"object": "text_completion", "model": body["model"],
                                 "choices": [choice], "usage": usage})  # fmt: skip
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self._chunk(b": ping\n\n")
            for index, word in enumerate(reply.split(" ")):
                piece = {
                    "index": 0,
                    "text": word if index == 0 else " " + word,
                    "finish_reason": None,
                }
                self._event({"object": "text_completion", "choices": [piece]})
                if stub.error_mid_stream:
                    self._event({"error": {"message": "injected error mid-stream"}})
                    self._end_chunks()
                    return
            self._event({"object": "text_completion", "choices": [{**choice, "text": ""}]})
            if (body.get("stream_options") or {}).get("include_usage"):
                self._event({"object": "text_completion", "choices": [], "usage": usage})
            self._chunk(b"data: [DONE]\n\n")
            self._end_chunks()

        def _event(self, data: dict[str, Any]) -> None:
            self._chunk(b"data: " + json.dumps(data).encode() + b"\n\n")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _line(self, data: dict[str, Any]) -> None:
            """One NDJSON line as one HTTP chunk."""
            line = json.dumps(data).encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.flush()

        def _end_chunks(self) -> None:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _json(self, status: int, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def _tagged(name: str) -> str:
    """Ollama's reading of a model name: ``gemma3`` is ``gemma3:latest``."""
    return name if ":" in name else f"{name}:latest"


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.llm.stub_server``: serve the stub until Ctrl-C (demos, benchmarks)."""
    import argparse

    parser = argparse.ArgumentParser(description="A loopback Ollama-compatible stub server.")
    parser.add_argument("--reply", action="append", help="a reply (repeat the flag for more)")
    parser.add_argument("--model", action="append", help="a model it has (default gemma3:4b)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)"
    )
    args = parser.parse_args(argv)
    stub = StubOllama(args.reply, models=args.model, delay=args.delay, port=args.port).start()
    print(stub.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        stub.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
