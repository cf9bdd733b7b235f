"""The dispatcher: one queue in front of every LLM endpoint.

    dispatcher = Dispatcher([Endpoint("http://gpu1:11434", OllamaBackend(...), slots=2)])
    generation = await dispatcher.generate(request)

- **Priority**: waiting requests are served agent turns first, then summaries, then
  consolidation; first come, first served within a priority.
- **A pool of endpoints**: each runs at most ``slots`` requests at once (match the
  server's parallel slots). An agent's requests go to the same endpoint while it has
  a free slot (its prompt prefix is cached there), otherwise to the free endpoint with
  the fewest in flight. An endpoint that refuses connections, times out or answers
  503 is left alone for ``cooloff`` seconds and the request is retried elsewhere at
  once; a reply that failed after it began to stream is not retried.
- **Retries**: connection errors, timeouts, 5xx and 429 are retried with exponential
  backoff and full jitter; other 4xx fail at once. A retry gives its slot back while
  it waits and queues again at its priority.
- **Deadline**: each attempt has a wall-clock limit on top of httpx's read timeout
  (a server that dribbles bytes never trips a read timeout).
- **Shutdown**: ``aclose`` refuses new work, fails what is queued, gives in-flight
  calls a bounded wait, then cancels them.
- **Metrics**: ``LLMMetrics`` per endpoint and for the whole dispatcher.

The prompt factory is called by the backend when the request is actually sent, so a
request that waited in the queue still carries a fresh prompt.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import random
import time
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from engine.errors import LLMError, LLMResponseError, LLMUnavailableError
from engine.llm.backend import Backend
from engine.llm.metrics import LLMMetrics
from engine.llm.request import Generation, LLMRequest, Priority


@dataclass(eq=False)
class Endpoint:
    name: str
    """What people call it: its URL, or ``fake:`` for the scripted backend."""
    backend: Backend
    slots: int = 1
    metrics: LLMMetrics = field(default_factory=LLMMetrics)
    down_until: float = 0.0
    """Clock time until which it is left alone after a connection failure or a 503."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    """Tries in all, the first included."""
    base_delay: float = 0.5
    max_delay: float = 8.0
    deadline: float | None = 300.0
    """Wall-clock seconds one attempt may take; None for no limit."""

    def delay(self, retry: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(max_delay, base_delay * 2**retry)]."""
        return rng.uniform(0.0, min(self.max_delay, self.base_delay * 2**retry))


def is_retryable(error: LLMError) -> bool:
    if error.started:
        return False
    if isinstance(error, LLMResponseError):
        return error.retryable
    return isinstance(error, LLMUnavailableError)


def means_down(error: LLMError) -> bool:
    """Connection failures, timeouts and 503 (busy or loading) make an endpoint rest."""
    if isinstance(error, LLMResponseError):
        return error.status == 503
    return isinstance(error, LLMUnavailableError)


_Waiter = tuple[int, int, "asyncio.Future[Endpoint]", str | None]


