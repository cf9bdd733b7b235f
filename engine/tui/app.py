"""``mudsim run WORLD``: a Textual app to watch the agents and step in as a player.

The engine runs in the app's own event loop: the scheduler is driven by the keys
(pause, step, speed) and its listeners feed the event log. Events are buffered and
written ten times a second, so a busy world never slows the UI down; the world tree,
the inspector and the LLM panel refresh twice a second. The log and the inspector wrap
long lines (the log re-wraps what it holds when its width changes).

Stopping: q, Ctrl-C, Ctrl-Q (and the command palette's Quit) all stop the same way.
The first press stops dispatching and waits (a bounded time) for the turns and summary
calls in flight, with a status line that counts them down until the app exits; a
second press cuts them short at once. Either way the runner then saves the vault.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, Input, RichLog, Static, TabbedContent, Tree
from textual.worker import Worker, WorkerState

from engine.agents.memory import MemoryStream
from engine.agents.thinker import Turn, describe
from engine.llm.dispatcher import Dispatcher
from engine.sim.run_ending import SHUTDOWN_GRACE
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation
from engine.tui.keys import APP_BINDINGS, key_state, welcome
from engine.tui.llm_panel import llm_panel
from engine.tui.memory_tabs import MemoryTabs
from engine.tui.prompt_view import prompt_view
from engine.tui.render import (
    COST_ORDERS,
    event_line,
    inspector_text,
    memory_hold,
    player_lines,
    rooms_with_occupants,
    stop_message,
    turn_line,
)
from engine.tui.widgets import HistoryInput, PromptScreen
from engine.vault.journal import EVERY_100_MS
from engine.world.events import Event
from engine.world.model import Character

HISTORY_KEPT = 2_000
"""Event lines kept for re-filtering the log."""
FILTERS = ("all", "room", "agent")

log = logging.getLogger("mudsim")


class MudsimApp(App[None]):
    TITLE = "mudsim"
    AUTO_FOCUS = "#world"  # keys drive the simulation; i moves to the input line
    CSS_PATH = "app.tcss"
    BINDINGS: ClassVar[list[BindingType]] = APP_BINDINGS

    def __init__(
        self,
        sim: Simulation,
        scheduler: Scheduler,
        dispatcher: Dispatcher | None,
        models: dict[str, str],
        *,
        player: Character | None,
        turns: int | None = None,
        start_paused: bool = False,
        grace: float = SHUTDOWN_GRACE,
        notices: Sequence[str] = (),
    ) -> None:
        """``notices``: what the run said before the app took the terminal (the embedded
        model used instead of a server): the event log's first lines."""
        super().__init__()
        self.notices = list(notices)
        self.sim, self.scheduler, self.dispatcher, self.models = sim, scheduler, dispatcher, models
        self.player, self.turns, self.start_paused = player, turns, start_paused
        agents = [c.id for c in sim.world.characters.values() if c.type == "agent"]
        self.selected: str | None = agents[0] if agents else None
        self.filter = "all"
        self._pending: list[tuple[Text, str, str | None]] = []
        self._history: deque[tuple[Text, str, str | None]] = deque(maxlen=HISTORY_KEPT)
        self._tree_shape: list[tuple[str, list[tuple[str, str]]]] = []
        self.engine_error: str | None = None
        self._outer_warn = sim.warn
        """Where the simulation's warnings went before the app took the terminal."""
        self._fsync_failures_seen = EVERY_100_MS.failures
        self.grace = grace
        """Seconds the first stop gives the turns and summary calls in flight."""
        self.stop_presses = 0
        """q / Ctrl-C presses so far: 1 stops gracefully, 2 at once."""
        self._stop_key = "q"
        self.clock = time.monotonic
        """The stop's countdown reads this clock (a snapshot test stops it)."""
        self.stop_deadline = 0.0
        """When the stop's wait ends (``time.monotonic``), from the first press."""
        self.wound_down = False
        self._wrapped_at = 0
        """The width the event log's lines were wrapped at."""
        self.cost_order = 0
        """Which of ``COST_ORDERS`` the LLM panel's cost lines are sorted by."""
        self.memory_tabs = MemoryTabs(sim)
        self._commanding: str | None = None
        """The player whose typed command runs now: its own events are not shown, its
        result line says them (``You say, "hello"``, once, as a MUD shows it)."""

    # -- layout -------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Tree("World", id="world")
                with VerticalScroll(id="llm-box"):
                    yield Static(id="llm")
            # min_width=1: lines wrap at the log's own width (RichLog's default renders
            # at 78 columns at least, cutting lines off in a narrower log)
            yield RichLog(id="events", wrap=True, markup=False, max_lines=HISTORY_KEPT, min_width=1)
            with TabbedContent("Agent", "Knowledge", "Handbook", id="inspector"):
                with VerticalScroll(id="agent-tab"):
                    yield Static(id="inspector-body")
                with VerticalScroll(id="knowledge-tab"):
                    yield Static(id="knowledge-body")
                with VerticalScroll(id="handbook-tab"):
                    yield Static(id="handbook-body")
        yield Static(id="status")
        placeholder = (
            f"{self.player.name}> type a command, Enter to send"
            if self.player
            else "(no player in this world)"
        )
        yield HistoryInput(id="command", placeholder=placeholder, disabled=self.player is None)
        yield Footer(show_command_palette=False, compact=True)  # every key at 80 columns

    def on_mount(self) -> None:
        self.sim.warn = self._warned  # stderr would scramble the screen
        self.query_one("#world", Tree).show_root = False
        self.scheduler.listen(self._heard)
        if self.start_paused:
            self.scheduler.pause()
        self.query_one("#llm-box").border_title = "LLM"
        for notice in self.notices:  # said before the app took the terminal: again here
            self._note(notice)
        agents = sum(1 for c in self.sim.world.characters.values() if c.type == "agent")
        self._note(welcome(self.sim.world.name, agents, self.player.name if self.player else None))
        self.refresh_bindings()  # space says Resume when it starts paused
        self._refresh_panels()
        self._tick()
        self.set_interval(0.1, self._tick)
        self.set_interval(0.5, self._refresh_panels)
        self.run_worker(self._run_engine(), name="engine", exit_on_error=False)

    def on_unmount(self) -> None:
        self.sim.warn = self._outer_warn

    def _warned(self, message: str) -> None:
        self._pending.append((Text(f"Warning: {message}", style="bold red"), "", None))

    def _check_durability(self) -> None:
        """A failed background fsync is shown once per new failure (the run log has it)."""
        failures = EVERY_100_MS.failures
        if failures > self._fsync_failures_seen:
            self._fsync_failures_seen = failures
            self._warned(f"a journal could not be fsynced: {EVERY_100_MS.error}")

    async def _run_engine(self) -> None:
        await self.scheduler.run(self.turns)
        if not self.scheduler.stopping:
            self._note(f"Every agent has taken its {self.turns} turns. Press q to quit.")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is not WorkerState.ERROR:
            return
        error = event.worker.error
        log.error("the TUI's %s worker failed", event.worker.name, exc_info=error)
        if event.worker.name == "engine":
            self.engine_error = f"{type(error).__name__}: {error}"
            self._note(f"The engine stopped: {self.engine_error}. Press q to save and quit.")
        else:
            self._note(f"That failed: {describe(error) if error else 'unknown error'}")

    # -- what happens -------------------------------------------------------------------
    def _heard(self, happening: Happening) -> None:
        world = self.sim.world
        if isinstance(happening, Event):
            if happening.actor_id is not None and happening.actor_id == self._commanding:
                return  # the player's own command: its result line says it
            room = world.rooms.get(happening.room_id)
            line = event_line(happening, room.name if room else happening.room_id)
            self._pending.append((line, happening.room_id, happening.actor_id))
        elif isinstance(happening, Turn):
            found = world.find_characters(happening.agent)
            where = found[0].location if found else ""
            room = world.rooms.get(where)
            text = turn_line(happening, room.name if room else where)
            if text is not None:
                self._pending.append((text, where, found[0].id if found else None))

    def _note(self, text: str) -> None:
        self._pending.append((Text(text, style="bold yellow"), "", None))

    def _shown(self, room_id: str, actor: str | None) -> bool:
        if self.filter == "all" or self.selected is None or not room_id:
            return True
        if self.filter == "agent":
            return actor == self.selected
        return room_id == self.sim.world.characters[self.selected].location

    def _tick(self) -> None:
        """Ten times a second: new lines to the log, and the stop message's counts."""
        if not self.is_running:  # shutting down: the widgets may be gone already
            return
        self._write_pending()
        self._show_stopping()

    def _write_pending(self) -> None:
        log = self.query_one("#events", RichLog)
        width = log.scrollable_content_region.width
        if width != self._wrapped_at and log.lines:  # wrapped for another width
            self._rewrite_log()
        self._wrapped_at = width
        if not self._pending:
            return
        for entry in self._pending:
            self._history.append(entry)
            if self._shown(entry[1], entry[2]):
                log.write(entry[0])
        self._pending.clear()

    def _refresh_panels(self) -> None:
        if not self.is_running:  # shutting down: the widgets may be gone already
            return
        self._check_durability()
        self._refresh_tree()
        if self.selected is not None:
            mind = self.sim.minds[self.selected]
            thinker = self.scheduler.thinkers.get(self.selected)
            waiting = self.dispatcher is not None and self.dispatcher.queued > 0
            self.query_one("#inspector-body", Static).update(
                Text(inspector_text(thinker, mind, waiting))
            )
            self._refresh_memory_tab(mind, self.query_one("#inspector", TabbedContent).active)
        recorder = self.sim.recorder
        costs = recorder.costs if recorder is not None else {}
        shown = self.query_one("#llm", Static)
        panel = llm_panel(self.dispatcher, self.models, costs, COST_ORDERS[self.cost_order],
                          memory_hold(self.sim), shown.size.width or None)  # fmt: skip
        shown.update(Text(panel))
        if self.stop_presses:
            state = "stopping"
        elif self.scheduler.paused:
            state = "paused"
        else:
            state = f"running x{self.scheduler.speed:g}"
        self.sub_title = f"{self.sim.world.name} — {state} — filter: {self.filter}"

    def _refresh_memory_tab(self, mind: MemoryStream, active: str) -> None:
        """The Knowledge or Handbook tab, when it shows (they read files)."""
        if active == "tab-2":
            text, body = self.memory_tabs.knowledge(mind), "#knowledge-body"
        elif active == "tab-3":
            text, body = self.memory_tabs.handbook(mind), "#handbook-body"
        else:
            return
        if text is not None:
            self.query_one(body, Static).update(Text(text))

    def _refresh_tree(self) -> None:
        shape = rooms_with_occupants(self.sim.world)
        if shape == self._tree_shape:
            return
        self._tree_shape = shape
        tree = self.query_one("#world", Tree)
        tree.clear()
        for room, occupants in shape:
            node = tree.root.add(room, expand=True)
            for character_id, label in occupants:
                node.add_leaf(label, data=character_id)

    @on(Tree.NodeSelected, "#world")
    def _select(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data is not None:
            self.selected = event.node.data
            self._refresh_panels()

    @on(Input.Submitted, "#command")
    def _command(self, event: Input.Submitted) -> None:
        line = event.value.strip()
        field = self.query_one("#command", HistoryInput)
        field.value = ""
        if not line or self.player is None:
            return
        field.remember(line)
        self._commanding = self.player.id
        try:
            result = self.sim.execute(self.player, line)
        except Exception as exc:  # a command's bug is one line, the app stays
            log.error("%s's command %r failed", self.player.name, line, exc_info=exc)
            shown, ok = f"That went wrong: {describe(exc)}", False
        else:
            shown, ok = result.shown, result.ok
        finally:
            self._commanding = None
        for text in player_lines(self.player.name, line, shown, ok):
            self._pending.append((text, self.player.location, self.player.id))
        self._write_pending()

    # -- keys -------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Space pauses (or resumes) everywhere but on the input line, where it is a
        space; the footer shows the keys that work now (``keys.key_state``); once the
        app is stopping, nothing starts new turns (shown dimmed)."""
        typing = isinstance(self.focused, Input)
        return key_state(action, parameters, typing=typing, paused=self.scheduler.paused,
                         stopping=self.stop_presses > 0)  # fmt: skip

    def action_toggle_pause(self) -> None:
        if self.scheduler.paused:
            self.scheduler.resume()
        else:
            self.scheduler.pause()
        self._refresh_panels()
        self.refresh_bindings()  # space Pause <-> space Resume

    def action_pause(self) -> None:
        if not self.scheduler.paused:
            self.action_toggle_pause()

    def action_resume(self) -> None:
        if self.scheduler.paused:
            self.action_toggle_pause()

    async def action_quit_typing(self) -> None:
        """Ctrl-C on the input line (the footer shows it there): as everywhere."""
        await self.action_quit("Ctrl-C")

    def action_step(self) -> None:
        if not self.scheduler.paused:
            self._note("Pause first (space), then n runs one turn for every agent.")
            return
        self.run_worker(self.scheduler.step(), group="step", exit_on_error=False)

    def action_faster(self) -> None:
        self.scheduler.speed = min(self.scheduler.speed * 2, 64.0)
        self._refresh_panels()

    def action_slower(self) -> None:
        self.scheduler.speed = max(self.scheduler.speed / 2, 1 / 16)
        self._refresh_panels()

    def action_cycle_cost(self) -> None:
        """The LLM panel's cost per agent, sorted by the next of ``COST_ORDERS``."""
        self.cost_order = (self.cost_order + 1) % len(COST_ORDERS)
        self._refresh_panels()

    def action_cycle_filter(self) -> None:
        self.filter = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        self._rewrite_log()
        self._refresh_panels()

    def _rewrite_log(self) -> None:
        """The log again from its history: for a new filter, or wrapped at a new width."""
        log = self.query_one("#events", RichLog)
        log.clear()
        for text, room_id, actor in self._history:
            if self._shown(room_id, actor):
                log.write(text)

    def action_prompt(self) -> None:
        if self.selected is None:
            return
        character = self.sim.world.characters[self.selected]
        thinker = self.scheduler.thinkers.get(self.selected)
        last = thinker.last_prompt if thinker is not None else None
        self.push_screen(PromptScreen(*prompt_view(self.sim, character, last)))

    def action_focus_input(self) -> None:
        self.query_one("#command", HistoryInput).focus()

    def action_leave_input(self) -> None:
        self.set_focus(None)

    # -- stopping -----------------------------------------------------------------------
    async def action_quit(self, key: str = "q") -> None:
        """q, Ctrl-C, Ctrl-Q, the palette's Quit: the first press lets the turns and summary
        calls in flight finish (at most ``grace`` s), the second cuts them short. The
        action returns at once; the waiting is a worker, so the screen stays live."""
        self.stop_presses += 1
        if self.stop_presses == 1:
            self._stop_key = key
            self.stop_deadline = self.clock() + self.grace
            self.scheduler.stop()
            self.sim.leave_memory_work()  # knowledge passes and dreams: the next run's
            work = self._stop_within(self.grace)
        elif self.stop_presses == 2:  # the first press's worker ends at once
            self.scheduler.abort()
            self.sim.cut_memory_short()
            work = None
        else:
            return
        if isinstance(self.screen, PromptScreen):
            self.screen.dismiss()  # the stop message is on the main screen
        self._show_stopping()
        self._refresh_panels()
        self.refresh_bindings()
        if work is not None:
            self.run_worker(work, group="stop", exit_on_error=False)

    def in_flight(self) -> tuple[int, int, int]:
        """(turns, summary calls, knowledge passes) in progress now."""
        turns = sum(1 for thinker in self.scheduler.thinkers.values() if thinker.thinking)
        return turns, self.sim.compactor.calls_in_flight, len(self.sim.knowledge.workers)

    def _show_stopping(self) -> None:
        if not self.stop_presses:
            return
        turns, summaries, _ = self.in_flight()
        left = math.ceil(max(0.0, self.stop_deadline - self.clock()))  # 30 at the press
        text = stop_message(
            turns, summaries, left=left, again=self._stop_key, at_once=self.stop_presses > 1
        )
        status = self.query_one("#status", Static)
        status.update(Text(text, style="bold yellow"))
        status.display = True

    async def _stop_within(self, grace: float) -> None:
        """Turns, compactions and knowledge passes in flight get ``grace`` s (at once), then the app
        exits; the runner saves. A failure here is logged and the app exits all the same."""
        try:
            self.wound_down = True  # the runner does not wind down again
            await asyncio.gather(
                self.scheduler.finish(grace), self.sim.wind_down_memory(grace, passes=False)
            )
        except Exception as exc:
            log.error("stopping the run failed", exc_info=exc)
        self.exit()
