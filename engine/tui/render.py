"""What the terminal UI shows, as plain functions of engine state (no widgets here).

Events become coloured Rich ``Text`` by kind; the world becomes (room, occupants)
rows; an agent becomes its inspector text; the cost per agent becomes the LLM
panel's cost lines (``llm_panel`` has the rest of that panel); the
work still in flight while the app stops becomes its stop message; timestamps read
as people write them (``readable_time``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.text import Text

from engine.agents.memory import MemoryStream
from engine.agents.thinker import Thinker, Turn
from engine.commands.knowledge import entry_lines
from engine.memory.knowledge import Entry
from engine.sim.recorder import Cost
from engine.vault.handbook_store import HandbookState
from engine.vault.knowledge_store import PassRecord
from engine.world.events import Event, EventKind
from engine.world.world import World

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation

KIND_STYLES: Mapping[EventKind, str] = {
    EventKind.SPEECH: "bold cyan",
    EventKind.EMOTE: "magenta",
    EventKind.MOVEMENT: "green",
    EventKind.ACTION: "white",
    EventKind.BUILDING: "yellow",
    EventKind.AMBIENT: "dim italic",
}
FAILURE_STYLE = "bold red"
PLAYER_STYLE = "bold white"


def _labelled(room: str, text: str, style: str) -> Text:
    line = Text(f"[{room}] ", style="dim")
    line.append(" / ".join(part for part in text.splitlines() if part.strip()), style=style)
    return line


def event_line(event: Event, room: str) -> Text:
    return _labelled(room, event.text, KIND_STYLES.get(event.kind, "white"))


def turn_line(turn: Turn, room: str) -> Text | None:
    """A line for a turn the room did not see (a skip, or a failed command)."""
    if turn.error is not None:
        return _labelled(room, f"{turn.agent}'s turn was skipped: {turn.error}", FAILURE_STYLE)
    if turn.result is not None and not turn.result.ok:
        return _labelled(
            room, f'{turn.agent} tried "{turn.command}": {turn.result.text}', FAILURE_STYLE
        )
    return None


def player_lines(name: str, command: str, shown: str, ok: bool) -> list[Text]:
    lines = [Text(f"{name}> {command}", style=PLAYER_STYLE)]
    lines += [Text(part, style="" if ok else FAILURE_STYLE) for part in shown.splitlines()]
    return lines


def rooms_with_occupants(world: World) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(room name, [(character id, "Name [type]")...])...] in world order."""
    return [
        (room.name, [(c.id, f"{c.name} [{c.type}]") for c in world.characters_in(room.id)])
        for room in world.rooms.values()
    ]


STAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?")
"""An ISO 8601 timestamp: wall-clock UTC (``2026-12-07T06:07:00.322421Z``) or the world
clock's reading (``2026-01-01T09:00``)."""


def readable_time(stamp: str) -> str:
    """``2026-12-07T06:07:00.322421Z`` -> ``2026-12-07 06:07 UTC`` (a moment with a zone:
    in UTC); the world clock's ``2026-01-01T09:00`` (no zone) -> ``2026-01-01 09:00``;
    anything else as it is."""
    try:
        moment = datetime.fromisoformat(stamp.strip())
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def readable_times(text: str) -> str:
    """``text`` with every timestamp in it made readable (``readable_time``)."""
    return STAMP.sub(lambda found: readable_time(found[0]), text)


def inspector_text(thinker: Thinker | None, mind: MemoryStream, waiting: bool) -> str:
    """The agent inspector: what it is doing, its last command, memory and summaries."""
    character = mind.character
    if thinker is None:
        state = "a player (no thinker)"
    elif thinker.thinking:
        state = "waiting for the LLM" if waiting else "thinking"
    else:
        state = "idle"
    lines = [f"{character.name} — {state}"]
    if thinker is not None:
        lines.append(f"Last command: {thinker.last_command or '-'}")
        if thinker.last_error:
            lines.append(f"Last error: {thinker.last_error}")
        lines.append(f"Turns: {thinker.turns} ({thinker.skipped} skipped)")
    lines += ["", readable_times(mind.status().render()), ""]
    summaries = mind.summaries
    lines += [
        "Short-term summary:",
        summaries.recent.text if summaries.recent else "(none yet)",
        "",
    ]
    lines += ["Long-term summary:", summaries.longterm.text if summaries.longterm else "(none yet)"]
    if thinker is not None:
        lines += [
            "",
            "Last reply (raw):",
            thinker.last_reply if thinker.last_reply is not None else "-",
        ]
        lines += ["", "Press p for the exact last prompt."]
    return "\n".join(lines)


COST_ORDERS: tuple[str, ...] = ("agent", "tokens", "LLM s", "calls")
"""What the LLM panel's cost lines are sorted by (``c`` goes to the next)."""


def cost_lines(costs: Mapping[str, Cost], order: str, limit: int = 4) -> list[str]:
    """Each agent's cost in this run (tokens in+out, LLM seconds, calls), sorted by
    ``order`` (names A-Z, the rest largest first), the first ``limit`` of them."""
    if not costs:
        return []
    keys: dict[str, Callable[[tuple[str, Cost]], Any]] = {
        "agent": lambda item: item[0].lower(),
        "tokens": lambda item: -(item[1].tokens_in + item[1].tokens_out),
        "LLM s": lambda item: -item[1].llm_s,
        "calls": lambda item: -sum(item[1].calls.values()),
    }
    rows = sorted(costs.items(), key=keys.get(order, keys["agent"]))
    lines = [f"Cost by {order} (c sorts):"]
    for name, cost in rows[:limit]:
        money = f" {cost.money:.4f}" if cost.money else ""
        lines.append(f" {name[:10]:<10} {cost.tokens_in}+{cost.tokens_out} tok, "
                     f"{cost.llm_s:.1f} s, {sum(cost.calls.values())} calls{money}")  # fmt: skip
    if len(rows) > limit:
        lines.append(f" ... and {len(rows) - limit} more (mudsim cost)")
    return lines


