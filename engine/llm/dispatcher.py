"""The dispatcher: one queue in front of every LLM endpoint.

    dispatcher = Dispatcher([Endpoint("http://gpu1:11434", OllamaBackend(...), slots=2)])
    generation = await dispatcher.generate(request)

- **Priority with aging**: waiting requests are served agent turns first, then
  summaries, then consolidation; first come, first served within a priority. A waiting
  request ages: once ``bypass_limit`` (default 4) better-priority requests have been
  served while it waited, it goes first (``engine/llm/fair_queue.py``). So a due
  summary starts within 4 turn dispatches however busy the agents keep the slots, and
  when turns leave a slot free it starts at once. A patient request
  (``LLMRequest.patience``: a player's summary) lets that many times more go first; an
  urgent one (``LLMRequest.urgent``: a compaction of a character whose memory is too
  far behind) goes before everything. ``fairness`` records, per priority, the most
  better-priority grants any request waited through. A request that urgent ones went
  before while it waited says, if it is a turn's, how long it waited in the queue in
  all (``Generation.memory_wait``, ``LLMError.memory_wait``): a turn that waited for
  memory (``held_for_memory``'s queued turns). A backend that is itself a dispatcher, or a
  replay's tape, may say it instead (the run's figure, served back).
- **A pool of endpoints**: each runs at most ``slots`` requests at once (match the
  server's parallel slots). An agent's requests go to the same endpoint while it has
  a free slot (its prompt prefix is cached there), otherwise to the free endpoint with
  the fewest in flight.
- **Resting**: an endpoint that refuses connections, times out or answers 503 is left
  alone for ``cooloff`` seconds; one that answers with ``Retry-After: N`` (429 or 5xx,
  seconds form) for N seconds, at most ``RetryPolicy.max_retry_after``. Resting
  endpoints are used only when no endpoint is up. When a rest ends a timer re-runs the
  queue, so nobody waits past it while a slot is free.
- **Retries**: connection errors, timeouts, 5xx and 429 are retried; other 4xx fail at
  once, and so does a reply that failed after it began to stream. A retry goes at once
  to another endpoint if one is up with a free slot; otherwise it first backs off
  (exponential with full jitter, and at least the server's ``Retry-After``, capped),
  and it still prefers another endpoint to the one that failed. A retry gives its slot
  back while it waits and queues again at its priority.
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
import random
import time
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from engine.errors import LLMError, LLMResponseError, LLMUnavailableError
from engine.llm.backend import Backend
from engine.llm.fair_queue import DEFAULT_BYPASS_LIMIT, FairnessStats, FairQueue, Waiting
from engine.llm.metrics import LLMMetrics
from engine.llm.request import Generation, LLMRequest, Priority
from engine.memory.tokens import TokenCounter, counter_of, most_of


@dataclass(eq=False)
class Endpoint:
    name: str
    """What people call it: its URL, or ``fake:`` for the scripted backend."""
    backend: Backend
    slots: int = 1
    metrics: LLMMetrics = field(default_factory=LLMMetrics)
    down_until: float = 0.0
    """Clock time until which it rests: after a connection failure, a timeout, a 503,
    or an answer with ``Retry-After``."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    """Tries in all, the first included."""
    base_delay: float = 0.5
    max_delay: float = 8.0
    deadline: float | None = 300.0
    """Wall-clock seconds one attempt may take; None for no limit."""
    max_retry_after: float = 60.0
    """The longest ``Retry-After`` honoured (a server may ask for an hour)."""

    def delay(self, retry: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(max_delay, base_delay * 2**retry)]."""
        return rng.uniform(0.0, min(self.max_delay, self.base_delay * 2**retry))

    def retry_after(self, error: LLMError | None) -> float | None:
        """The server's ``Retry-After`` with a 429 or 5xx, capped; None when it sent none."""
        if not isinstance(error, LLMResponseError) or not error.retryable:
            return None
        seconds = error.retry_after
        return None if seconds is None else min(seconds, self.max_retry_after)

    def wait(self, retry: int, rng: random.Random, error: LLMError | None) -> float:
        """Before retry number ``retry`` + 1 on a busy pool: the jittered backoff, and at
        least as long as the server asked (capped)."""
        return max(self.delay(retry, rng), self.retry_after(error) or 0.0)


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


@dataclass
class _Queued:
    """What one call (all its attempts) waited in the queue."""

    seconds: float = 0.0
    """On the dispatcher's clock, from each push to its grant."""
    behind_urgent: bool = False
    """Urgent requests went before it while it waited (``FairQueue``'s ``passed_by_urgent``)."""
    counted: bool = True
    """A turn's call: what it waited for urgent compactions is a wait for memory."""

    @property
    def memory_wait(self) -> float:
        """The seconds a turn's call waited for memory: all it queued, when urgent
        requests went before it (rounded as the run record keeps it, so that a replay
        adds up the same figures)."""
        return round(self.seconds, 6) if self.counted and self.behind_urgent else 0.0


