"""A say or emote that is not language: asked once more, then the thinker's fallback."""

from __future__ import annotations

from engine.agents.prompt import PromptParts, render_prompt
from engine.agents.thinker import FALLBACK, MAX_ASKS, Thinker
from engine.commands.result import Result, done
from engine.llm.fake import ScriptedBackend

PROMPT = render_prompt(
    PromptParts(
        name="Moss",
        profile="A gardener who worries about the apple trees.",
        room_name="The Garden",
        room_description="A walled garden of herbs and apple trees.",
        exits=["north"],
        also_here=["Eliza"],
        memories=['Eliza says, "Hello Moss, what are you reading?"'],
        examples=["say Hello, Eliza. How are you today?", "examine a stone bench", "go north"],
    )
)


class _Garden:
    def __init__(self, prompt: str = PROMPT) -> None:
        self.ran: list[str] = []
        self.text = prompt

    def thinker(self, **overrides: object) -> Thinker:
        settings: dict[str, object] = {
            "name": "Moss",
            "model": "tiny",
            "options": {"stop": ["\n"]},
            "build_prompt": lambda: self.text,
            "announce": lambda: None,
            "execute": self.execute,
        }
        settings.update(overrides)
        return Thinker(**settings)  # type: ignore[arg-type]

    def execute(self, line: str) -> Result:
        self.ran.append(line)
        return done("Done.")


async def test_good_speech_runs_at_once() -> None:
    garden = _Garden()
    turn = await garden.thinker().take_turn(ScriptedBackend(["say I am reading about roses."]))
    assert turn.command == "say I am reading about roses."
    assert (turn.asks, turn.rejected, turn.fell_back) == (1, (), False)


async def test_bad_speech_is_asked_again_once() -> None:
    garden = _Garden()
    llm = ScriptedBackend(["say Good moves here. You look.", "say The roses are out, Eliza."])
    turn = await garden.thinker().take_turn(llm)
    assert turn.command == "say The roses are out, Eliza."
    assert turn.rejected == ("say Good moves here. You look.",)
    assert turn.asks == 2
    assert garden.ran == ["say The roses are out, Eliza."]


async def test_bad_speech_twice_runs_the_first_example_that_is_not_speech() -> None:
    garden = _Garden()
    llm = ScriptedBackend(["emote ampersanag an armchair. эта острона.", "say Exits: north"])
    turn = await garden.thinker().take_turn(llm)
    assert turn.fell_back
    assert turn.command == "examine a stone bench"
    assert turn.asks == 2
    assert len(turn.rejected) == 2
    assert garden.ran == ["examine a stone bench"]


async def test_the_fallback_skips_recent_commands_and_ends_on_look() -> None:
    garden = _Garden()
    thinker = garden.thinker(recent_keys=["examine a stone bench", "go north"])
    assert thinker.fallback() == FALLBACK  # nothing before a turn: no prompt yet
    turn = await thinker.take_turn(ScriptedBackend(["say ## Handbook", "say ~Moss> hi"]))
    assert turn.command == FALLBACK


async def test_saying_the_same_again_is_asked_again() -> None:
    garden = _Garden()
    thinker = garden.thinker()
    llm = ScriptedBackend(["say Lovely day.", "say lovely day!", "emote waves to Eliza."])
    await thinker.take_turn(llm)
    turn = await thinker.take_turn(llm)
    assert turn.rejected == ("say lovely day!",)
    assert turn.command == "emote waves to Eliza."
    assert thinker.recent_speech == ["Lovely day.", "waves to Eliza."]


async def test_bad_speech_on_the_last_ask_falls_back() -> None:
    garden = _Garden()
    thinker = garden.thinker(last_key="look", recent_keys=["look"])
    llm = ScriptedBackend(["look", "look", "say xqzt vrrk plonf"])
    turn = await thinker.take_turn(llm)
    assert turn.asks == MAX_ASKS
    assert turn.fell_back
    assert turn.command == "examine a stone bench"
