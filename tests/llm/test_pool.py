"""The dispatcher as an endpoint pool, against several loopback stubs: stickiness,
least-outstanding spread, failover, cool-off, no retry once a reply has started."""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator

import httpx
import pytest

from engine.errors import LLMResponseError
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.ollama import OllamaBackend
from engine.llm.request import LLMRequest
from engine.llm.stub_server import StubOllama


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def stubs() -> Iterator[tuple[StubOllama, StubOllama]]:
    with StubOllama(models=["tiny"]) as one, StubOllama(models=["tiny"]) as two:
        yield one, two


def _pool(*stubs: StubOllama, slots: int = 2, clock: Clock | None = None,
          sleeps: list[float] | None = None) -> Dispatcher:  # fmt: skip
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    endpoints = [
        Endpoint(s.url, OllamaBackend(s.url, timeout=httpx.Timeout(5.0)), slots) for s in stubs
    ]
    return Dispatcher(endpoints, retry=RetryPolicy(attempts=3, base_delay=0.001), sleep=sleep,
                      cooloff=10.0, clock=clock or Clock())  # fmt: skip


def _agent_at_home(index: int, endpoints: int = 2) -> str:
    """An agent name whose home endpoint is ``index``."""
    return next(
        f"Agent{n}" for n in range(1000) if zlib.crc32(f"Agent{n}".encode()) % endpoints == index
    )


def _request(agent: str | None) -> LLMRequest:
    return LLMRequest(prompt=lambda: "~A>", model="tiny", agent=agent)


async def test_an_agent_keeps_to_its_own_endpoint(stubs: tuple[StubOllama, StubOllama]) -> None:
    one, two = stubs
    pool = _pool(one, two)
    for _ in range(6):
        await pool.generate(_request(_agent_at_home(0)))
    for _ in range(4):
        await pool.generate(_request(_agent_at_home(1)))
    await pool.aclose()
    assert (len(one.requests), len(two.requests)) == (6, 4)


async def test_a_busy_home_sends_the_overflow_to_the_least_loaded(
    stubs: tuple[StubOllama, StubOllama],
) -> None:
    one, two = stubs
    one.delay = two.delay = 0.1
    pool = _pool(one, two, slots=1)
    agent = _agent_at_home(0)
    await asyncio.gather(*(pool.generate(_request(agent)) for _ in range(4)))
    await pool.aclose()
    assert (len(one.requests), len(two.requests)) == (2, 2)


async def test_failover_and_cooloff(stubs: tuple[StubOllama, StubOllama]) -> None:
    one, two = stubs
    one.fail_next(503, times=100)
    clock, sleeps = Clock(), []
    pool = _pool(one, two, clock=clock, sleeps=sleeps)
    agent = _agent_at_home(0)
    assert (await pool.generate(_request(agent))).text == "look"
    assert (len(one.requests), len(two.requests)) == (1, 1)
    assert sleeps == [], "another endpoint was up: retried there at once"
    await pool.generate(_request(agent))
    assert len(one.requests) == 1, "left alone while it cools off"
    clock.now += 10.0
    await pool.generate(_request(agent))
    assert len(one.requests) == 2, "tried again after the cool-off"
    assert pool.endpoints[0].metrics.last_error is not None
    await pool.aclose()


async def test_a_reply_that_broke_off_is_not_retried_elsewhere(
    stubs: tuple[StubOllama, StubOllama],
) -> None:
    one, two = stubs
    one.error_mid_stream = True
    one.replies = ["say Hello there"]
    pool = _pool(one, two)
    with pytest.raises(LLMResponseError) as caught:
        await pool.generate(_request(_agent_at_home(0)))
    await pool.aclose()
    assert caught.value.started
    assert (len(one.requests), len(two.requests)) == (1, 0)


async def test_a_500_is_retried_on_another_endpoint_not_the_same_busy_one(
    stubs: tuple[StubOllama, StubOllama],
) -> None:
    one, two = stubs
    one.fail_next(500)
    sleeps: list[float] = []
    pool = _pool(one, two, sleeps=sleeps)
    assert (await pool.generate(_request(_agent_at_home(0)))).text == "look"
    await pool.aclose()
    assert (len(one.requests), len(two.requests)) == (1, 1)
    assert sleeps == [], "another endpoint could take it at once"


async def test_retry_after_rests_the_endpoint_that_said_it(
    stubs: tuple[StubOllama, StubOllama],
) -> None:
    one, two = stubs
    one.fail_next(429)
    one.retry_after = 30
    clock = Clock()
    pool = _pool(one, two, clock=clock)
    agent = _agent_at_home(0)
    await pool.generate(_request(agent))
    assert (len(one.requests), len(two.requests)) == (1, 1)
    clock.now += 29.0
    await pool.generate(_request(agent))
    assert len(one.requests) == 1, "still resting: it asked for 30 s"
    clock.now += 1.0
    await pool.generate(_request(agent))
    assert len(one.requests) == 2, "back home once Retry-After has passed"
    await pool.aclose()


async def test_a_waiter_is_woken_when_a_cooloff_ends(
    stubs: tuple[StubOllama, StubOllama],
) -> None:
    """One slot each: two is busy (hung), one answers 503 and rests 0.2 s. The retry
    must go to one when its cool-off ends, not wait for two."""
    one, two = stubs
    two.hang_next()
    endpoints = [Endpoint(s.url, OllamaBackend(s.url, timeout=httpx.Timeout(30.0)), 1)
                 for s in (one, two)]  # fmt: skip
    pool = Dispatcher(endpoints, retry=RetryPolicy(attempts=3, base_delay=0.001), cooloff=0.2)
    hung = asyncio.create_task(pool.generate(_request(_agent_at_home(1))))
    await asyncio.sleep(0)  # it has taken two's only slot
    assert pool.endpoints[1].metrics.in_flight == 1
    one.fail_next(503)
    retried = asyncio.create_task(pool.generate(_request(_agent_at_home(0))))
    try:
        done = await asyncio.wait_for(asyncio.shield(retried), timeout=10)
        assert done.text == "look"
        assert len(one.requests) == 2
    finally:
        hung.cancel()
        retried.cancel()
        await pool.aclose(grace=0.1)
        await asyncio.gather(hung, retried, return_exceptions=True)


async def test_a_retry_that_must_go_back_to_the_same_endpoint_backs_off_first(
    stubs: tuple[StubOllama, StubOllama],
) -> None:
    """two is up but busy (hung): the 500 from one is retried on one, after a backoff."""
    one, two = stubs
    two.hang_next()
    one.fail_next(500)
    sleeps: list[float] = []
    pool = _pool(one, two, slots=1, sleeps=sleeps)
    hung = asyncio.create_task(pool.generate(_request(_agent_at_home(1))))
    await asyncio.sleep(0)  # it has taken two's only slot
    try:
        assert (await pool.generate(_request(_agent_at_home(0)))).text == "look"
        assert len(one.requests) == 2
        assert len(sleeps) == 1, "backed off before going back to the endpoint that failed"
    finally:
        hung.cancel()
        await pool.aclose(grace=0.1)
        await asyncio.gather(hung, return_exceptions=True)
