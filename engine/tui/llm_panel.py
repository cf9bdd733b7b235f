"""The LLM panel's text, a plain function of the dispatcher (no widgets here): which
backend and model run (``embedded SmolLM2-135M``, ``fake (scripted)``,
``http://host:11434 qwen3:4b``), the queue, the calls, and the cost per agent.

The panel is narrow (18 columns at 80x24), so its lines are short; the cost per
agent is a small table there (``width``), and the one-line form where there is room.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.llm.backend_label import backend_label
from engine.llm.dispatcher import Dispatcher
from engine.sim.recorder import Cost
from engine.tui.render import MemoryHold, cost_lines, memory_hold_lines

WIDE = 40
"""From this many columns the cost lines are one line each (``cost_lines``)."""
COST_ROWS = 4


def llm_panel(dispatcher: Dispatcher | None, models: Mapping[str, str],
              costs: Mapping[str, Cost] | None = None, order: str = "agent",
              hold: MemoryHold | None = None, width: int | None = None) -> str:  # fmt: skip
    """``models``: each agent's model (name -> model); ``width``: the panel's columns
    (None: as wide as it needs)."""
    if dispatcher is None:
        return "none"
    m = dispatcher.metrics
    queued = [f"{p.name.lower()} {n}" for p, n in dispatcher.queued_by_priority().items() if n]
    rate = m.tokens_per_second
    slots = sum(e.slots for e in dispatcher.endpoints)
    lines = [
        backend_label([e.name for e in dispatcher.endpoints], models.values()),
        f"Queue: {', '.join(queued) or 'empty'}",
        f"In flight: {m.in_flight}/{slots}",
        f"Calls: {m.calls}" + (f", {m.failures} failed" if m.failures else ""),
        f"Tokens/s: {'-' if rate is None else f'{rate:.1f}'}",
        f"p50 {_secs(m.p50)}, p95 {_secs(m.p95)}",
    ]
    if len(dispatcher.endpoints) > 1:
        lines += [f"{e.name} ({e.metrics.in_flight}/{e.slots})" for e in dispatcher.endpoints]
    if m.last_error:
        lines.append(f"Last error: {m.last_error}")
    lines += memory_hold_lines(hold)
    if width is None or width >= WIDE:
        lines += cost_lines(costs or {}, order, COST_ROWS)
    else:
        lines += cost_table(costs or {}, order, width, COST_ROWS)
    return "\n".join(lines)


def cost_table(costs: Mapping[str, Cost], order: str, width: int, limit: int = COST_ROWS
               ) -> list[str]:  # fmt: skip
    """``cost_lines`` as a table that fits ``width`` columns (at least 18): the agent,
    tokens in and out, LLM seconds, calls."""
    wide = cost_lines(costs, order, limit)
    if not wide:
        return []
    rows = sorted(costs.items(), key=lambda item: _rank(item, order))[:limit]
    name_width = max(5, width - 14)
    lines = [f"Cost by {order}:", f"{'':<{name_width}}{'tok':>5}{'s':>5}{'#':>4}"]
    for name, cost in rows:
        calls = sum(cost.calls.values())
        lines.append(f"{name[:name_width]:<{name_width}}{short(cost.tokens_in + cost.tokens_out):>5}"
                     f"{short(cost.llm_s):>5}{min(calls, 999):>4}")  # fmt: skip
    if len(costs) > limit:
        lines.append(f"+{len(costs) - limit} in mudsim cost")
    return lines


def _secs(value: float | None) -> str:
    """``1.2s``, ``0.05s``, ``-``: short enough for one line of two at 19 columns."""
    if value is None:
        return "-"
    return f"{value:.2f}s" if value < 10 else f"{value:.0f}s"


def _rank(item: tuple[str, Cost], order: str) -> tuple[float, str]:
    """As ``cost_lines`` sorts: names A-Z, the rest largest first (then A-Z)."""
    name, cost = item
    figure = {
        "tokens": cost.tokens_in + cost.tokens_out,
        "LLM s": cost.llm_s,
        "calls": sum(cost.calls.values()),
    }.get(order)
    return (0.0 if figure is None else -float(figure), name.lower())


def short(number: float) -> str:
    """At most 4 characters: ``950``, ``1.2``, ``12``, ``1.2k``, ``12k``, ``1.2M``."""
    if isinstance(number, float) and number < 9.95:
        return f"{number:.1f}"
    if number < 999.5:
        return f"{number:.0f}"
    for limit, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        scaled = number / limit
        if scaled < 9.95:
            return f"{scaled:.1f}{suffix}"
        if scaled < 999.5:
            return f"{scaled:.0f}{suffix}"
    return "huge"
