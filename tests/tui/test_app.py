"""The terminal UI driven by Textual's Pilot, against the loopback Ollama stub."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import RichLog, Static, TabbedContent

from engine.commands.registry import Registry
from engine.llm.stub_server import StubOllama
from engine.sim.run import RunOptions
from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp, PromptScreen
from engine.tui.runner import build_app, close_app

DEMO = Path(__file__).parents[2] / "worlds" / "demo.yaml"


@pytest.fixture
def stub() -> StubOllama:
    with StubOllama(
        replies=["say Hello there.", "look", "think Quiet."], models=["tiny"]
    ) as server:
        yield server  # type: ignore[misc]


async def _app(tmp_path: Path, stub: StubOllama, *, turns: int | None = None) -> MudsimApp:
    sim = Simulation.open(tmp_path / "vault", DEMO)
    options = RunOptions(DEMO, tmp_path / "vault", stub.url, "tiny", turns=turns, seed=1)
    return await build_app(sim, options, os.environ)


async def _until(check: Callable[[], bool], pilot: object, limit: float = 10.0) -> None:
    for _ in range(int(limit / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")


def _log_text(app: MudsimApp) -> str:
    return "\n".join(line.text for line in app.query_one("#events", RichLog).lines)


def _squeezed(text: str) -> str:
    """``text`` without whitespace. The log wraps lines (and folds words longer than a
    line, such as paths) wherever its width says, so it is compared without the breaks."""
    return "".join(text.split())


def _flat_log(app: MudsimApp) -> str:
    """The event log, squeezed (compare with ``_squeezed(expected)``)."""
    return _squeezed(_log_text(app))


async def test_agents_act_and_events_appear(tmp_path: Path, stub: StubOllama) -> None:
    app = await _app(tmp_path, stub, turns=2)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(
            lambda: _squeezed("Every agent has taken its 2 turns") in _flat_log(app), pilot
        )
        text = _flat_log(app)
        assert _squeezed('says, "Hello there."') in text
        assert _squeezed("Every agent has taken its 2 turns") in text
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_inspector_shows_memory_status_and_the_exact_prompt(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub, turns=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(lambda: all(n == 1 for n in app.scheduler.turns_taken.values()), pilot)

        def body_now() -> str:
            return str(app.query_one("#inspector-body", Static).render())

        # the inspector refreshes twice a second: wait for a refresh after the turn's end
        await _until(lambda: body_now().startswith("Eliza — idle")
                     and "Turns: 1 " in body_now(), pilot, limit=30.0)  # fmt: skip
        body = body_now()
        assert "memories recorded: 1" in body
        assert "next compaction at: 129 memories" in body
        await pilot.press("p")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PromptScreen)
        sent = [b["prompt"] for b in stub.requests if b["prompt"].endswith("~Eliza>")]
        assert screen.prompt == sent[-1]
        await pilot.press("escape")
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_pause_stops_turns_and_step_runs_exactly_one_round(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub)
    app.start_paused = True
    app.scheduler.speed = 64.0  # real time, 6 s intervals become about 0.1 s
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause(0.5)
        assert app.scheduler.turns_taken == {"eliza": 0, "moss": 0}
        await pilot.press("n")
        await _until(lambda: all(n == 1 for n in app.scheduler.turns_taken.values()), pilot)
        await pilot.pause(0.5)
        assert app.scheduler.turns_taken == {"eliza": 1, "moss": 1}
        await pilot.press("space")  # resume: real time goes on
        await _until(lambda: min(app.scheduler.turns_taken.values()) >= 3, pilot)
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_players_command_reaches_the_world_and_q_saves(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub)
    app.start_paused = True
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i")
        await pilot.press(*"say hello", "enter")
        await _until(lambda: _squeezed("Traveler> say hello") in _flat_log(app), pilot)
        await pilot.press("escape", "q")
    await close_app(app)
    memories = (tmp_path / "vault" / "agents" / "Traveler" / "memories.jsonl").read_text()
    assert "hello" in memories
    state = (tmp_path / "vault" / "agents" / "Traveler" / "memory-state.json").read_text()
    assert '"memories": 1' in state  # saved on quit
    app.sim.close()


class _Broken:
    async def generate(self, request: object) -> object:
        raise RuntimeError("the backend broke")

    async def aclose(self) -> None:
        return None


async def test_a_backend_error_skips_the_turn_and_the_engine_goes_on(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub, turns=2)
    app.scheduler.llm = _Broken()  # type: ignore[assignment]
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(
            lambda: _squeezed("Every agent has taken its 2 turns") in _flat_log(app), pilot
        )
        text = _flat_log(app)
        assert (
            _squeezed(
                "Eliza's turn was skipped: the LLM call failed: RuntimeError: the backend broke"
            )
            in text
        )
        assert _squeezed("Every agent has taken its 2 turns") in text
        assert app.engine_error is None

        def body() -> str:  # the panels refresh every 0.5 s: the turns may be quicker
            return " ".join(str(app.query_one("#inspector-body", Static).render()).split())

        await _until(lambda: "Turns: 2 (2 skipped)" in body(), pilot)
        assert "Last error: the LLM call failed: RuntimeError: the backend broke" in body()
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_an_engine_error_is_shown_and_the_app_stays(
    tmp_path: Path, stub: StubOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await _app(tmp_path, stub, turns=1)

    async def broken(turns: int | None = None) -> None:
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(app.scheduler, "run", broken)  # a fault injected into the engine
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(lambda: app.engine_error is not None, pilot)
        stopped = _squeezed("The engine stopped: RuntimeError: the engine broke")
        await _until(lambda: stopped in _flat_log(app), pilot)  # the log is written in ticks
        assert app.is_running
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


def _break_a_note(vault: Path, folder: str) -> None:
    notes = vault / "agents" / folder / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    (notes / "bench.md").write_text("---\ntitle: [never closed\n---\nMossy.\n", encoding="utf-8")


async def test_a_broken_note_is_shown_and_the_other_agent_goes_on(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub, turns=2)
    _break_a_note(tmp_path / "vault", "Eliza")
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(
            lambda: _squeezed("Every agent has taken its 2 turns") in _flat_log(app), pilot
        )
        text = _flat_log(app)
        assert text.count(_squeezed("Eliza's turn was skipped: could not build the prompt:")) == 2
        assert _squeezed("bench.md has invalid front matter") in text
        assert app.scheduler.thinkers["moss"].skipped == 0
        assert all(b["prompt"].endswith("~Moss>") for b in stub.requests)
        # the prompt view says why there is no prompt, and the app stays
        await pilot.press("p")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PromptScreen)
        assert "could not be built" in screen.title_text
        assert "bench.md has invalid front matter" in screen.prompt
        await pilot.press("escape")
        assert app.is_running
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_a_players_command_that_raises_is_one_line(
    tmp_path: Path, stub: StubOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await _app(tmp_path, stub)
    app.start_paused = True

    def buggy(context: object, call: object) -> object:
        raise ZeroDivisionError("a handler bug")

    command = app.sim.registry.get("look")
    assert command is not None
    registry = Registry()  # a fault injected into one command
    registry.add(dataclasses.replace(command, handler=buggy))  # type: ignore[arg-type]
    monkeypatch.setattr(app.sim, "registry", registry)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("i")
        await pilot.press(*"look", "enter")
        await _until(lambda: _squeezed("a handler bug") in _flat_log(app), pilot)
        text = _flat_log(app)
        assert _squeezed("Traveler> look") in text
        assert _squeezed("That went wrong: ZeroDivisionError: a handler bug") in text
        assert app.is_running
        await pilot.press("escape", "q")
    await close_app(app)
    app.sim.close()


async def test_the_filter_shows_one_agent(tmp_path: Path, stub: StubOllama) -> None:
    app = await _app(tmp_path, stub, turns=2)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(lambda: all(n == 2 for n in app.scheduler.turns_taken.values()), pilot)
        await pilot.pause(0.3)
        assert "Moss" in _log_text(app)
        await pilot.press("f", "f")  # all -> room -> agent (Eliza, selected first)
        await pilot.pause(0.3)
        assert app.filter == "agent"
        lines = [line for line in _log_text(app).splitlines() if line.startswith("[")]
        assert lines
        assert all("Eliza" in line for line in lines)
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_knowledge_tab_shows_the_bank_and_the_last_pass(
    tmp_path: Path, stub: StubOllama
) -> None:
    stub.knowledge = [
        '[{"type": "fact", "content": "The kettle whistles when the tea is ready.", "tags": ["Tea"]}]',
        '{"operations": [{"action": "ADD", "candidate": 0}]}',
    ]
    app = await _app(tmp_path, stub, turns=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(lambda: all(n == 1 for n in app.scheduler.turns_taken.values()), pilot)
        eliza = app.sim.minds[app.selected or ""]
        assert app.sim.knowledge.force(eliza).startswith("Consolidating Eliza's knowledge")
        await _until(lambda: not app.sim.knowledge.workers, pilot)
        app.query_one("#inspector", TabbedContent).active = "tab-2"
        shown = lambda: str(app.query_one("#knowledge-body", Static).render())  # noqa: E731
        await _until(lambda: "Last pass " in shown(), pilot)  # the tab's next refresh
        body = shown()
        assert body.startswith("Eliza's knowledge\n1 entry, oldest first:")
        assert "(fact, 0 accesses) The kettle whistles when the tea is ready. [tags: tea]" in body
        assert "Last pass " in body
        assert ": changed, ended 2026-01-01 08:" in body  # world time, as people read it
        assert "Operations:\n- ADD ltm-1-" in body
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_handbook_tab_shows_memory_summary_after_a_pass(
    tmp_path: Path, stub: StubOllama
) -> None:
    stub.knowledge = [
        '[{"type": "fact", "content": "The kettle whistles when the tea is ready.", "tags": ["Tea"]}]',
        '{"operations": [{"action": "ADD", "candidate": 0}]}',
    ]
    app = await _app(tmp_path, stub, turns=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(lambda: all(n == 1 for n in app.scheduler.turns_taken.values()), pilot)
        app.query_one("#inspector", TabbedContent).active = "tab-3"
        body = lambda: str(app.query_one("#handbook-body", Static).render())  # noqa: E731
        await _until(lambda: "No handbook yet" in body(), pilot)
        eliza = app.sim.minds[app.selected or ""]
        app.sim.knowledge.force(eliza)
        await _until(lambda: not app.sim.knowledge.workers, pilot)
        await _until(lambda: "## General Tips" in body(), pilot)
        assert body().startswith("Eliza's handbook\nWritten by the rules")
        assert "1. The kettle whistles when the tea is ready." in body()
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_prompt_view_shows_what_the_agent_brings_to_mind_with_scores(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub, turns=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await _until(lambda: all(n == 1 for n in app.scheduler.turns_taken.values()), pilot)
        eliza = app.sim.character("Eliza")
        app.sim.execute(eliza, "note Roses -> The garden roses want water at dusk.")
        await pilot.press("p")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PromptScreen)
        sent = [b["prompt"] for b in stub.requests if b["prompt"].endswith("~Eliza>")]
        exact, scored = screen.prompt.split("\n\nWhat it brings to mind now", 1)
        assert exact == sent[-1]  # the exact prompt first, untouched
        assert "- Roses: The garden roses want water at dusk.  [rel " in scored
        assert ", note]" in scored
        await pilot.press("escape")
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_llm_panel_shows_cost_per_agent_and_c_sorts_it(
    tmp_path: Path, stub: StubOllama
) -> None:
    app = await _app(tmp_path, stub, turns=2)
    async with app.run_test(size=(100, 40)) as pilot:
        await _until(lambda: all(n == 2 for n in app.scheduler.turns_taken.values()), pilot)

        def panel() -> str:
            return str(app.query_one("#llm", Static).render())

        assert app.sim.recorder is not None
        names = [f"\n{name[:5]}" for name in app.sim.recorder.costs]  # a row each
        assert len(names) == 2
        # the panel refreshes twice a second: wait for the refresh after the last turn
        await _until(lambda: all(name in panel() for name in names), pilot)
        assert "Cost by agent:" in panel()
        await pilot.press("c")
        await _until(lambda: "Cost by tokens:" in panel(), pilot)
        await pilot.press("q")
    await close_app(app)
    app.sim.close()
