"""Stopping the TUI (issue 14, item 5), driven by Pilot: q, Ctrl-C and Ctrl-Q say at
once what they wait for, count it down until the app exits, and a second press stops
at once with every journal whole. The model is held by the test (``GatedModel``), so
the turns and the summary in flight are real ones, on a real vault in ``tmp_path``."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from tui_scenes import GatedModel, hall_app, hold_work, status_text, until

from engine.sim.simulation import Simulation
from engine.tui.app import MudsimApp
from engine.tui.runner import close_app
from engine.tui.widgets import PromptScreen
from engine.vault.journal_reader import read_records

STOP = re.compile(r"Stopping: finishing (.+) \((\d+) s left\)\. Knowledge passes wait for the "
                  r"next run\. Press (\S+) again to stop now\.")  # fmt: skip


def _on_screen(app: MudsimApp) -> list[str]:
    """The screen's lines as the terminal shows them (what is cut off is not there)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _stop(app: MudsimApp) -> tuple[str, int, str]:
    """What the stop message waits for, the seconds it says are left, and the key."""
    shown = STOP.fullmatch(status_text(app))
    assert shown is not None, status_text(app)
    return shown[1], int(shown[2]), shown[3]


async def test_q_counts_down_the_work_in_flight_until_the_app_exits(tmp_path: Path) -> None:
    model = GatedModel()
    app = hall_app(tmp_path, model)
    async with app.run_test(size=(80, 24)) as pilot:
        await hold_work(app, model, pilot)
        assert status_text(app) == ""
        await pilot.press("q")
        await pilot.pause()
        waiting, left, key = _stop(app)
        assert (waiting, key) == ("2 turns and 1 summary", "q")
        assert 20 <= left <= 30  # the grace is 30 s (a loaded machine may show it late)
        assert "stopping" in app.sub_title
        await until(lambda: _stop(app)[1] < left)  # the panels refresh: it counts down
        assert _stop(app)[0] == "2 turns and 1 summary"
        assert "stopping" in app.sub_title
        await pilot.press("n")  # no new round once stopping
        await pilot.pause()
        assert len(model.waiting["actor"]) == 2

        model.release("actor", "say Done.")
        await until(lambda: "finishing 1 turn and 1 summary" in status_text(app))
        model.release("summarizer", "I heard Pat say hello to us, one and two.")
        await until(lambda: "finishing 1 turn and 0 summaries" in status_text(app))
        await pilot.pause(0.3)
        assert app.return_code is None  # still waiting for the last turn
        model.release("actor", "say Me too.")
        await until(lambda: app.return_code is not None)
    await close_app(app)
    said = [memory.text for mind in app.sim.minds.values() for memory in mind.tail]
    assert any("Done." in text for text in said)
    assert any("Me too." in text for text in said)
    recent = app.sim.minds["bo"].summaries.recent
    assert recent is not None
    assert recent.text == "I heard Pat say hello to us, one and two."
    app.sim.close()


def _journal_lines(vault: Path, folder: str) -> list[dict[str, object]]:
    raw = (vault / "agents" / folder / "memories.jsonl").read_bytes()
    assert raw.endswith(b"\n")  # no torn last line
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


async def test_a_second_q_stops_at_once_and_every_journal_is_whole(tmp_path: Path) -> None:
    model = GatedModel()
    app = hall_app(tmp_path, model)  # a 30 s grace: only the second press ends it soon
    async with app.run_test(size=(80, 24)) as pilot:
        await hold_work(app, model, pilot)
        counts = {mind.character.folder: mind.count for mind in app.sim.minds.values()}
        await pilot.press("q")
        await pilot.pause()
        assert status_text(app).startswith("Stopping: finishing 2 turns and 1 summary")
        started = time.monotonic()
        await pilot.press("q")
        await until(lambda: app.return_code is not None, limit=5.0)
        assert status_text(app).startswith("Stopping now: cutting short")
    await close_app(app)  # what the runner does after the app: nothing is left to wait for
    assert time.monotonic() - started < 5.0
    app.sim.close()
    # never answered: the two turns and the summary call were cut short
    assert [call.cancelled() for call in model.waiting["actor"]] == [True, True]
    assert [call.cancelled() for call in model.waiting["summarizer"]] == [True]

    vault = tmp_path / "vault"
    assert counts == {"Ada": 4, "Bo": 4, "Pat": 4}
    for folder, count in counts.items():
        lines = _journal_lines(vault, folder)
        assert [line["seq"] for line in lines] == list(range(count))
        warnings: list[str] = []
        records = read_records(vault / "agents" / folder / "memories.jsonl", warn=warnings.append)
        assert [record.seq for record in records] == list(range(count))
        assert warnings == []
        state = json.loads((vault / "agents" / folder / "memory-state.json").read_text())
        assert state["memories"] == count
        assert state["in_flight"] is False
    # the vault opens again as it was left
    warnings = []
    again = Simulation.open(vault, tmp_path / "hall.yaml", warn=warnings.append)
    try:
        assert {m.character.folder: m.count for m in again.minds.values()} == counts
        assert warnings == []
    finally:
        again.close()


