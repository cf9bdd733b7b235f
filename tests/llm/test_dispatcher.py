"""The dispatcher against real loopback stub servers: retries, timeouts, priorities,
per-endpoint limits, shutdown and metrics."""

from __future__ import annotations

import asyncio
import random
import socket
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from engine.errors import LLMResponseError, LLMUnavailableError
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.http import check_status
from engine.llm.ollama import OllamaBackend
from engine.llm.request import Generation, LLMRequest, Priority
from engine.llm.stub_server import StubOllama

FAST_RETRY = RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.002, deadline=10.0)


@pytest.fixture
def stub() -> Iterator[StubOllama]:
    with StubOllama(replies=["look"], models=["tiny"]) as server:
        yield server


def _request(name: str = "turn", priority: Priority = Priority.TURN) -> LLMRequest:
    return LLMRequest(prompt=lambda: name, model="tiny", priority=priority,
                      options={"num_ctx": 2048, "stop": ["\n"]})  # fmt: skip


def _dispatcher(*urls: str, slots: int = 1, retry: RetryPolicy = FAST_RETRY,
                timeout: httpx.Timeout | None = None) -> Dispatcher:  # fmt: skip
    endpoints = [
        Endpoint(url, OllamaBackend(url, timeout=timeout or httpx.Timeout(5.0)), slots=slots)
        for url in urls
    ]
    return Dispatcher(endpoints, retry=retry, rng=random.Random(1))


async def test_5xx_is_retried_until_it_succeeds(stub: StubOllama) -> None:
    stub.fail_next(500, times=2)
    dispatcher = _dispatcher(stub.url)
    generation = await dispatcher.generate(_request())
    await dispatcher.aclose()
    assert generation.text == "look"
    assert len(stub.requests) == 3
    assert (dispatcher.metrics.calls, dispatcher.metrics.failures) == (1, 0)
    assert dispatcher.metrics.retries == 2
    assert dispatcher.metrics.last_error is not None
    assert "500" in dispatcher.metrics.last_error


async def test_429_is_retried(stub: StubOllama) -> None:
    stub.fail_next(429)
    dispatcher = _dispatcher(stub.url)
    assert (await dispatcher.generate(_request())).text == "look"
    await dispatcher.aclose()
    assert len(stub.requests) == 2


async def test_404_is_not_retried(stub: StubOllama) -> None:
    stub.fail_next(404)
    dispatcher = _dispatcher(stub.url)
    with pytest.raises(LLMResponseError) as caught:
        await dispatcher.generate(_request())
    await dispatcher.aclose()
    assert caught.value.status == 404
    assert len(stub.requests) == 1
    assert (dispatcher.metrics.calls, dispatcher.metrics.failures) == (1, 1)


async def test_retries_run_out(stub: StubOllama) -> None:
    stub.fail_next(503, times=5)
    dispatcher = _dispatcher(stub.url)
    with pytest.raises(LLMResponseError):
        await dispatcher.generate(_request())
    await dispatcher.aclose()
    assert len(stub.requests) == FAST_RETRY.attempts
    assert dispatcher.metrics.failures == 1


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_connection_errors_are_retried_then_reported() -> None:
    url = _closed_port_url()
    dispatcher = _dispatcher(url)
    with pytest.raises(LLMUnavailableError, match="cannot reach"):
        await dispatcher.generate(_request())
    await dispatcher.aclose()
    assert dispatcher.metrics.retries == FAST_RETRY.attempts - 1
    assert dispatcher.endpoints[0].metrics.failures == 1


async def test_a_hung_answer_trips_the_read_timeout_and_the_retry_succeeds(
    stub: StubOllama,
) -> None:
    stub.hang_next()
    dispatcher = _dispatcher(stub.url, timeout=httpx.Timeout(5.0, read=0.3))
    assert (await dispatcher.generate(_request())).text == "look"
    await dispatcher.aclose()
    assert len(stub.requests) == 2
    assert "timed out" in str(dispatcher.metrics.last_error)


async def test_the_deadline_bounds_an_attempt(stub: StubOllama) -> None:
    stub.hang_next()
    retry = RetryPolicy(attempts=1, deadline=0.3)
    dispatcher = _dispatcher(stub.url, retry=retry)
    with pytest.raises(LLMUnavailableError, match=r"no answer within 0\.3 s"):
        await dispatcher.generate(_request())
    await dispatcher.aclose()


