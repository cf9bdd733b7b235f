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
from collections.abc import Iterator
from typing import Any

from engine.llm.ollama_server import Completion, MidStreamError, OllamaCompatibleServer, Refusal


class StubOllama(OllamaCompatibleServer):
    version = "0.0.0-stub"

    def __init__(self, replies: list[str] | None = None, *, models: list[str] | None = None,
                 delay: float = 0.0, port: int = 0) -> None:  # fmt: skip
        self.replies = replies or ["look"]
        self.model_names = models if models is not None else ["gemma3:4b"]
        self.delay = delay
        self.error_mid_stream = False
        self.requests: list[dict[str, Any]] = []
        self._failures: list[int | None] = []
        self._released = threading.Event()
        self._next = 0
        self._lock = threading.Lock()
        super().__init__(self, port=port)

    def models(self) -> list[str]:
        return self.model_names

    def fail_next(self, status: int, times: int = 1) -> None:
        """Answer the next ``times`` generate calls with HTTP ``status``."""
        with self._lock:
            self._failures.extend([status] * times)

    def hang_next(self, times: int = 1) -> None:
        """Leave the next ``times`` generate calls unanswered until the server stops."""
        with self._lock:
            self._failures.extend([None] * times)

    def stop(self) -> None:
        self._released.set()
        super().stop()

    def answer(self, body: dict[str, Any]) -> Completion | Refusal:
        """The next scripted reply (as ``{"command": ...}`` when a ``format`` is asked
        for); blocks here for a hang."""
        with self._lock:
            self.requests.append(body)
            failure = self._failures.pop(0) if self._failures else 0
            reply = self.replies[self._next % len(self.replies)]
            if not failure:
                self._next += 1
        if failure is None:
            self._released.wait(timeout=120)
        if self.delay:
            time.sleep(self.delay)
        if failure is None:
            return Refusal(503, "server stopped")
        if failure:
            return Refusal(failure, f"injected failure {failure}")
        if body.get("format"):
            reply = json.dumps({"command": reply})
        return Completion(
            self._pieces(reply),
            prompt_tokens=len(str(body.get("prompt", ""))) // 4,
            completion_tokens=max(1, len(reply) // 4),
        )

    def _pieces(self, reply: str) -> Iterator[str]:
        for index, word in enumerate(reply.split(" ")):
            yield word if index == 0 else " " + word
            if self.error_mid_stream:
                raise MidStreamError("injected error mid-stream")


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
