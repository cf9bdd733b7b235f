"""who, where, rooms, help / ?, commands."""

from __future__ import annotations

import pytest
from helpers import run

from engine.errors import LLMError
from engine.llm.dispatcher import Dispatcher, Endpoint, RetryPolicy
from engine.llm.fake import ScriptedBackend
from engine.llm.metrics import seconds
from engine.llm.request import LLMRequest
from engine.sim.simulation import LLMLink, Simulation


def test_who_lists_everyone_and_where_they_are(sim: Simulation) -> None:
    run(sim, "Pat", "go north")
    result = run(sim, "Pip", "who")
    assert result.ok
    assert result.text == (
        "Characters in Fixture:\n"
        "- Ada [agent] in The Hall\n"
        "- Bo [agent] in The Yard\n"
        "- Pat [player] in The Yard\n"
        "- Pip [player] in The Hall\n"
        "- Bea [player] in The Yard"
    )


def test_where_names_the_room_and_its_id(sim: Simulation) -> None:
    assert run(sim, "Pat", "where").text == "You are in The Hall (#hall)."
    run(sim, "Pat", "go north")
    assert run(sim, "Pat", "where").text == "You are in The Yard (#yard)."


@pytest.mark.parametrize(
    ("verb", "could_mean"), [("wh", "where and who"), ("r", "recall and rooms")]
)
def test_ambiguous_query_verb_fails(sim: Simulation, verb: str, could_mean: str) -> None:
    result = run(sim, "Pat", verb)
    assert not result.ok
    assert result.text == f"'{verb}' could mean {could_mean}."


def test_rooms_lists_rooms_and_occupants(sim: Simulation) -> None:
    result = run(sim, "Pat", "rooms")
    assert result.ok
    assert result.text == (
        "Rooms:\n"
        "- The Hall (#hall): Ada, Pat and Pip\n"
        "- The Yard (#yard): Bo and Bea\n"
        "- The Tower (#tower): empty\n"
        "- The Cellar (#cellar): empty"
    )


def test_help_lists_only_the_callers_categories(sim: Simulation) -> None:
    player = run(sim, "Pip", "help")
    assert player.ok
    assert player.text.startswith("Categories (help <category> lists its commands):")
    assert "- movement: getting around" in player.text
    assert "- building:" not in player.text
    assert "- admin:" not in player.text
    admin = run(sim, "Pat", "?")
    assert "- building: making rooms and exits (builders)" in admin.text
    assert "- admin: running the world (admins)" in admin.text


def test_help_category_lists_its_commands(sim: Simulation) -> None:
    result = run(sim, "Pip", "help movement")
    assert result.ok
    assert result.text.startswith("movement (getting around):\n- go [to] <exit|room>: Walk")


def test_help_category_above_your_role_fails(sim: Simulation) -> None:
    result = run(sim, "Pip", "help building")
    assert not result.ok
    assert result.text == "You have no building commands."
    assert run(sim, "Bea", "help building").ok


def test_help_command_in_full(sim: Simulation) -> None:
    result = run(sim, "Pip", "help go")
    assert result.ok
    lines = result.text.splitlines()
    assert lines[0] == "go [to] <exit|room>"
    assert "Example: go north" in lines
    assert lines[-1] == "Category: movement"


def test_help_by_alias(sim: Simulation) -> None:
    result = run(sim, "Pip", "help l")
    assert result.ok
    assert result.text.splitlines()[0] == "look [thing]"
    assert "Aliases: l" in result.text


def test_help_names_the_role_a_command_needs(sim: Simulation) -> None:
    result = run(sim, "Pip", "help @dig")
    assert result.ok
    assert result.text.endswith("Category: building; needs the builder role")


def test_help_unknown_topic_fails(sim: Simulation) -> None:
    result = run(sim, "Pip", "help xyzzy")
    assert not result.ok
    assert result.text == "There is no command or category called 'xyzzy'."
    assert result.hint == "Type 'help' for the categories."


def test_commands_lists_what_each_role_may_use(sim: Simulation) -> None:
    player = run(sim, "Pip", "commands")
    assert player.ok
    assert player.text.splitlines()[0] == "social: look, say, emote, examine"
    assert "building:" not in player.text
    assert "admin:" not in player.text
    builder = run(sim, "Bea", "commands").text
    assert "building: @dig, @exit, @teleport" in builder
    assert "admin:" not in builder
    assert "admin: @save, @impersonate" in run(sim, "Pat", "commands").text


def test_a_command_missing_from_commands_is_refused(sim: Simulation) -> None:
    assert "@save" not in run(sim, "Bea", "commands").text
    result = run(sim, "Bea", "@save")
    assert not result.ok
    assert result.hint == "Type 'commands' to see what you can do."


def test_llm_status_without_an_llm_says_so(sim: Simulation) -> None:
    result = run(sim, "Pip", "@llm-status")
    assert result.ok
    assert result.text.startswith("No language model is connected in this session")


async def test_llm_status_shows_endpoint_model_queue_and_counts(sim: Simulation) -> None:
    llm = ScriptedBackend(["look"], fail_first=1)
    dispatcher = Dispatcher([Endpoint("fake:", llm, slots=2)], retry=RetryPolicy(attempts=1))
    sim.llm = LLMLink(dispatcher, {"Ada": "tiny", "Bo": "tiny"})
    request = LLMRequest(prompt=lambda: "x", model="tiny")
    with pytest.raises(LLMError):
        await dispatcher.generate(request)
    await dispatcher.generate(request)
    text = run(sim, "Pip", "@llm-status").text
    assert text.splitlines() == [
        "LLM status",
        "Model: tiny",
        "Queue: 0 waiting, 0 in flight",
        "Calls: 2 (1 failed, 0 retries); tokens 0 in, 1 out",
        f"Latency: mean {seconds(dispatcher.metrics.mean_latency)}, "
        f"p50 {seconds(dispatcher.metrics.p50)}, p95 {seconds(dispatcher.metrics.p95)}",
        "Last error: scripted failure",
        "Endpoints:",
        f"- fake:: 0/2 slots busy, 2 calls, 1 failed, p50 {seconds(dispatcher.metrics.p50)}, "
        "last error: scripted failure",
    ]
