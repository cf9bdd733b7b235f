"""The player's own command shows once in the event log (issue 46, item 9): the line
typed and its result (``You say, "hello"``), as a MUD shows it, not the world event
the others see as well; the others' events still show, and they still hear it."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import RichLog
from tui_scenes import GatedModel, hall_app, until

from engine.tui.app import MudsimApp
from engine.tui.runner import close_app
from engine.tui.widgets import HistoryInput


def _log(app: MudsimApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.query_one("#events", RichLog).lines]


async def _send(app: MudsimApp, line: str) -> None:
    field = app.query_one("#command", HistoryInput)
    field.focus()
    field.value = line
    await field.action_submit()


async def test_the_players_speech_and_emote_show_once(tmp_path: Path) -> None:
    model = GatedModel()
    app = hall_app(tmp_path, model)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await _send(app, "say hello")
        await _send(app, "emote waves")
        await pilot.pause(0.2)
        said = [line for line in _log(app) if "hello" in line or "waves" in line]
        assert said == ["Pat> say hello", 'You say, "hello"', "Pat> emote waves", "Pat waves."]
        await pilot.press("escape", "n")  # an agent's speech is still the world's event
        await until(lambda: model.held("actor") == 2)
        model.release("actor", "say Welcome.")
        await until(lambda: any("Welcome." in line for line in _log(app)))
        welcome = [line for line in _log(app) if "Welcome." in line]
        assert len(welcome) == 1
        assert welcome[0].startswith("[The Hall] ")
        assert welcome[0].endswith('says, "Welcome."')
        await pilot.press("q", "q")
        await until(lambda: app.return_code is not None, limit=5.0)
    await close_app(app)
    heard = [memory.text for memory in app.sim.minds["ada"].tail]
    assert any('Pat says, "hello"' in text for text in heard)  # the room still heard it
    app.sim.close()
