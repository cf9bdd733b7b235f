"""Export rows as text: JSONL, CSV and a Markdown transcript (pure: no I/O).

- JSONL: one JSON object a line, UTF-8 as is.
- CSV (RFC 4180): a header of the kind's columns, then one CRLF-ended line per row,
  quoted so that any text (commas, quotes, line breaks) reads back the same; None is
  an empty field, booleans are ``True``/``False``.
- Markdown: events as a transcript per room (what the run itself did, such as turns
  and clock ticks, under "The run"; the calls' ordering gates left out); every other
  kind per agent.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]
"""A row to render (``engine.lab.export_rows``)."""


def to_jsonl(lines: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def to_csv(rows: Iterable[Row], columns: Sequence[str]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(columns))  # RFC 4180: \r\n; a lone \r is quoted
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


# -- Markdown ---------------------------------------------------------------------------


def _flat(value: Any) -> str:
    """``value`` on one line (a multi-line result is one transcript line)."""
    return " ".join(str("" if value is None else value).split())


def _code(text: Any) -> str:
    """``text`` as inline code, whatever backticks it holds."""
    text = _flat(text)
    ticks = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fenced(text: Any) -> list[str]:
    text = str("" if text is None else text)
    fence = "`" * max(3, max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return [f"{fence}text", *text.split("\n"), fence]


def _event_line(row: Row) -> str:
    sim = f"{row['sim']} " if row["sim"] else ""
    if row["kind"] in ("command", "input"):
        return f"- {sim}{row['actor']} > {_code(row['line'])}"
    if row["kind"] == "result":
        return f"  - {'' if row['ok'] is not False else '(failed) '}{_flat(row['text'])}"
    return f"- {sim}{_flat(row['text'])}"


def _run_line(row: Row) -> str:
    kind = row["kind"]
    if kind == "turn":
        what = _code(row["command"]) if row["command"] else f"no command ({_flat(row['error'])})"
        sim = f"{row['sim']} " if row["sim"] else ""
        return f"- {sim}{row['name']}, turn {row['turn']}: {what}"
    if kind == "turn-start":
        return f"- {row['name']} starts turn {row['turn']}"
    facts = ", ".join(f"{k}: {_flat(row[k])}" for k in ("sim", "reason", "extra") if row[k])
    return f"- {kind}{': ' + facts if facts else ''}"


GATES = frozenset({"send", "answer"})
"""Events that only put the run's calls in order (a replay's): not in the transcript."""


def events_markdown(rows: Sequence[Row], title: str) -> str:
    rooms: dict[str, list[str]] = {}
    run: list[str] = []
    for row in rows:
        if row["kind"] in GATES:
            continue
        if row["kind"] in ("event", "command", "input", "result") and row["room"]:
            rooms.setdefault(str(row["room"]), []).append(_event_line(row))
        else:
            run.append(_run_line(row))
    parts = [f"# {title}", ""]
    for room, lines in rooms.items():
        parts += [f"## {room}", "", *lines, ""]
    if run:
        parts += ["## The run", "", *run, ""]
    return "\n".join(parts)


def _turn(row: Row) -> list[str]:
    what = _code(row["command"]) if row["command"] else "no command"
    ok = row["ok"]
    outcome = "ok" if ok is True else "failed" if ok is False else _flat(row["error"]) or "skipped"
    where = " · ".join(str(v) for v in (row["sim"], row["room"]) if v)
    lines = [f"- turn {row['turn']}{' · ' + where if where else ''}: {what} — {outcome} "
             f"({row['prompt_tokens']} tokens in, {row['completion_tokens']} out, "
             f"{row['latency_s']} s)"]  # fmt: skip
    if row["result"]:
        lines.append(f"  - {_flat(row['result'])}")
    return lines


def _memory(row: Row) -> list[str]:
    return [f"- {row['seq']} · {row['sim'] or row['at']} · {row['kind']}: {_flat(row['text'])}"]


def _call(row: Row) -> list[str]:
    head = (f"- turn {row['turn']} · {row['kind']} #{row['index']} · {row['model']}: "
            f"{row['prompt_tokens']} tokens in, {row['completion_tokens']} out, "
            f"{row['latency_s']} s")  # fmt: skip
    if row["error_message"]:
        return [head, f"  - error: {_flat(row['error_message'])}"]
    return [head, f"  - {_code(row['reply'])}"]


def _pair(row: Row) -> list[str]:
    outcome = "ok" if row["ok"] else "failed"
    return [f"### {_flat(row['verb']) or '(no verb)'} ({outcome})", "", "Prompt:", "",
            *_fenced(row["prompt"]), "", "Completion:", "", *_fenced(row["completion"]),
            ""]  # fmt: skip


_BY_AGENT: Mapping[str, Callable[[Row], list[str]]] = {
    "turns": _turn, "memories": _memory, "calls": _call, "training": _pair,
}  # fmt: skip


def agents_markdown(what: str, rows: Sequence[Row], title: str) -> str:
    agents: dict[str, list[str]] = {}
    for row in rows:
        agents.setdefault(str(row["agent"] or "(no agent)"), []).extend(_BY_AGENT[what](row))
    parts = [f"# {title}", ""]
    for agent, lines in agents.items():
        parts += [f"## {agent}", "", *lines, ""]
    return "\n".join(parts)


def to_markdown(what: str, rows: Sequence[Row], title: str) -> str:
    if what == "events":
        return events_markdown(rows, title)
    return agents_markdown(what, rows, title)
