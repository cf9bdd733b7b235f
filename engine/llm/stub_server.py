"""A loopback Ollama-compatible stub server, shipped for tests, demos and benchmarks.

    with StubOllama(replies=["look", "say Hi"], models=["gemma3:4b"]) as server:
        backend = OllamaBackend(server.url)

It serves every route of ``OllamaCompatibleServer`` (generate, chat, show, ps, embed
and the OpenAI-style ``/v1`` ones): chats through a fixed template (``<|role|>`` lines,
then ``<|assistant|>``), embeddings as a hashed bag of words (deterministic, unit
length, ``EMBED_DIMENSIONS`` long), and ``/api/show`` with the parameter count given per
model in ``parameters`` (8B for the rest). It records every generate or chat body
(chats with their rendered ``prompt``), and can misbehave on purpose:
``fail_next(status, times)`` (with a ``Retry-After`` header while ``retry_after`` is
set), ``hang_next(times)`` (never answer, until stopped),
``delay`` seconds before answering (plus a random part of ``jitter``; knowledge passes
``knowledge_delay`` more, summaries ``summary_delay`` and a random part of
``summary_jitter`` more), every summary answered with HTTP ``summary_status`` while it
is set, ``error_mid_stream``, and on a fixed schedule
(``FaultSchedule``: HTTP 500 every n-th call, a hang every m-th, garbage every k-th),
which the fault soak (``scripts/soak.py``) uses. With ``summary`` set, prompts ending
in the summarizer's cue (``SUMMARY:``) get that text instead of the next scripted reply
(``RELATED``: one about their memories);
knowledge-pass prompts get the ``knowledge`` script and handbook prompts the
``handbook`` one (by default ``[]`` and an empty reply).
It listens on 127.0.0.1 only, on a free port, in a background thread.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engine.llm.embedding import bag_of_words
from engine.llm.fake import fake_summary
from engine.llm.model_facts import parse_parameter_size
from engine.llm.ollama_server import (
    Completion,
    Embeddings,
    MidStreamError,
    OllamaCompatibleServer,
    Refusal,
)
from engine.llm.ollama_wire import ModelInfo, normalised
from engine.memory.handbook_prompts import CUE as HANDBOOK_CUE
from engine.memory.knowledge_prompts import CONSOLIDATION_CUE, EXTRACTION_CUE
from engine.memory.summary_prompts import CHUNK_CUE, MERGE_CUE

Fault = Literal["hang", "fail", "garbage"]

STUB_PARAMETERS = 8_000_000_000
"""What ``/api/show`` reports for a model ``parameters`` does not name: a typical model."""
STUB_CONTEXT = 8192
EMBED_DIMENSIONS = 64
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}<|assistant|>\n"
)

RELATED = "<related>"
"""As ``summary``: each summary names the words its memories use most
(``engine.llm.fake.fake_summary``), so that the quality gate takes it as about them."""

GARBAGE: tuple[tuple[str, str], ...] = (
    ("", "stop"),
    ('{"command": "lo', "stop"),
    ("I'm sorry, but as an AI language model I cannot help with that.", "stop"),
    ("Summarize these memories in first person (I, me, my), in 2-4 sentences.", "stop"),
    ("It rained. It rained. It rained. It rained.", "stop"),
    ("I walked into the hall and then I saw that the", "length"),
    ("\x00\x1b[2J ???", "stop"),
)
"""What a garbage answer is, in turn (text, done_reason): empty, cut-off JSON, a
refusal, an echo of the instructions, a loop, a reply cut by the token limit, control
characters."""


@dataclass(frozen=True)
class FaultSchedule:
    """Deterministic misbehaviour by call number (the n-th generate call, from 1): a
    hang every ``hang_every`` calls (no answer for ``hang_seconds``, then 503), else HTTP
    500 every ``fail_every``, else garbage every ``garbage_every``; 0 turns one off."""

    fail_every: int = 0
    hang_every: int = 0
    garbage_every: int = 0
    hang_seconds: float = 120.0

    def fault_for(self, call: int) -> Fault | None:
        order: tuple[tuple[int, Fault], ...] = (
            (self.hang_every, "hang"),
            (self.fail_every, "fail"),
            (self.garbage_every, "garbage"),
        )
        for every, fault in order:
            if every > 0 and call % every == 0:
                return fault
        return None


def is_summary_prompt(body: dict[str, Any]) -> bool:
    """Whether a generate body is the summarizer's (its prompt ends with a summary cue)."""
    prompt = str(body.get("prompt", "")).rstrip()
    return prompt.endswith((CHUNK_CUE, MERGE_CUE))