async def test_waiting_requests_are_served_by_priority(stub: StubOllama) -> None:
    stub.delay = 0.05
    dispatcher = _dispatcher(stub.url)
    first = asyncio.create_task(dispatcher.generate(_request("busy", Priority.CONSOLIDATION)))
    await asyncio.sleep(0.01)  # the slot is taken; everything below queues
    order = [("c1", Priority.CONSOLIDATION), ("s1", Priority.SUMMARY), ("t1", Priority.TURN),
             ("s2", Priority.SUMMARY), ("t2", Priority.TURN), ("c2", Priority.CONSOLIDATION)]  # fmt: skip
    queued = [asyncio.create_task(dispatcher.generate(_request(n, p))) for n, p in order]
    await asyncio.sleep(0.01)
    assert dispatcher.queued == len(order)
    await asyncio.gather(first, *queued)
    await dispatcher.aclose()
    served = [body["prompt"] for body in stub.requests]
    assert served == ["busy", "t1", "t2", "s1", "s2", "c1", "c2"]
    assert dispatcher.queued == 0
    assert dispatcher.in_flight == 0


async def test_the_prompt_is_built_at_dispatch_not_when_queued(stub: StubOllama) -> None:
    stub.delay = 0.05
    dispatcher = _dispatcher(stub.url)
    state = {"mood": "calm"}
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await asyncio.sleep(0.01)
    fresh = LLMRequest(prompt=lambda: f"mood: {state['mood']}", model="tiny")
    waiting = asyncio.create_task(dispatcher.generate(fresh))
    await asyncio.sleep(0.01)
    state["mood"] = "stormy"
    await asyncio.gather(busy, waiting)
    await dispatcher.aclose()
    assert stub.requests[1]["prompt"] == "mood: stormy"