@dataclass(eq=False)
class _Ticket:
    """A request waiting for a slot: granted an endpoint through ``granted``."""

    granted: asyncio.Future[Endpoint]
    agent: str | None
    avoid: Endpoint | None
    """The endpoint its last attempt failed on: used only when no other can take it."""


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
        bypass_limit: int | None = DEFAULT_BYPASS_LIMIT,
    ) -> None:
        if not endpoints:
            raise ValueError("a dispatcher needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.retry = retry
        self.metrics = LLMMetrics()
        self.fairness = FairnessStats(dict.fromkeys(Priority, 0), dict.fromkeys(Priority, 0))
        """Per priority: requests granted, and the most better-priority grants one waited
        through (at most ``bypass_limit``)."""
        self._rng = rng or random.Random()
        self._sleep = sleep
        self.cooloff = cooloff
        self._clock = clock
        self._queue = FairQueue[_Ticket](bypass_limit)
        self._wakeups: dict[int, asyncio.TimerHandle] = {}
        """Endpoint index -> the timer that re-runs the queue when its rest ends."""
        self._cursor = 0
        self._calls: set[asyncio.Task[object]] = set()
        self._closed = False

    @property
    def bypass_limit(self) -> int | None:
        return self._queue.bypass_limit

    @property
    def token_counter(self) -> TokenCounter:
        """How the models behind it count tokens: an endpoint's backend's own counter
        (the embedded model's tokenizer), the estimate for one that has none (a server),
        the largest count of them for a pool that mixes both."""
        return most_of(counter_of(endpoint.backend) for endpoint in self.endpoints)

    # -- the one public call ----------------------------------------------------------
    async def generate(self, request: LLMRequest) -> Generation:
        """Run ``request`` on some endpoint, retrying what can be retried. A request that
        ends without an answer, however (failed, refused at shutdown, cancelled), is one
        failed call in ``metrics``, as the run's record counts it."""
        try:
            return await self._generate(request)
        except LLMError as exc:
            self.metrics.failed(str(exc))
            raise
        except asyncio.CancelledError:
            self.metrics.failed("cancelled")
            raise

    async def _generate(self, request: LLMRequest) -> Generation:
        error: LLMError | None = None
        failed: Endpoint | None = None
        queued = _Queued(counted=request.priority == Priority.TURN)
        for attempt in range(self.retry.attempts):
            if attempt:
                self.metrics.retries += 1
                if not self._another_can_take(failed):
                    await self._sleep(self.retry.wait(attempt - 1, self._rng, error))
            endpoint = await self._acquire(request, avoid=failed, queued=queued)
            try:
                generation = await self._call(endpoint, request)
            except LLMError as exc:
                error, failed = exc, endpoint
                self._note_failure(endpoint, exc)
                if not is_retryable(exc):
                    break
            else:
                for metrics in (endpoint.metrics, self.metrics):
                    metrics.succeeded(
                        generation.prompt_tokens, generation.completion_tokens, generation.latency
                    )
                # a backend that is itself a dispatcher (a fork's live LLM behind the
                # tape) has said where the call went and how often it was retried; a
                # tape, what the recorded call waited for memory
                return replace(generation, endpoint=generation.endpoint or endpoint.name,
                               retries=attempt + generation.retries,
                               memory_wait=generation.memory_wait or queued.memory_wait)  # fmt: skip
            finally:
                self._release(endpoint)
        assert error is not None
        endpoint.metrics.failed(str(error))
        if not error.endpoint:  # else a dispatcher behind this one said it (as above)
            error.endpoint, error.retries = endpoint.name, attempt
        error.memory_wait = error.memory_wait or queued.memory_wait
        raise error

    async def _call(self, endpoint: Endpoint, request: LLMRequest) -> Generation:
        task = asyncio.current_task()
        if task is not None:
            self._calls.add(task)
        try:
            if request.on_send is not None:
                await request.on_send()
            async with asyncio.timeout(self.retry.deadline):
                return await endpoint.backend.generate(request)
        except TimeoutError as exc:
            raise LLMUnavailableError(
                f"{endpoint.name} gave no answer within {self.retry.deadline:g} s"
            ) from exc
        finally:
            if task is not None:
                self._calls.discard(task)

    def _note_failure(self, endpoint: Endpoint, error: LLMError) -> None:
        """Record the error; rest the endpoint as long as the server asked, or for the
        cool-off when it is down or busy."""
        endpoint.metrics.last_error = self.metrics.last_error = str(error)
        asked = self.retry.retry_after(error)
        if asked is not None:
            self._rest(endpoint, asked)
        elif means_down(error):
            self._rest(endpoint, self.cooloff)

    def _rest(self, endpoint: Endpoint, seconds: float) -> None:
        until = self._clock() + seconds
        if seconds <= 0 or until <= endpoint.down_until:
            return
        endpoint.down_until = until
        self._wake_at_end_of_rest(self.endpoints.index(endpoint))

    def _wake_at_end_of_rest(self, index: int) -> None:
        """Re-run the queue when endpoint ``index`` is up again (a free slot there may be
        the only one)."""
        if (old := self._wakeups.pop(index, None)) is not None:
            old.cancel()
        remaining = self.endpoints[index].down_until - self._clock()
        loop = asyncio.get_running_loop()
        self._wakeups[index] = loop.call_later(max(remaining, 0.0), self._rest_ended, index)

    def _rest_ended(self, index: int) -> None:
        self._wakeups.pop(index, None)
        if not self._up(self.endpoints[index]):  # the timer fired a hair early
            self._wake_at_end_of_rest(index)
            return
        self._grant()

    def _another_can_take(self, failed: Endpoint | None) -> bool:
        """Whether an endpoint other than ``failed`` is up with a free slot now."""
        return any(
            e is not failed and self._up(e) and e.metrics.in_flight < e.slots
            for e in self.endpoints
        )

    # -- the gate ---------------------------------------------------------------------
    async def _acquire(
        self, request: LLMRequest, avoid: Endpoint | None = None, queued: _Queued | None = None
    ) -> Endpoint:
        """A slot for ``request``: at once if nothing waits and one is free, else when the
        queue grants it; what it waited is added to ``queued``."""
        if self._closed:
            raise LLMUnavailableError("the LLM dispatcher is shutting down")
        if not self._queue and (endpoint := self._free_endpoint(request.agent, avoid)) is not None:
            self.fairness.record(request.priority, 0)
            self._take(endpoint)
            return endpoint
        ticket = _Ticket(asyncio.get_running_loop().create_future(), request.agent, avoid)
        entry = self._queue.push(
            ticket, request.priority, patience=request.patience, urgent=request.urgent
        )
        self.metrics.queued += 1
        since = self._clock()
        try:
            return await ticket.granted
        except asyncio.CancelledError:
            self._queue.remove(entry)
            granted = ticket.granted
            if granted.done() and not granted.cancelled() and granted.exception() is None:
                self._release(granted.result())  # granted just as we were cancelled
            raise
        finally:
            self.metrics.queued -= 1
            if queued is not None:
                queued.seconds += max(0.0, self._clock() - since)
                queued.behind_urgent = queued.behind_urgent or entry.passed_by_urgent > 0

    def _up(self, endpoint: Endpoint) -> bool:
        return endpoint.down_until <= self._clock()

    def _free_endpoint(
        self, agent: str | None = None, avoid: Endpoint | None = None
    ) -> Endpoint | None:
        """Where a request goes now: the agent's own endpoint if it is up and has a free
        slot, else the up endpoint with a free slot and the fewest in flight (ties: round
        robin); ``avoid`` only if no other can take it. Endpoints resting after a failure
        are used only when none is up."""
        free = [e for e in self.endpoints if e.metrics.in_flight < e.slots]
        if not free:
            return None
        up = [e for e in free if self._up(e)]
        if not up and any(self._up(e) for e in self.endpoints):
            return None  # an up endpoint is only busy: wait for it (or for a rest to end)
        candidates = up or free
        if avoid in candidates and len(candidates) > 1:
            candidates = [e for e in candidates if e is not avoid]
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
        self._grant()

    def _grant(self) -> None:
        """Hand free slots to the head of the queue while there are both."""
        while (head := self._queue.peek()) is not None:
            ticket = head.item
            if ticket.granted.done():  # failed by shutdown
                self._queue.remove(head)
                continue
            endpoint = self._free_endpoint(ticket.agent, ticket.avoid)
            if endpoint is None:
                return
            self._grant_to(self._queue.pop(), endpoint)

    def _grant_to(self, entry: Waiting[_Ticket], endpoint: Endpoint) -> None:
        self.fairness.record(entry.priority, entry.bypassed)
        self._take(endpoint)
        entry.item.granted.set_result(endpoint)

    # -- status and shutdown ----------------------------------------------------------
    def queued_by_priority(self) -> dict[Priority, int]:
        counts = dict.fromkeys(Priority, 0)
        for entry in self._queue:
            if not entry.item.granted.done():
                counts[Priority(entry.priority)] += 1
        return counts

    @property
    def queued(self) -> int:
        return self.metrics.queued

    @property
    def in_flight(self) -> int:
        return self.metrics.in_flight

    def adopt(self, other: Dispatcher) -> None:
        """Send what comes from now on to ``other``'s endpoints, with its retries,
        backoff and rests (a fork going live at its branch point: its calls are then
        placed, gated and recorded as a run's are). ``other`` is not used any more; this
        dispatcher closes its endpoints."""
        self.endpoints = list(other.endpoints)
        self.retry, self._sleep, self.cooloff = other.retry, other._sleep, other.cooloff
        self._clock = other._clock

    async def aclose(self, grace: float = 10.0) -> None:
        """Refuse new work, fail what is queued, wait ``grace`` s for calls, cancel the rest."""
        self._closed = True
        for timer in self._wakeups.values():
            timer.cancel()
        self._wakeups.clear()
        for entry in self._queue.clear():
            if not entry.item.granted.done():
                entry.item.granted.set_exception(
                    LLMUnavailableError("the LLM dispatcher is shutting down")
                )
        running = [task for task in self._calls if not task.done()]
        if running:
            _, pending = await asyncio.wait(running, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=1.0)
        for endpoint in self.endpoints:
            await endpoint.backend.aclose()
