"""One agent's turn: asking, re-asking after a repeat, skipping after a failure, and
surviving a prompt that cannot be built or a command that raises."""

from __future__ import annotations

import asyncio
import logging

import pytest

from engine.agents.thinker import MAX_ASKS, Thinker
from engine.commands.result import Result, done, failed
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.llm.request import Generation, LLMRequest
from engine.memory.constraint import Constraint


class _Room:
    """Records what the thinker did to the world: announcements and commands."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.prompts = 0

    def thinker(self, **overrides: object) -> Thinker:
        settings: dict[str, object] = {
            "name": "Ada",
            "model": "tiny",
            "options": {"stop": ["\n"], "num_ctx": 2048},
            "build_prompt": self.prompt,
            "announce": lambda: self.log.append("announce"),
            "execute": self.execute,
        }
        settings.update(overrides)
        return Thinker(**settings)  # type: ignore[arg-type]

    def prompt(self) -> str:
        self.prompts += 1
        return f"prompt {self.prompts}\n~Ada>"

    def execute(self, line: str) -> Result:
        self.log.append(f"run {line}")
        return failed("No.") if line.startswith("fly") else done("Done.")


async def test_a_turn_runs_the_first_line_of_the_reply() -> None:
    room = _Room()
    llm = ScriptedBackend(["  ~Ada> say Hello there | to be kind\nlook"])
    turn = await room.thinker().take_turn(llm)
    assert turn.command == "say Hello there | to be kind"
    assert turn.result is not None
    assert turn.result.ok
    assert turn.asks == 1
    assert room.log == ["announce", "run say Hello there | to be kind"]
    assert llm.prompts == ["prompt 1\n~Ada>"]
    assert llm.requests[0].agent == "Ada"
    assert llm.requests[0].options["stop"] == ["\n"]


async def test_a_repeat_is_rejected_and_asked_again() -> None:
    room = _Room()
    thinker = room.thinker(last_key="look")
    turn = await thinker.take_turn(ScriptedBackend(["LOOK  | again", "say Hi"]))
    assert turn.command == "say Hi"
    assert turn.rejected == ("LOOK  | again",)
    assert turn.asks == 2
    assert room.log == ["announce", "run say Hi"]  # announced once, the repeat never ran
    assert thinker.last_key == "say hi"


async def test_the_third_answer_runs_even_if_it_repeats() -> None:
    room = _Room()
    thinker = room.thinker(last_key="look")
    turn = await thinker.take_turn(ScriptedBackend(["look"]))
    assert turn.asks == MAX_ASKS == 3
    assert turn.rejected == ("look", "look")
    assert turn.command == "look"
    assert room.log == ["announce", "run look"]


async def test_a_failed_call_skips_the_turn_and_the_next_turn_thinks_again() -> None:
    room = _Room()
    thinker = room.thinker()
    llm = ScriptedBackend(["look"], fail_first=1)
    skipped = await thinker.take_turn(llm)
    assert skipped.command is None
    assert skipped.error == "scripted failure"
    assert (thinker.turns, thinker.skipped, thinker.last_error) == (1, 1, "scripted failure")
    taken = await thinker.take_turn(llm)
    assert taken.command == "look"
    assert thinker.turns == 2
    assert room.log == ["announce", "announce", "run look"]


async def test_an_empty_reply_ends_the_turn() -> None:
    room = _Room()
    turn = await room.thinker().take_turn(ScriptedBackend(["<think>hmm</think>\n \n"]))
    assert (turn.command, turn.error, turn.asks) == (None, None, 1)
    assert room.log == ["announce"]


async def test_a_failed_command_is_still_the_turn() -> None:
    room = _Room()
    turn = await room.thinker().take_turn(ScriptedBackend(["fly away"]))
    assert turn.result is not None
    assert not turn.result.ok
    assert room.log == ["announce", "run fly away"]


async def test_a_seed_gives_each_ask_its_own_reproducible_seed() -> None:
    seeds = []
    for _ in range(2):
        llm = ScriptedBackend(["look"])
        await _Room().thinker(seed=7, last_key="look").take_turn(llm)
        seeds.append([r.options["seed"] for r in llm.requests])
    assert seeds[0] == seeds[1]
    assert len(set(seeds[0])) == 3
    unseeded = ScriptedBackend(["look"])
    await _Room().thinker().take_turn(unseeded)
    assert "seed" not in unseeded.requests[0].options


# --- one agent's problem costs its turn, nothing else ----------------------------------


def _broken_prompt() -> str:
    raise ValueError("a note with broken front matter")


async def test_a_prompt_that_cannot_be_built_skips_the_turn_with_a_logged_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    room = _Room()
    thinker = room.thinker(build_prompt=_broken_prompt)
    llm = ScriptedBackend(["look"])
    with caplog.at_level(logging.ERROR, logger="mudsim"):
        turn = await thinker.take_turn(llm)
    assert turn.command is None
    assert turn.error is not None
    assert "could not build the prompt" in turn.error
    assert "a note with broken front matter" in turn.error
    assert (thinker.turns, thinker.skipped, thinker.last_error) == (1, 1, turn.error)
    assert room.log == ["announce"]  # nothing ran
    assert llm.prompts == []  # nothing was sent
    logged = [r for r in caplog.records if r.name == "mudsim"]
    assert len(logged) == 1
    assert logged[0].exc_info is not None  # the traceback goes to the run log
    assert "Ada" in logged[0].getMessage()
    # the next turn, with a prompt that builds, runs as usual
    thinker.build_prompt = room.prompt
    assert (await thinker.take_turn(llm)).command == "look"


async def test_a_broken_prompt_is_neither_retried_nor_an_llm_failure() -> None:
    calls = 0

    def broken() -> str:
        nonlocal calls
        calls += 1
        raise KeyError("summary file vanished")

    backend = ScriptedBackend(["look"])
    dispatcher = Dispatcher([Endpoint("fake:", backend)], retry=RetryPolicy(attempts=4))
    thinker = _Room().thinker(build_prompt=broken)
    turn = await thinker.take_turn(dispatcher)
    assert turn.error is not None
    assert "summary file vanished" in turn.error
    assert calls == 1
    metrics = dispatcher.metrics
    assert (metrics.calls, metrics.failures, metrics.retries, metrics.last_error) == (0, 0, 0, None)
    endpoint = dispatcher.endpoints[0].metrics
    assert (endpoint.failures, endpoint.last_error, endpoint.in_flight) == (0, None, 0)


async def test_a_broken_constraint_skips_the_turn_too() -> None:
    def broken() -> Constraint:
        raise RuntimeError("no grammar")

    thinker = _Room().thinker(constraint=broken)
    dispatcher = Dispatcher([Endpoint("fake:", _Constrained())])
    turn = await thinker.take_turn(dispatcher)
    assert turn.error is not None
    assert "no grammar" in turn.error
    assert dispatcher.metrics.failures == 0


class _Constrained(ScriptedBackend):
    """A backend that asks for the constraint, as the embedded model does."""

    async def generate(self, request: LLMRequest) -> Generation:
        assert request.constraint is not None
        request.constraint()
        return await super().generate(request)


async def test_a_command_that_raises_costs_the_turn_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    room = _Room()

    def buggy(line: str) -> Result:
        room.log.append(f"run {line}")
        raise ZeroDivisionError("a handler bug")

    thinker = room.thinker(execute=buggy)
    with caplog.at_level(logging.ERROR, logger="mudsim"):
        turn = await thinker.take_turn(ScriptedBackend(["look"]))
    assert turn.command == "look"
    assert turn.result is None
    assert turn.error is not None
    assert "a handler bug" in turn.error
    assert (thinker.skipped, thinker.last_error) == (1, turn.error)
    assert [r.exc_info is not None for r in caplog.records if r.name == "mudsim"] == [True]


async def test_a_backend_bug_costs_the_turn() -> None:
    class Buggy(ScriptedBackend):
        async def generate(self, request: LLMRequest) -> Generation:
            raise TypeError("unexpected keyword")

    thinker = _Room().thinker()
    turn = await thinker.take_turn(Buggy())
    assert turn.error is not None
    assert "unexpected keyword" in turn.error
    assert thinker.skipped == 1


async def test_cancelling_a_turn_is_not_swallowed() -> None:
    class Hung(ScriptedBackend):
        async def generate(self, request: LLMRequest) -> Generation:
            await asyncio.Event().wait()
            raise AssertionError

    thinker = _Room().thinker()
    task = asyncio.create_task(thinker.take_turn(Hung()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not thinker.thinking


async def test_a_repeat_of_any_of_the_last_three_commands_is_asked_again() -> None:
    room = _Room()
    llm = ScriptedBackend(["go east", "look", "say hi"])
    thinker = room.thinker(recent_keys=["go east", "say hi"], last_key="say hi")
    turn = await thinker.take_turn(llm)
    assert turn.command == "look"
    assert turn.rejected == ("go east",)
    assert thinker.recent_keys == ["go east", "say hi", "look"]


async def test_a_reply_that_copies_the_transcript_is_asked_again() -> None:
    room = _Room()
    prompt = 'You are Ada.\n---\nAsh says, "I have got a kettle on the stove for us."\n---\n~Ada>'
    llm = ScriptedBackend(
        ["say I've got a ~Ash>say I've got a", "say I have got a kettle on the stove", "say Tea?"]
    )
    turn = await room.thinker(build_prompt=lambda: prompt).take_turn(llm)
    assert turn.command == "say Tea?"
    assert len(turn.rejected) == 2
    assert room.log == ["announce", "run say Tea?"]
