"""The dispatcher: one queue in front of every LLM endpoint.

    dispatcher = Dispatcher([Endpoint("http://gpu1:11434", OllamaBackend(...), slots=2)])
    generation = await dispatcher.generate(request)

- **Priority**: waiting requests are served agent turns first, then summaries, then
  consolidation; first come, first served within a priority.
- **Concurrency**: each endpoint runs at most ``slots`` requests at once (match the
  server's parallel slots); a request goes to the free endpoint with the fewest in
  flight.
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
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from engine.errors import LLMError, LLMResponseError, LLMUnavailableError
from engine.llm.backend import Backend
from engine.llm.metrics import LLMMetrics
from engine.llm.request import Generation, LLMRequest, Priority


@dataclass
class Endpoint:
    name: str
    """What people call it: its URL, or ``fake:`` for the scripted backend."""
    backend: Backend
    slots: int = 1
    metrics: LLMMetrics = field(default_factory=LLMMetrics)


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
    if isinstance(error, LLMResponseError):
        return error.retryable
    return isinstance(error, LLMUnavailableError)


_Waiter = tuple[int, int, "asyncio.Future[Endpoint]"]


class Dispatcher:
    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        retry: RetryPolicy = RetryPolicy(),
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if not endpoints:
            raise ValueError("a dispatcher needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.retry = retry
        self.metrics = LLMMetrics()
        self._rng = rng or random.Random()
        self._sleep = sleep
        self._waiters: list[_Waiter] = []
        self._order = itertools.count()
        self._cursor = 0
        self._calls: set[asyncio.Task[object]] = set()
        self._closed = False

    # -- the one public call ----------------------------------------------------------
    async def generate(self, request: LLMRequest) -> Generation:
        """Run ``request`` on some endpoint, retrying what can be retried."""
        error: LLMError | None = None
        for attempt in range(self.retry.attempts):
            if attempt:
                self.metrics.retries += 1
                await self._sleep(self.retry.delay(attempt - 1, self._rng))
            endpoint = await self._acquire(request)
            try:
                generation = await self._call(endpoint, request)
            except LLMError as exc:
                error = exc
                endpoint.metrics.last_error = self.metrics.last_error = str(exc)
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
        if not self._waiters and (endpoint := self._free_endpoint()) is not None:
            self._take(endpoint)
            return endpoint
        granted: asyncio.Future[Endpoint] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (int(request.priority), next(self._order), granted))
        self.metrics.queued += 1
        try:
            return await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._release(granted.result())  # granted just as we were cancelled
            raise
        finally:
            self.metrics.queued -= 1

    def _free_endpoint(self) -> Endpoint | None:
        """The endpoint with a free slot and the fewest in flight (ties: round robin)."""
        best: Endpoint | None = None
        count = len(self.endpoints)
        for step in range(count):
            endpoint = self.endpoints[(self._cursor + step) % count]
            busy = endpoint.metrics.in_flight
            if busy < endpoint.slots and (best is None or busy < best.metrics.in_flight):
                best = endpoint
        if best is not None:
            self._cursor = (self.endpoints.index(best) + 1) % count
        return best

    def _take(self, endpoint: Endpoint) -> None:
        endpoint.metrics.in_flight += 1
        self.metrics.in_flight += 1

    def _release(self, endpoint: Endpoint) -> None:
        endpoint.metrics.in_flight -= 1
        self.metrics.in_flight -= 1
        while self._waiters and (free := self._free_endpoint()) is not None:
            _, _, granted = heapq.heappop(self._waiters)
            if not granted.done():
                self._take(free)
                granted.set_result(free)

    # -- status and shutdown ----------------------------------------------------------
    def queued_by_priority(self) -> dict[Priority, int]:
        counts = dict.fromkeys(Priority, 0)
        for priority, _, granted in self._waiters:
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
            _, _, granted = heapq.heappop(self._waiters)
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
