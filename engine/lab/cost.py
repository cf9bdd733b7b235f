"""``mudsim cost``: what a run's LLM calls cost, per agent and in all.

Recomputed from the run's ``calls.jsonl`` (``engine.sim.recorder.costs_of``), never
taken from ``run.json``'s ``costs``, which a killed run never wrote: tokens in and out,
LLM and queue seconds, calls by kind, retries, failures, and money where the run's
settings price an endpoint (``settings.llm.endpoints[].price_in`` / ``price_out``, per
million tokens, keyed by the endpoint's URL).

Calls answered from a recorded run's tape (every call of a replay; a fork's before its
branch point) cost nothing again: they are marked ``replayed`` in ``calls.jsonl``, left
out of the cost and counted apart, so a fork's cost is what its live calls cost.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.lab import run_records
from engine.sim.recorder import Cost, costs_of, replayed
from engine.vault.run_store import CALLS, RunFolder, runs


@dataclass(frozen=True)
class RunCost:
    id: str
    meta: Mapping[str, Any]
    agents: Mapping[str, Cost]
    """Agent name -> its calls' cost (``(none)``: calls no agent made)."""
    priced: bool
    """Some endpoint of the run has a price."""
    replayed: int = 0
    """Calls answered from a recorded run's tape, not counted in ``agents``."""

    @property
    def total(self) -> Cost:
        return total(self.agents.values())

    def to_json(self) -> dict[str, Any]:
        facts = {key: self.meta.get(key) for key in ("kind", "started", "ended", "reason")}
        return {"id": self.id, **facts, "priced": self.priced, "replayed_calls": self.replayed,
                "agents": {name: cost.to_json() for name, cost in sorted(self.agents.items())},
                "total": self.total.to_json()}  # fmt: skip


def total(costs: Iterable[Cost]) -> Cost:
    """The sum of ``costs``."""
    found = Cost()
    for cost in costs:
        found.calls.update(cost.calls)
        found.tokens_in += cost.tokens_in
        found.tokens_out += cost.tokens_out
        found.llm_s += cost.llm_s
        found.queue_s += cost.queue_s
        found.retries += cost.retries
        found.failures += cost.failures
        found.money += cost.money
    return found


def run_cost(run: RunFolder) -> RunCost:
    meta = run_records.run_meta(run)
    prices = run_records.prices(meta)
    calls = run.read(CALLS)
    costs = costs_of(calls, prices)
    priced = any(price_in or price_out for price_in, price_out in prices.values())
    return RunCost(run.id, meta, costs, priced, sum(replayed(call) for call in calls))


def cost_report(vault: Path, run_id: str | None, *, every: bool = False,
                as_json: bool = False) -> str:  # fmt: skip
    """The cost of one run (``run_id``, else the latest) or of ``every`` run, as a table
    or JSON: ``{"runs": [...], "total": ...}``."""
    if every:
        run_records.find_run(vault, None)  # says so when there is none
        found = [run_cost(run) for run in runs(vault)]
    else:
        found = [run_cost(run_records.find_run(vault, run_id))]
    if as_json:
        grand = total(c.total for c in found).to_json()
        return json.dumps({"runs": [c.to_json() for c in found], "total": grand}, indent=2)
    parts = [render(c) for c in found]
    if every and len(found) > 1:
        merged: dict[str, list[Cost]] = {}
        for c in found:
            for name, cost in c.agents.items():
                merged.setdefault(name, []).append(cost)
        agents = {name: total(costs) for name, costs in merged.items()}
        priced = any(c.priced for c in found)
        parts.append(_table(f"All {len(found)} runs", agents, priced))
    return "\n\n".join(parts)


def render(cost: RunCost) -> str:
    meta = cost.meta
    ended = meta.get("ended")
    how = (f"ended {ended} ({meta.get('reason') or 'no reason given'})" if ended
           else "no end recorded (still running, or killed)")  # fmt: skip
    title = f"Run {cost.id} ({meta.get('kind') or 'run'}; started {meta.get('started')}; {how})"
    if cost.replayed:
        parent = meta.get("parent") or meta.get("replay_of")
        source = f"the record of {parent}" if parent else "a recorded run's tape"
        title += (f"\n{cost.replayed} calls were replayed from {source} and are not "
                  "counted: the table is this run's own calls")  # fmt: skip
    return _table(title, cost.agents, cost.priced)


def _table(title: str, agents: Mapping[str, Cost], priced: bool) -> str:
    head = ["agent", "calls", "by kind", "tokens in", "tokens out", "LLM s", "queue s",
            "retries", "failures"] + (["money"] if priced else [])  # fmt: skip
    body = [_cells(name, cost, priced) for name, cost in sorted(agents.items())]
    if not body:
        return f"{title}\n(no LLM calls)"
    body.append(_cells("total", total(agents.values()), priced))
    return f"{title}\n{_align([head, *body])}"


def _cells(name: str, cost: Cost, priced: bool) -> list[str]:
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(cost.calls.items()))
    cells = [name, str(sum(cost.calls.values())), kinds, str(cost.tokens_in),
             str(cost.tokens_out), f"{cost.llm_s:.2f}", f"{cost.queue_s:.2f}",
             str(cost.retries), str(cost.failures)]  # fmt: skip
    return cells + ([f"{cost.money:.4f}"] if priced else [])


def _align(rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first and third (words) to the left."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.ljust(w) if i in (0, 2) else cell.rjust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]  # fmt: skip
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)
