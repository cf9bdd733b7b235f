"""The TUI at 80x24 (issue 32, item 5), driven by Pilot on a real run with ``--llm
fake:``: every room with who is in it, every inspector tab's label, the backend line
and the cost table on screen; the footer says what the keys do now (Resume while
paused, the input line's own keys while typing, c for the cost order); the start-up
notice (the embedded model used instead of a server) is inside the app too."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from tui_scenes import until

from engine.llm.connect import LLMChoice
from engine.sim import run
from engine.sim.run import RunOptions
from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp
from engine.tui.runner import build_app, close_app

WORLDS = Path(__file__).parents[2] / "worlds"
SIZE = (80, 24)


@asynccontextmanager
async def _running(tmp_path: Path, world: str = "village.yaml", rounds: int = 0
                   ) -> AsyncIterator[tuple[MudsimApp, Pilot[None]]]:  # fmt: skip
    """A paused run of ``world`` with ``--llm fake:`` at 80x24, after ``rounds`` steps."""
    sim = Simulation.open(tmp_path / "vault", WORLDS / world)
    options = RunOptions(WORLDS / world, tmp_path / "vault", "fake:", None, seed=1)
    app = await build_app(sim, options, os.environ)
    app.start_paused = True
    try:
        async with app.run_test(size=SIZE) as pilot:
            for done in range(1, rounds + 1):
                await pilot.press("n")
                await until(lambda: min(app.scheduler.turns_taken.values()) >= done)  # noqa: B023
            yield app, pilot
            await pilot.press("q")
        await close_app(app)
    finally:
        sim.close()


def _screen(app: MudsimApp) -> list[str]:
    """The screen as text, one string a row (what the terminal shows)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _within(app: MudsimApp, region: Region) -> list[str]:
    return [row[region.x : region.right] for row in _screen(app)[region.y : region.bottom]]


def _footer(app: MudsimApp) -> str:
    return " ".join(_screen(app)[-1].split())


async def test_every_room_is_shown_with_who_is_in_it(tmp_path: Path) -> None:
    async with _running(tmp_path, rounds=2) as (app, _pilot):
        await until(lambda: app.sim.recorder is not None and len(app.sim.recorder.costs) == 5)

        def tree() -> str:
            return "\n".join(_within(app, app.query_one("#world").content_region))

        last = list(_rooms(app))[-1]
        await until(lambda: all(name in tree() for name in last[1]))  # the next refresh
        for room, occupants in _rooms(app):
            assert room in tree()
            for name in occupants:
                assert name in tree(), f"{name} (in {room}) is not on screen"


def _rooms(app: MudsimApp) -> Iterator[tuple[str, list[str]]]:
    world = app.sim.world
    for room in world.rooms.values():
        yield room.name, [c.name for c in world.characters_in(room.id)]


async def test_every_inspector_tab_label_is_whole(tmp_path: Path) -> None:
    async with _running(tmp_path, world="demo.yaml") as (app, _):
        inspector = app.query_one("#inspector").content_region
        await until(
            lambda: " ".join(_within(app, inspector)[0].split()) == "Agent Knowledge Handbook"
        )


async def test_the_llm_panel_says_which_backend_runs(tmp_path: Path) -> None:
    """``--llm fake:`` runs the scripted backend, whatever model the world would ask
    for (the panel said ``Model: gemma3:4b``)."""
    async with _running(tmp_path, world="demo.yaml") as (app, _pilot):
        box = app.query_one("#llm-box")
        await until(lambda: _within(app, box.content_region)[0].strip() == "fake (scripted)")
        shown = _within(app, box.content_region)
        assert "gemma3" not in "\n".join(shown)


async def test_the_cost_table_fits_and_scrolls_into_view(tmp_path: Path) -> None:
    from engine.tui.llm_panel import cost_table  # new with the 80x24 layout

    async with _running(tmp_path, rounds=2) as (app, _pilot):
        recorder = app.sim.recorder
        assert recorder is not None
        await until(lambda: len(recorder.costs) == 5)
        box, panel = app.query_one("#llm-box"), app.query_one("#llm")
        rows = cost_table(recorder.costs, "agent", panel.size.width)
        assert all(len(row) <= panel.size.width for row in rows)

        def shown() -> list[str]:
            box.scroll_end(animate=False)
            return [line[: panel.size.width].rstrip() for line in _within(app, box.content_region)]

        # each agent's row whole, on one line, in view (after the panels' next refresh)
        await until(lambda: all(row.rstrip() in shown() for row in rows[2:]))


async def test_the_footer_says_resume_while_paused_and_pause_while_running(
    tmp_path: Path,
) -> None:
    async with _running(tmp_path, world="demo.yaml") as (app, pilot):
        await until(lambda: "space Resume" in _footer(app))
        assert "Pause" not in _footer(app)
        await pilot.press("space")
        await until(lambda: "space Pause" in _footer(app))
        assert not app.scheduler.paused
        await pilot.press("space")
        await until(lambda: "space Resume" in _footer(app))
        assert app.scheduler.paused


async def test_while_typing_the_footer_shows_the_input_lines_keys(tmp_path: Path) -> None:
    async with _running(tmp_path, world="demo.yaml") as (app, pilot):
        await until(lambda: "c Cost" in _footer(app))  # the cost order's key is documented
        keys = _footer(app)
        assert "i Type" in keys
        await pilot.press("i")
        await until(lambda: "Send" in _footer(app))
        typing = _footer(app)
        for hint in ("Send", "Earlier", "Later", "esc Keys", "^c Quit"):
            assert hint in typing
        for gone in ("Faster", "Slower", "Step", "Prompt", "q Quit", "Resume"):
            assert gone not in typing
        await pilot.press(*"say 1+1-1", "enter")  # + and - type themselves here
        assert app.scheduler.speed == 1.0
        await pilot.press("escape")
        await until(lambda: "c Cost" in _footer(app))


async def test_the_welcome_line_tells_the_c_key(tmp_path: Path) -> None:
    async with _running(tmp_path, world="demo.yaml") as (app, _pilot):

        def log() -> str:
            return "".join(line.text for line in app.query_one("#events").lines)  # type: ignore[attr-defined]

        await until(lambda: "c sorts" in " ".join(log().split()))


async def test_the_embedded_model_notice_is_shown_inside_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No server answers and none was named: ``connect`` says so on stderr before the app
    takes the terminal (hidden until it exits), and the event log says it first."""
    said = "no LLM answers at http://localhost:11434; using the embedded model"

    async def fallback(choice: LLMChoice, notice: object, *, named: object = None) -> LLMChoice:
        notice(said)  # type: ignore[operator]
        return choice

    monkeypatch.setattr(run, "settle_default", fallback)
    async with _running(tmp_path, world="demo.yaml") as (app, _pilot):

        def log() -> str:
            lines = [line.text for line in app.query_one("#events").lines]  # type: ignore[attr-defined]
            return " ".join(" ".join(lines).split())

        await until(lambda: log().startswith(said))
    assert f"mudsim: {said}" in capsys.readouterr().err  # still on stderr as before
