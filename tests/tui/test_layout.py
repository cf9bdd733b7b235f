"""The TUI at small sizes (issue 14, item 6), driven by Pilot: long lines wrap in the
event log and the inspector instead of being cut, the log wraps again when the
terminal is resized, and at 80x24 the key hints for space, i and q are on screen."""

from __future__ import annotations

from pathlib import Path

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import RichLog, Static
from tui_scenes import GatedModel, hall_app, until

from engine.tui.app import HistoryInput, MudsimApp
from engine.tui.runner import close_app

TOKEN = "https://example.org/" + "a-very-long-path-segment/" * 4
"""One word wider than the log: it has to be folded, there is no space to break at."""
LONG_SAY = (
    "say I have walked all the way from the harbour along the coast road, and the map "
    f"I followed is at {TOKEN} if anyone wants to see it."
)
AGENT_SAY = (
    "say Good evening, traveller; the kettle is on the hob, the chairs by the fire are warm, "
    "and my notes are at file:///home/ada/" + "orchard-records-by-season/" * 4
)
"""The agents' answer: long too, and sharing no run of words with what they heard
(a reply that repeats its prompt is asked again)."""


def _squeezed(text: str) -> str:
    """``text`` without whitespace: what wrapping may change is only where lines break."""
    return "".join(text.split())


def _log_lines(app: MudsimApp) -> tuple[list[str], int]:
    log = app.query_one("#events", RichLog)
    assert log.max_scroll_x == 0  # nothing hidden to the right
    return [strip.text for strip in log.lines], log.scrollable_content_region.width


def _widget_lines(widget: Widget) -> list[str]:
    return [strip.text for strip in widget.render_lines(Region(0, 0, *widget.size))]


async def _type(app: MudsimApp, line: str) -> None:
    field = app.query_one("#command", HistoryInput)
    field.focus()
    field.value = line


async def test_long_lines_wrap_in_the_event_log_and_the_inspector(tmp_path: Path) -> None:
    model = GatedModel()
    app = hall_app(tmp_path, model)
    async with app.run_test(size=(80, 24)) as pilot:
        await _type(app, LONG_SAY)
        await pilot.press("enter", "escape")
        await pilot.press("n")  # both agents answer with the same long line
        await until(lambda: model.held("actor") == 2)
        model.release("actor", AGENT_SAY)
        model.release("actor", AGENT_SAY)
        await until(lambda: app.scheduler.thinkers["ada"].last_command == AGENT_SAY)
        await pilot.pause(0.7)  # the log's next write and the inspector's next refresh

        lines, width = _log_lines(app)
        assert width < len(LONG_SAY)
        assert all(len(line.rstrip()) <= width for line in lines)
        shown = _squeezed("".join(lines))
        assert _squeezed(f"Pat> {LONG_SAY}") in shown
        assert _squeezed(f'Ada says, "{AGENT_SAY.removeprefix("say ")}"') in shown

        inspector = app.query_one("#inspector")
        body = app.query_one("#inspector-body", Static)
        assert inspector.max_scroll_x == 0
        assert body.size.width <= inspector.scrollable_content_region.width
        lines = _widget_lines(body)
        assert all(len(line.rstrip()) <= body.size.width for line in lines)
        assert _squeezed(f"Last command: {AGENT_SAY}") in _squeezed("".join(lines))
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_log_wraps_again_when_the_terminal_shrinks(tmp_path: Path) -> None:
    app = hall_app(tmp_path, GatedModel())
    async with app.run_test(size=(120, 40)) as pilot:
        await _type(app, LONG_SAY)
        await pilot.press("enter", "escape")
        await pilot.pause(0.3)
        wide, wide_width = _log_lines(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.3)
        narrow, narrow_width = _log_lines(app)
        assert narrow_width < wide_width
        assert len(narrow) > len(wide)
        assert all(len(line.rstrip()) <= narrow_width for line in narrow)
        assert _squeezed(f"Pat> {LONG_SAY}") in _squeezed("".join(narrow))
        await pilot.press("q")
    await close_app(app)
    app.sim.close()


async def test_the_key_hints_for_space_i_and_q_are_on_screen_at_80x24(tmp_path: Path) -> None:
    app = hall_app(tmp_path, GatedModel())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        hints = {str(getattr(key, "key", "")): key for key in app.query("Footer FooterKey")}
        for key in ("space", "i", "q"):
            hint = hints[key]
            region = hint.region
            assert region.y == 23  # the bottom line
            assert region.width > 0
            assert region.right <= 80  # all of it, not cut at the edge
            # and nothing covers it: each of its cells shows this hint
            assert all(app.get_widget_at(x, 23)[0] is hint for x in range(region.x, region.right))
        await pilot.press("q")
    await close_app(app)
    app.sim.close()