class Dispatcher:
    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        retry: RetryPolicy = RetryPolicy(),
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        cooloff: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not endpoints:
            raise ValueError("a dispatcher needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.retry = retry
        self.metrics = LLMMetrics()
        self._rng = rng or random.Random()
        self._sleep = sleep
        self.cooloff = cooloff
        self._clock = clock
        self._waiters: list[_Waiter] = []
        self._order = itertools.count()
        self._cursor = 0
        self._calls: set[asyncio.Task[object]] = set()
        self._closed = False

    # -- the one public call ----------------------------------------------------------
    async def generate(self, request: LLMRequest) -> Generation:
        """Run ``request`` on some endpoint, retrying what can be retried."""
        error: LLMError | None = None
        failover = False
        for attempt in range(self.retry.attempts):
            if attempt:
                self.metrics.retries += 1
                if not failover:
                    await self._sleep(self.retry.delay(attempt - 1, self._rng))
            endpoint = await self._acquire(request)
            try:
                generation = await self._call(endpoint, request)
            except LLMError as exc:
                error = exc
                endpoint.metrics.last_error = self.metrics.last_error = str(exc)
                if means_down(exc):
                    endpoint.down_until = self._clock() + self.cooloff
                failover = any(self._up(e) for e in self.endpoints if e is not endpoint)
                if not is_retryable(exc):
                    break
            else:
                for metrics in (endpoint.metrics, self.metrics):
                    metrics.succeeded(
                        generation.prompt_tokens, generation.completion_tokens, generation.latency
                    )
                return generation
            finally:
                self._release(endpoint)
        assert error is not None
        for metrics in (endpoint.metrics, self.metrics):
            metrics.failed(str(error))
        raise error

    async def _call(self, endpoint: Endpoint, request: LLMRequest) -> Generation:
        task = asyncio.current_task()
        if task is not None:
            self._calls.add(task)
        try:
            async with asyncio.timeout(self.retry.deadline):
                return await endpoint.backend.generate(request)
        except TimeoutError as exc:
            raise LLMUnavailableError(
                f"{endpoint.name} gave no answer within {self.retry.deadline:g} s"
            ) from exc
        finally:
            if task is not None:
                self._calls.discard(task)

    # -- the priority gate ------------------------------------------------------------
    async def _acquire(self, request: LLMRequest) -> Endpoint:
        if self._closed:
            raise LLMUnavailableError("the LLM dispatcher is shutting down")
        if not self._waiters and (endpoint := self._free_endpoint(request.agent)) is not None:
            self._take(endpoint)
            return endpoint
        granted: asyncio.Future[Endpoint] = asyncio.get_running_loop().create_future()
        waiter = (int(request.priority), next(self._order), granted, request.agent)
        heapq.heappush(self._waiters, waiter)
        self.metrics.queued += 1
        try:
            return await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._release(granted.result())  # granted just as we were cancelled
            raise
        finally:
            self.metrics.queued -= 1

    def _up(self, endpoint: Endpoint) -> bool:
        return endpoint.down_until <= self._clock()

    def _free_endpoint(self, agent: str | None = None) -> Endpoint | None:
        """Where a request goes now: the agent's own endpoint if it is up and has a free
        slot, else the up endpoint with a free slot and the fewest in flight (ties: round
        robin). Endpoints resting after a failure are used only when none is up."""
        free = [e for e in self.endpoints if e.metrics.in_flight < e.slots]
        if not free:
            return None
        up = [e for e in free if self._up(e)]
        if not up and any(self._up(e) for e in self.endpoints):
            return None  # an up endpoint is only busy: wait for it
        candidates = up or free
        if agent is not None:
            home = self.endpoints[zlib.crc32(agent.encode()) % len(self.endpoints)]
            if home in candidates:
                return home
        count = len(self.endpoints)
        best: Endpoint | None = None
        for step in range(count):
            endpoint = self.endpoints[(self._cursor + step) % count]
            if endpoint in candidates and (
                best is None or endpoint.metrics.in_flight < best.metrics.in_flight
            ):
                best = endpoint
        assert best is not None
        self._cursor = (self.endpoints.index(best) + 1) % count
        return best

    def _take(self, endpoint: Endpoint) -> None:
        endpoint.metrics.in_flight += 1
        self.metrics.in_flight += 1

    def _release(self, endpoint: Endpoint) -> None:
        endpoint.metrics.in_flight -= 1
        self.metrics.in_flight -= 1
        while self._waiters and (free := self._free_endpoint(self._waiters[0][3])) is not None:
            granted = heapq.heappop(self._waiters)[2]
            if not granted.done():
                self._take(free)
                granted.set_result(free)

    # -- status and shutdown ----------------------------------------------------------
    def queued_by_priority(self) -> dict[Priority, int]:
        counts = dict.fromkeys(Priority, 0)
        for priority, _, granted, _ in self._waiters:
            if not granted.done():
                counts[Priority(priority)] += 1
        return counts

    @property
    def queued(self) -> int:
        return self.metrics.queued

    @property
    def in_flight(self) -> int:
        return self.metrics.in_flight

    async def aclose(self, grace: float = 10.0) -> None:
        """Refuse new work, fail what is queued, wait ``grace`` s for calls, cancel the rest."""
        self._closed = True
        while self._waiters:
            granted = heapq.heappop(self._waiters)[2]
            if not granted.done():
                granted.set_exception(LLMUnavailableError("the LLM dispatcher is shutting down"))
        running = [task for task in self._calls if not task.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)
        for endpoint in self.endpoints:
            await endpoint.backend.aclose()