@dataclass(frozen=True)
class MemoryHold:
    """Back-pressure as the LLM panel shows it (``engine.sim.memory_gate``)."""

    waiting: int
    """Turns waiting for memory now."""
    behind: Sequence[str]
    """Who holds them: characters whose memory is too far behind."""
    turns: int
    """Turns held at the gate in all (the vault's ``held_for_memory``)."""
    seconds: float
    queued_turns: int = 0
    """Turns whose calls queued behind urgent compactions in all (``held_for_memory``)."""
    queued_seconds: float = 0.0
    summaries: str | None = None
    """Why summaries are made extractively now (the summarizer failing), if they are."""


def memory_hold(sim: Simulation) -> MemoryHold:
    """What the simulation's memory gate holds now, and what memory held in all."""
    gate = sim.memory_gate
    minds = sim.minds.values()
    return MemoryHold(gate.waiting, [m.character.name for m in gate.lagging()],
                      sum(m.held_turns for m in minds), sum(m.held_seconds for m in minds),
                      sum(m.queued_turns for m in minds),
                      sum(m.queued_seconds for m in minds),
                      sim.compactor.health.describe())  # fmt: skip


def memory_hold_lines(hold: MemoryHold | None) -> list[str]:
    """Nothing while memory keeps up; else what waits, for whom, and so far (held at the
    gate, then queued behind urgent compactions)."""
    if hold is None:
        return []
    lines = [f"Memory: {hold.summaries}"] if hold.summaries else []
    if not (hold.waiting or hold.turns or hold.behind or hold.queued_turns):
        return lines
    if hold.waiting or hold.behind:
        who = ", ".join(hold.behind) or "-"
        lines.append(f"Held for memory: {counted(hold.waiting, 'turn', 'turns')} (behind: {who})")
    line = f"Memory holds: {counted(hold.turns, 'turn', 'turns')}, {hold.seconds:.1f} s"
    if hold.queued_turns:
        line += (f"; queued: {counted(hold.queued_turns, 'turn', 'turns')}, "
                 f"{hold.queued_seconds:.1f} s")  # fmt: skip
    lines.append(line)
    return lines


def counted(number: int, one: str, many: str) -> str:
    """``1 turn``, ``0 turns``, ``2 summaries``."""
    return f"{number} {one if number == 1 else many}"


def stop_message(
    turns: int, summaries: int, *, left: float, again: str = "q", at_once: bool = False
) -> str:
    """What the app says while it stops: the turns and summaries it is waiting for, the
    seconds left of that wait (``left``), that knowledge passes are left for the next
    run, and how to stop at once (``again``: the key that began the stop). Two lines,
    each under 78 columns: the whole of it shows at 80 columns."""
    work = f"{counted(turns, 'turn', 'turns')} and {counted(summaries, 'summary', 'summaries')}"
    if at_once:
        return f"Stopping now: cutting short {work}..."
    # two short lines: each fits an 80-column status line whole (the key hint too)
    return (f"Stopping: finishing {work} ({left:.0f} s left).\n"
            f"Knowledge passes wait for the next run. Press {again} again to stop now.")  # fmt: skip


def knowledge_text(name: str, bank: Sequence[Entry] | str, last: PassRecord | None,
                   applied: str) -> str:  # fmt: skip
    """The Knowledge tab: the bank's entries (``bank`` is the error when it did not
    read), then the last pass: when, what it found, and the operations it applied
    (``applied``: that part of its record)."""
    lines = [f"{name}'s knowledge"]
    if isinstance(bank, str):
        lines.append(f"The bank does not read: {bank}")
    elif not bank:
        lines.append("The bank is empty: it fills at the end of a run and on @consolidate.")
    else:
        lines.append(counted(len(bank), "entry", "entries") + ", oldest first:")
        lines += entry_lines(list(bank))
    lines.append("")
    if last is None:
        lines.append("No knowledge pass yet.")
        return "\n".join(lines)
    lines.append(
        f"Last pass {last.pass_id}: {last.status}, ended {readable_time(last.finished.sim)} "
        f"world time, {counted(last.candidates, 'candidate', 'candidates')}"
        + (f", tier {last.tier}" if last.tier else "")
    )
    if last.fallback:
        lines.append(f"Fallback: {last.fallback}")
    if last.error:
        lines.append(f"Error: {last.error}")
    if applied.strip():
        lines += ["Operations:", applied.strip()]
    return "\n".join(lines)


def handbook_text(name: str, summary: str | None, skills: Sequence[str],
                  state: HandbookState | None, problem: str | None = None) -> str:  # fmt: skip
    """The Handbook tab: how memory_summary.md was last written, the file itself, and the
    skills; or why it cannot be shown (``problem``)."""
    lines = [f"{name}'s handbook"]
    if problem is not None:
        lines.append(f"The handbook does not read: {problem}")
    elif summary is None:
        lines.append("No handbook yet: it is written after a knowledge pass that learned "
                     "something (at the end of a run, on @consolidate).")  # fmt: skip
    else:
        if state is not None:
            by = "the model" if state.method == "llm" else "the rules"
            lines.append(f"Written by {by} at {readable_time(state.updated.sim)} world time"
                         + (f" ({state.fallback})" if state.fallback else ""))  # fmt: skip
        lines += ["", summary.strip()]
        if skills:
            lines += ["", "Skills: " + ", ".join(skills)]
    return "\n".join(lines)
