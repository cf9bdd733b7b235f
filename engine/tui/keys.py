"""The terminal UI's keys, and which of them the footer shows in each state.

Two states of the keyboard: the keys drive the simulation (the footer shows every
key, ``space Resume`` while paused and ``space Pause`` while running), or the input
line has them (``i``): then the footer shows what works there (Enter sends, up and
down recall, Escape gives the keys back, Ctrl-C stops) and hides the rest, which
type themselves.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

APP_BINDINGS: list[BindingType] = [
    # priority: before the tree's own space; one of the two shows, as the state says
    Binding("space", "pause", "Pause", priority=True),
    Binding("space", "resume", "Resume", priority=True),
    Binding("n", "step", "Step"),
    Binding("plus,equals_sign", "faster", "Faster"),
    Binding("minus", "slower", "Slower"),
    Binding("p", "prompt", "Prompt"),
    Binding("f", "cycle_filter", "Filter"),
    Binding("c", "cycle_cost", "Cost"),
    Binding("i", "focus_input", "Type"),
    Binding("escape", "leave_input", "Keys", show=False),
    Binding("q", "quit", "Quit"),
    # Textual's own: Ctrl-C only says "press ctrl+q to quit", Ctrl-Q quits at once.
    # Here both stop as q does (everywhere, the input line and the prompt view too);
    # the first is the same, shown while typing (q types a q there).
    Binding("ctrl+c", "quit_typing", "Quit", priority=True),
    Binding("ctrl+c", "quit('Ctrl-C')", show=False, priority=True),
    Binding("ctrl+q", "quit('Ctrl-Q')", show=False, priority=True),
]
INPUT_BINDINGS: list[BindingType] = [
    Binding("enter", "submit", "Send"),
    Binding("up", "older", "Earlier"),
    Binding("down", "newer", "Later"),
    Binding("escape", "app.leave_input", "Keys"),
]
KEYS_ONLY = frozenset(
    {"pause", "resume", "step", "faster", "slower", "prompt", "cycle_filter", "cycle_cost",
     "focus_input"}
)  # fmt: skip
"""Actions of the keys that type themselves on the input line: hidden while typing."""
HELD_WHILE_STOPPING = frozenset({"pause", "resume", "toggle_pause", "step"})
"""Actions that start or hold back turns: off (dimmed) once the app is stopping."""


def key_state(
    action: str, parameters: tuple[object, ...], *, typing: bool, paused: bool, stopping: bool
) -> bool | None:
    """For ``App.check_action``: True (works, shown), None (shown dimmed, does
    nothing) or False (hidden, and the key goes on to the widget: a space on the input
    line is a space)."""
    if action == "quit_typing":
        return typing
    if typing and (action in KEYS_ONLY or (action == "quit" and not parameters)):
        return False
    if (action == "pause" and paused) or (action == "resume" and not paused):
        return False
    if stopping and action in HELD_WHILE_STOPPING:
        return None
    return True


def welcome(world: str, agents: int, player: str | None) -> str:
    """The event log's first line (after any start-up notice): every key."""
    you = f"i types as {player} (Esc gives the keys back)" if player else "no player to type as"
    return (
        f"{world}: {agents} agents. space pauses and resumes, n steps one round while paused, "
        f"+/- change speed, p shows the selected agent's prompt, f filters the log, c sorts "
        f"the LLM panel's cost by agent, tokens, LLM seconds or calls, {you}, q (or Ctrl-C) "
        f"saves and quits, twice stops at once."
    )
