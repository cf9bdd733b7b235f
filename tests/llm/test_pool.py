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