class _PeakCounter:
    """A protocol-level backend that remembers how many calls ran at once."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    async def generate(self, request: LLMRequest) -> Generation:
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        return Generation(text=request.prompt(), prompt_tokens=3, completion_tokens=1, latency=0.01)

    async def aclose(self) -> None:
        return None


async def test_each_endpoint_runs_at_most_its_slots() -> None:
    first, second = _PeakCounter(), _PeakCounter()
    dispatcher = Dispatcher([Endpoint("a", first, slots=2), Endpoint("b", second, slots=3)])
    results = await asyncio.gather(*(dispatcher.generate(_request(str(i))) for i in range(40)))
    await dispatcher.aclose()
    assert [r.text for r in results] == [str(i) for i in range(40)]
    assert (first.peak, second.peak) == (2, 3)
    assert dispatcher.metrics.calls == 40
    assert dispatcher.metrics.prompt_tokens == 120
    assert dispatcher.endpoints[0].metrics.calls + dispatcher.endpoints[1].metrics.calls == 40


async def test_load_spreads_over_endpoints() -> None:
    with (
        StubOllama(models=["tiny"], delay=0.05) as one,
        StubOllama(models=["tiny"], delay=0.05) as two,
    ):
        dispatcher = _dispatcher(one.url, two.url)
        await asyncio.gather(*(dispatcher.generate(_request()) for _ in range(6)))
        await dispatcher.aclose()
        assert (len(one.requests), len(two.requests)) == (3, 3)


async def test_shutdown_fails_the_queue_and_cancels_hung_calls(stub: StubOllama) -> None:
    stub.hang_next()
    dispatcher = _dispatcher(stub.url)
    hung = asyncio.create_task(dispatcher.generate(_request("hung")))
    await asyncio.sleep(0.05)
    waiting = asyncio.create_task(dispatcher.generate(_request("waiting")))
    await asyncio.sleep(0.01)
    await dispatcher.aclose(grace=0.1)
    with pytest.raises(LLMUnavailableError, match="shutting down"):
        await waiting
    with pytest.raises(asyncio.CancelledError):
        await hung
    with pytest.raises(LLMUnavailableError, match="shutting down"):
        await dispatcher.generate(_request())
    # each request that got no answer is a failed call, as the run's record counts it
    # (issue 46: after a double Ctrl-C the summary said 2 calls, `mudsim cost` 3)
    assert (dispatcher.metrics.calls, dispatcher.metrics.failures) == (3, 3)


async def test_a_cancelled_waiter_gives_its_turn_to_the_next(stub: StubOllama) -> None:
    stub.delay = 0.05
    dispatcher = _dispatcher(stub.url)
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await asyncio.sleep(0.01)
    dropped = asyncio.create_task(dispatcher.generate(_request("dropped")))
    kept = asyncio.create_task(dispatcher.generate(_request("kept")))
    await asyncio.sleep(0.01)
    dropped.cancel()
    await asyncio.gather(busy, kept)
    await dispatcher.aclose()
    assert [body["prompt"] for body in stub.requests] == ["busy", "kept"]
    assert dispatcher.in_flight == 0
    assert dispatcher.queued == 0


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0)
    rng = random.Random(7)
    for retry in range(8):
        for _ in range(50):
            assert 0.0 <= policy.delay(retry, rng) <= min(4.0, 0.5 * 2**retry)


async def test_retry_after_is_read_into_the_error(stub: StubOllama) -> None:
    stub.fail_next(429)
    stub.retry_after = 7
    backend = OllamaBackend(stub.url, timeout=httpx.Timeout(5.0))
    with pytest.raises(LLMResponseError) as caught:
        await backend.generate(_request())
    await backend.aclose()
    assert (caught.value.status, caught.value.retry_after) == (429, 7.0)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("3", 3.0), ("0.5", 0.5), ("Wed, 21 Oct 2015 07:28:00 GMT", None), ("-4", None), ("x", None)],
)
def test_only_the_seconds_form_of_retry_after_is_read(header: str, seconds: float | None) -> None:
    response = httpx.Response(503, headers={"Retry-After": header}, json={"error": "busy"})
    with pytest.raises(LLMResponseError) as caught:
        check_status(response)
    assert caught.value.retry_after == seconds


async def _sleeps_with_one_endpoint(stub: StubOllama, retry_after: float) -> list[float]:
    stub.fail_next(429)
    stub.retry_after = retry_after
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    backend = OllamaBackend(stub.url, timeout=httpx.Timeout(5.0))
    dispatcher = Dispatcher([Endpoint(stub.url, backend)], retry=FAST_RETRY, sleep=sleep)
    assert (await dispatcher.generate(_request())).text == "look"
    await dispatcher.aclose()
    return sleeps


async def test_with_one_endpoint_a_retry_waits_as_long_as_retry_after_says(
    stub: StubOllama,
) -> None:
    assert await _sleeps_with_one_endpoint(stub, 2) == [2.0]


async def test_a_huge_retry_after_is_capped(stub: StubOllama) -> None:
    assert await _sleeps_with_one_endpoint(stub, 86400) == [FAST_RETRY.max_retry_after]


@pytest.mark.parametrize(("limit", "summary_at"), [(4, 5), (2, 3), (None, 7)])
async def test_a_waiting_summary_goes_first_once_enough_turns_bypassed_it(
    stub: StubOllama, limit: int | None, summary_at: int
) -> None:
    stub.delay = 0.02
    backend = OllamaBackend(stub.url, timeout=httpx.Timeout(5.0))
    dispatcher = Dispatcher([Endpoint(stub.url, backend)], retry=FAST_RETRY, bypass_limit=limit)
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await asyncio.sleep(0.01)
    names = ["s1", "t1", "t2", "t3", "t4", "t5", "t6"]
    queued = [
        asyncio.create_task(
            dispatcher.generate(_request(n, Priority.SUMMARY if n[0] == "s" else Priority.TURN))
        )
        for n in names
    ]
    await asyncio.gather(busy, *queued)
    await dispatcher.aclose()
    served = [body["prompt"] for body in stub.requests]
    assert served.index("s1") == summary_at
    assert [p for p in served if p.startswith("t")] == ["t1", "t2", "t3", "t4", "t5", "t6"]
    assert dispatcher.fairness.most_bypassed[Priority.SUMMARY] == summary_at - 1


async def test_a_patient_request_lets_more_turns_go_first_and_an_urgent_one_none(
    stub: StubOllama,
) -> None:
    """A player's summary (``patience=2``) lets twice as many waiting turns go first as an
    agent's (four); an urgent one (a character whose memory holds the turns) goes first."""
    stub.delay = 0.02
    backend = OllamaBackend(stub.url, timeout=httpx.Timeout(5.0))
    dispatcher = Dispatcher([Endpoint(stub.url, backend)], retry=FAST_RETRY, bypass_limit=4)
    busy = asyncio.create_task(dispatcher.generate(_request("busy")))
    await asyncio.sleep(0.01)
    patient = replace(_request("player summary", Priority.SUMMARY), patience=2)
    urgent = replace(_request("urgent summary", Priority.SUMMARY), urgent=lambda: True)
    queued = [
        asyncio.create_task(dispatcher.generate(patient)),
        asyncio.create_task(dispatcher.generate(_request("agent summary", Priority.SUMMARY))),
    ]
    queued += [asyncio.create_task(dispatcher.generate(_request(f"t{n}"))) for n in range(1, 11)]
    queued.append(asyncio.create_task(dispatcher.generate(urgent)))
    await asyncio.gather(busy, *queued)
    await dispatcher.aclose()
    served = [body["prompt"] for body in stub.requests]
    assert served == ["busy", "urgent summary", "t1", "t2", "t3", "t4", "agent summary",
                      "t5", "t6", "t7", "t8", "player summary", "t9", "t10"]  # fmt: skip
    assert dispatcher.fairness.most_bypassed[Priority.SUMMARY] == 8