async def _stop_key_test(app: MudsimApp, model: GatedModel, key: str, shown_key: str) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await hold_work(app, model, pilot)
        await pilot.press("p")  # the prompt view is up: the stop closes it
        await pilot.pause()
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(key)
        await pilot.pause(0.3)
        assert not isinstance(app.screen, PromptScreen)
        assert _stop(app)[0::2] == ("2 turns and 1 summary", shown_key)
        assert app.return_code is None  # not Textual's quit: the work in flight is waited for
        assert app.scheduler.stopping
        await pilot.press("i")  # on the input line too, the key still stops
        await pilot.press(key)
        await until(lambda: app.return_code is not None, limit=5.0)
    await close_app(app)
    app.sim.close()


async def test_ctrl_c_stops_as_q_does(tmp_path: Path) -> None:
    model = GatedModel()
    await _stop_key_test(hall_app(tmp_path, model), model, "ctrl+c", "Ctrl-C")


async def test_ctrl_q_stops_as_q_does(tmp_path: Path) -> None:
    model = GatedModel()
    await _stop_key_test(hall_app(tmp_path, model), model, "ctrl+q", "Ctrl-Q")


async def test_with_nothing_in_flight_q_exits_at_once(tmp_path: Path) -> None:
    model = GatedModel()
    app = hall_app(tmp_path, model)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await until(lambda: app.return_code is not None, limit=2.0)
        assert _stop(app)[0] == "0 turns and 0 summaries"
    await close_app(app)
    app.sim.close()


async def test_the_stop_leaves_the_knowledge_passes_for_the_next_run(tmp_path: Path) -> None:
    model = GatedModel()
    app = hall_app(tmp_path, model, knowledge=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await hold_work(app, model, pilot)
        await pilot.press("q")
        await pilot.pause()
        assert _stop(app)[0] == "2 turns and 1 summary"  # no knowledge pass is waited for
        model.release("actor", "say Done.")
        model.release("actor", "say Me too.")
        model.release("summarizer", "I heard Pat say hello to us, one and two.")
        await until(lambda: app.return_code is not None)
    await close_app(app)
    assert not model.waiting["consolidator"]  # no pass was asked for by the stop
    for agent in ("Ada", "Bo"):
        passes = tmp_path / "vault" / "agents" / agent / "knowledge" / "passes"
        assert not list(passes.glob("*")), agent  # left for the next run
    app.sim.close()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize(("key", "shown_key"), [("q", "q"), ("ctrl+c", "Ctrl-C")])
async def test_the_whole_stop_message_is_on_screen(
    tmp_path: Path, size: tuple[int, int], key: str, shown_key: str
) -> None:
    """Issue 46, item 9: at 120 columns the key that stops at once was cut off."""
    model = GatedModel()
    app = hall_app(tmp_path, model)
    async with app.run_test(size=size) as pilot:
        await hold_work(app, model, pilot)
        await pilot.press(key)
        await pilot.pause()
        status = app.query_one("#status")
        shown = [line.strip() for line in _on_screen(app)[status.region.y : status.region.bottom]]
        assert shown[0].startswith("Stopping: finishing 2 turns and 1 summary (")
        assert shown[-1].endswith(f"Press {shown_key} again to stop now.")
        assert any(f"Press {shown_key} again to stop now." in line for line in _on_screen(app))
        await pilot.press(key)
        await until(lambda: app.return_code is not None, limit=5.0)
    await close_app(app)
    app.sim.close()
