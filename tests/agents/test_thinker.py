"""One agent's turn: asking, re-asking after a repeat, skipping after a failure."""

from __future__ import annotations

from engine.agents.thinker import MAX_ASKS, Thinker
from engine.commands.result import Result, done, failed
from engine.llm.fake import ScriptedBackend


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