def is_knowledge_prompt(body: dict[str, Any]) -> bool:
    """Whether a generate body is a knowledge pass's (extraction or consolidation)."""
    prompt = str(body.get("prompt", "")).rstrip()
    return prompt.endswith((EXTRACTION_CUE, CONSOLIDATION_CUE))


def is_handbook_prompt(body: dict[str, Any]) -> bool:
    """Whether a generate body asks for an agent's handbook."""
    return str(body.get("prompt", "")).rstrip().endswith(HANDBOOK_CUE)


class StubOllama(OllamaCompatibleServer):
    version = "0.0.0-stub"

    def __init__(self, replies: list[str] | None = None, *, models: list[str] | None = None,
                 delay: float = 0.0, port: int = 0, faults: FaultSchedule | None = None,
                 summary: str | None = None, record: bool = True,
                 parameters: Mapping[str, int] | None = None,
                 knowledge: list[str] | None = None,
                 handbook: list[str] | None = None, jitter: float = 0.0,
                 seed: int | None = None) -> None:  # fmt: skip
        self.jitter = jitter
        """Up to this many seconds more before each answer, at random (``seed``): calls
        sent together come back in no particular order."""
        self._rng = random.Random(seed)
        self.parameters = dict(parameters or {})
        """Parameter count per model, as ``/api/show`` reports it (others: 8B)."""
        self.replies = replies or ["look"]
        self.model_names = models if models is not None else ["gemma3:4b"]
        self.delay = delay
        self.error_mid_stream = False
        self.retry_after: float | None = None
        """Seconds sent as ``Retry-After`` with every injected failure, while set."""
        self.faults = faults or FaultSchedule()
        self.summary = summary
        """The answer to every summarizer prompt (None: the script answers them too)."""
        self.summary_delay = 0.0
        """Seconds more before answering a summarizer prompt, a chunk's or a merge's (a
        slow summarizer: a crowd's compactions fall behind; cut short when the server
        stops)."""
        self.summary_jitter = 0.0
        """Up to this many seconds more before a summarizer prompt's answer, at random
        (``seed``): a summarizer that takes 0.5-2 s is ``summary_delay`` 0.5 and
        ``summary_jitter`` 1.5."""
        self.first_summary_at: float | None = None
        """When (``time.monotonic``) the first summarizer prompt arrived."""
        self.summary_status = 0
        """When set, every summarizer prompt is answered with this HTTP status (a
        summarizer that fails while turns go on)."""
        self.knowledge_delay = 0.0
        """Seconds more before answering a knowledge-pass prompt (a slow model's passes;
        cut short when the server stops)."""
        self.knowledge = list(knowledge or [])
        """Answers to knowledge-pass prompts, in order, sent as they are; when they run
        out (or none were given), ``[]``: nothing learned."""
        self.handbook = list(handbook or [])
        """Answers to handbook prompts, in order; when they run out, an empty reply (the
        rules then write the handbook)."""
        self.record = record
        self.requests: list[dict[str, Any]] = []
        """Every generate, completion or chat body (while ``record``; a long soak turns it
        off)."""
        self.calls = 0
        """Generate calls answered or refused so far."""
        self.injected: Counter[str] = Counter()
        """Scheduled faults so far, by kind, and by ``kind:summary`` for summarizer calls."""
        self._failures: list[int | None] = []
        self._released = threading.Event()
        self._next = 0
        self._garbage = 0
        self._lock = threading.Lock()
        super().__init__(self, port=port)

    def models(self) -> list[str]:
        return self.model_names

    def info(self, model: str) -> ModelInfo:
        count = self.parameters.get(model, STUB_PARAMETERS)
        return ModelInfo(count, STUB_CONTEXT, family="stub", quantization="Q4_K_M",
                         template=CHAT_TEMPLATE, size=count // 2,
                         embedding_length=EMBED_DIMENSIONS,
                         digest=hashlib.sha256(model.encode("utf-8")).hexdigest())  # fmt: skip

    def chat_prompt(self, model: str, messages: list[dict[str, str]]) -> str:
        turns = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in messages)
        return turns + "<|assistant|>\n"

    def embed(self, model: str, texts: list[str], *, truncate: bool) -> Embeddings | Refusal:
        vectors = [fake_embedding(text) for text in texts]
        return Embeddings(vectors, prompt_tokens=sum(len(t) // 4 for t in texts))

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
        summarizing = self.summary is not None and is_summary_prompt(body)
        knowing = is_knowledge_prompt(body)
        handbook = is_handbook_prompt(body)
        done_reason = "stop"
        with self._lock:
            if self.record:
                self.requests.append(body)
            if self.first_summary_at is None and is_summary_prompt(body):
                self.first_summary_at = time.monotonic()
            self.calls += 1
            failure = self._failures.pop(0) if self._failures else 0
            scheduled = self.faults.fault_for(self.calls) if failure == 0 else None
            if scheduled is not None:
                self.injected[scheduled] += 1
                if is_summary_prompt(body):
                    self.injected[f"{scheduled}:summary"] += 1
            if scheduled == "hang":
                failure = None
            elif scheduled == "fail":
                failure = 500
            if scheduled == "garbage":
                reply, done_reason = GARBAGE[self._garbage % len(GARBAGE)]
                self._garbage += 1
            elif summarizing:
                prompt = str(body.get("prompt", ""))
                reply = fake_summary(prompt) if self.summary == RELATED else str(self.summary)
            elif knowing:
                reply = self.knowledge.pop(0) if self.knowledge and not failure else "[]"
            elif handbook:
                reply = self.handbook.pop(0) if self.handbook and not failure else ""
            else:
                reply = self.replies[self._next % len(self.replies)]
                if not failure:
                    self._next += 1
        if failure is None:
            self._released.wait(timeout=self.faults.hang_seconds if scheduled else 120)
        if self.jitter:
            with self._lock:
                extra = self._rng.uniform(0, self.jitter)
            time.sleep(extra)
        if self.delay:
            time.sleep(self.delay)
        if knowing and self.knowledge_delay:
            self._released.wait(timeout=self.knowledge_delay)
        if (self.summary_delay or self.summary_jitter) and is_summary_prompt(body):
            with self._lock:
                extra = self._rng.uniform(0, self.summary_jitter)
            self._released.wait(timeout=self.summary_delay + extra)
        if self.summary_status and is_summary_prompt(body) and failure is not None:
            failure = self.summary_status
        if failure is None:
            return Refusal(503, "server stopped")
        if failure:
            return Refusal(failure, f"injected failure {failure}", self.retry_after)
        if body.get("format") and scheduled != "garbage" and not (knowing or handbook):
            reply = json.dumps({"command": reply})
        return Completion(
            self._pieces(reply),
            prompt_tokens=len(str(body.get("prompt", ""))) // 4,
            completion_tokens=max(1, len(reply) // 4),
            done_reason=done_reason,
        )

    def _pieces(self, reply: str) -> Iterator[str]:
        for index, word in enumerate(reply.split(" ")):
            yield word if index == 0 else " " + word
            if self.error_mid_stream:
                raise MidStreamError("injected error mid-stream")


def fake_embedding(text: str) -> list[float]:
    """A hashed bag of words, normalised (``engine.llm.embedding``): texts that share words
    point the same way."""
    return normalised(bag_of_words(text, EMBED_DIMENSIONS))


def _size(text: str) -> int:
    import argparse

    count = parse_parameter_size(text)
    if count is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 135M or 8B")
    return count


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
    parser.add_argument("--summary", help="the answer to every summarizer prompt")
    parser.add_argument("--parameters", metavar="SIZE", type=_size,
                        help="the parameter count /api/show reports (e.g. 135M; default 8B)")  # fmt: skip
    parser.add_argument("--fail-every", type=int, default=0, metavar="N",
                        help="answer HTTP 500 to every N-th generate call")  # fmt: skip
    parser.add_argument("--hang-every", type=int, default=0, metavar="N",
                        help="leave every N-th generate call unanswered")  # fmt: skip
    parser.add_argument("--hang-seconds", type=float, default=120.0, metavar="S",
                        help="how long a scheduled hang lasts (then 503)")  # fmt: skip
    parser.add_argument("--garbage-every", type=int, default=0, metavar="N",
                        help="answer garbage to every N-th generate call")  # fmt: skip
    args = parser.parse_args(argv)
    faults = FaultSchedule(args.fail_every, args.hang_every, args.garbage_every, args.hang_seconds)
    names = args.model or ["gemma3:4b"]
    sizes = dict.fromkeys(names, args.parameters) if args.parameters else None
    stub = StubOllama(args.reply, models=names, delay=args.delay, port=args.port,
                      faults=faults, summary=args.summary, parameters=sizes).start()  # fmt: skip
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
