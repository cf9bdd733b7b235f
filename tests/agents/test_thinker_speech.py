"""A say or emote that is not speech: asked once more, then the thinker's fallback.

The noise check (English words, no stutter) is the embedded model's only: an agent that
thinks with a served model (Ollama, here the loopback stub) is heard in any words."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.agents.prompt import PromptParts, render_prompt
from engine.agents.thinker import FALLBACK, MAX_ASKS, Thinker
from engine.commands.result import Result, done
from engine.llm.fake import ScriptedBackend
from engine.llm.stub_server import StubOllama
from engine.sim.run import RunOptions, connect, make_thinkers
from engine.sim.simulation import Simulation

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
    turn = await garden.thinker(noise_check=True).take_turn(llm)
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
    llm = ScriptedBackend(["look", "look", "say Exits: north"])
    turn = await thinker.take_turn(llm)
    assert turn.asks == MAX_ASKS
    assert turn.fell_back
    assert turn.command == "examine a stone bench"


NOT_ENGLISH = (
    "say hello tok-00001",
    "say Guten Morgen, wie geht es dir heute?",
    "say ¿Dónde está la biblioteca?",
    "say 我们去花园吧",
    "say lol ok brb",
    "emote hands Eliza the key to room #4 *sigh*",
)


@pytest.mark.parametrize("line", NOT_ENGLISH)
async def test_good_speech_in_any_words_runs_at_once_unless_the_model_writes_noise(
    line: str,
) -> None:
    garden = _Garden()
    turn = await garden.thinker().take_turn(ScriptedBackend([line]))
    assert (turn.command, turn.asks, turn.fell_back) == (line, 1, False)
    assert garden.ran == [line]


async def test_the_embedded_model_s_noise_is_still_asked_again() -> None:
    garden = _Garden()
    llm = ScriptedBackend(["say xqzt vrrk plonf", "say the the the the the the"])
    turn = await garden.thinker(noise_check=True).take_turn(llm)
    assert turn.fell_back
    assert turn.command == "examine a stone bench"


@pytest.mark.parametrize("embedded", [False, True])
async def test_an_ollama_agent_is_heard_saying_hello_tok_00001(
    vault_dir: Path, world_file: Path, embedded: bool
) -> None:
    sim = Simulation.open(vault_dir, world_file)
    with StubOllama(replies=["say hello tok-00001"], models=["tiny"]) as stub:
        options = RunOptions(world_file, vault_dir, stub.url, "tiny", seed=1)
        dispatcher, models = await connect(sim, options, {})
        try:
            assert sim.embedded is False  # a served model
            sim.embedded = embedded  # as the embedded model would set it
            thinkers = make_thinkers(sim, models)
            ada = next(t for t in thinkers.values() if t.name == "Ada")
            assert ada.noise_check is embedded
            heard: list[str] = []
            sim.listeners.append(lambda event: heard.append(event.text))
            turn = await ada.take_turn(dispatcher)
        finally:
            await sim.supervisor.aclose()
            await dispatcher.aclose(grace=1.0)
            sim.close()
    if embedded:
        assert turn.fell_back
        assert turn.command != "say hello tok-00001"
        return
    assert (turn.command, turn.fell_back, turn.asks) == ("say hello tok-00001", False, 1)
    assert turn.result is not None
    assert turn.result.ok
    assert 'Ada says, "hello tok-00001"' in heard  # the room hears her
