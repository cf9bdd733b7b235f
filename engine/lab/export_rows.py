"""The rows ``mudsim export`` writes, built from a run's tapes and the agents' journals
(pure: no I/O; ``engine.lab.export`` reads the files and writes the result).

Every row is a flat dict of scalars (str, int, float, bool or None) whose keys are the
columns of its kind (``COLUMNS``), always all of them and in that order, so CSV and
Parquet get the same columns for every row. A value that is not a scalar (the options
of a call, an event's unknown fields) is kept as its JSON text.

- **events**: one row per line of ``events.jsonl``; a turn's ``agent`` is its ``actor``;
  ``sim`` is the event's world clock reading, or the last one before it (a turn event
  has none of its own); a result's ``room`` is where its command ran; fields of no
  known column go into ``extra``.
- **turns**: one row per agent turn (a ``turn`` event), joined with what the agent ran
  in it (its ``command`` and ``result`` events, between its ``turn-start`` and ``turn``)
  and with its calls of kind ``turn``, by (agent name, turn): tokens, seconds, retries.
- **calls**: one row per line of ``calls.jsonl``, the prompt included.
- **memories**: one row per journal record, with the run that recorded it (by the run
  record's journal ranges; a record made before those existed, by its time).
- **training**: prompt/completion pairs (``TrainingFilter``), identical pairs once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engine.memory.record import MemoryRecord

Scalar = str | int | float | bool | None
Row = dict[str, Scalar]

EVENT_COLUMNS: Final = ("n", "kind", "at", "sim", "room", "actor", "name", "turn", "event",
                        "line", "text", "ok", "command", "asks", "error", "reason", "key",
                        "extra")  # fmt: skip
MADE_BY_COLUMNS: Final = ("mudsim_version", "git_commit", "git_dirty")
"""What made a run, from its ``run.json`` (empty for a run recorded before it kept them):
the last columns of turns, calls and training (``engine.lab.export`` fills them)."""
TURN_COLUMNS: Final = ("agent", "agent_id", "turn", "sim", "room", "command", "ok", "result",
                       "asks", "error", "calls", "prompt_tokens", "completion_tokens",
                       "cached_tokens", "latency_s", "queue_s", "retries", "replayed",
                       *MADE_BY_COLUMNS)  # fmt: skip
CALL_COLUMNS: Final = ("key", "agent", "turn", "kind", "index", "model", "endpoint", "prompt",
                       "options", "reply", "done_reason", "prompt_tokens", "completion_tokens",
                       "cached_tokens", "queue_s", "latency_s", "retries", "builds",
                       "error_type", "error_message", "error_status", "sent_after",
                       "answered_after", "replayed", *MADE_BY_COLUMNS)  # fmt: skip
MEMORY_COLUMNS: Final = ("agent", "seq", "kind", "at", "sim", "text", "location", "occupants",
                         "command", "reason", "failed", "speaker", "run")  # fmt: skip
TRAINING_COLUMNS: Final = ("prompt", "completion", "agent", "verb", "ok", "replayed",
                            *MADE_BY_COLUMNS)  # fmt: skip
COLUMNS: Final[Mapping[str, tuple[str, ...]]] = {
    "events": EVENT_COLUMNS, "turns": TURN_COLUMNS, "calls": CALL_COLUMNS,
    "memories": MEMORY_COLUMNS, "training": TRAINING_COLUMNS,
}  # fmt: skip
"""What can be exported -> its columns."""


def scalar(value: Any) -> Scalar:
    """``value`` if it is a scalar, else its JSON text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


# -- events -----------------------------------------------------------------------------


def event_rows(events: Iterable[Mapping[str, Any]]) -> list[Row]:
    """One row per event (see the module)."""
    rows: list[Row] = []
    sim: Any = None
    rooms: dict[str, Any] = {}  # actor -> the room of its last command
    for event in events:
        data = dict(event)
        if "agent" in data and "actor" not in data:
            data["actor"] = data.pop("agent")
        sim = data.get("sim") or sim
        data["sim"] = sim
        actor = data.get("actor")
        if data.get("kind") in ("command", "input") and isinstance(actor, str):
            rooms[actor] = data.get("room")
        if data.get("kind") == "result" and not data.get("room") and isinstance(actor, str):
            data["room"] = rooms.get(actor)
        row: Row = {column: scalar(data.pop(column, None)) for column in EVENT_COLUMNS}
        row["extra"] = json.dumps(data, ensure_ascii=False, sort_keys=True) if data else None
        rows.append(row)
    return rows


# -- turns ------------------------------------------------------------------------------


@dataclass
class _Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    latency_s: float = 0.0
    queue_s: float = 0.0
    retries: int = 0
    replayed: bool = False
    """Its calls came from the tape: a fork's turn before its branch point, a replay's."""


@dataclass
class _OpenTurn:
    sim: Any
    room: Any
    ran: bool = False
    """Its command event was seen (``command`` is its line)."""
    command: Any = None
    result: Any = None
    answered: bool = False


def _usage_by_turn(calls: Iterable[Mapping[str, Any]]) -> dict[tuple[str, int], _Usage]:
    usage: dict[tuple[str, int], _Usage] = {}
    for call in calls:
        if call.get("kind") != "turn":
            continue
        found = usage.setdefault((str(call.get("agent") or ""), int(call.get("turn") or 0)),
                                 _Usage())  # fmt: skip
        found.calls += 1
        found.prompt_tokens += int(call.get("prompt_tokens") or 0)
        found.completion_tokens += int(call.get("completion_tokens") or 0)
        found.cached_tokens += int(call.get("cached_tokens") or 0)
        found.latency_s += float(call.get("latency_s") or 0.0)
        found.queue_s += float(call.get("queue_s") or 0.0)
        found.retries += int(call.get("retries") or 0)
        found.replayed = found.replayed or call.get("replayed") is True
    return usage


def turn_rows(events: Iterable[Mapping[str, Any]], calls: Iterable[Mapping[str, Any]]) -> list[Row]:
    """One row per agent turn (see the module), in the order the turns ended."""
    usage = _usage_by_turn(calls)
    rows: list[Row] = []
    sim: Any = None
    rooms: dict[str, Any] = {}  # agent id -> the room of its last command
    open_turns: dict[str, _OpenTurn] = {}
    for event in events:
        kind, sim = event.get("kind"), event.get("sim") or sim
        actor = str(event.get("actor") or event.get("agent") or "")
        current = open_turns.get(actor)
        if kind == "turn-start":
            open_turns[actor] = _OpenTurn(sim, rooms.get(actor))
        elif kind in ("command", "input"):
            rooms[actor] = event.get("room")
            if kind == "command" and current is not None and not current.ran:
                current.ran = True
                current.sim, current.room = event.get("sim") or sim, event.get("room")
                current.command = event.get("line")
        elif kind == "result" and current is not None and current.ran and not current.answered:
            current.answered, current.result = True, event.get("text")
        elif kind == "turn":
            done = open_turns.pop(actor, None) or _OpenTurn(sim, rooms.get(actor))
            name, number = str(event.get("name") or ""), int(event.get("turn") or 0)
            used = usage.get((name, number), _Usage())
            rows.append({
                "agent": name, "agent_id": actor, "turn": number, "sim": scalar(done.sim),
                "room": scalar(done.room),
                "command": scalar(event.get("command") or done.command),
                "ok": scalar(event.get("ok")), "result": scalar(done.result),
                "asks": scalar(event.get("asks")), "error": scalar(event.get("error")),
                "calls": used.calls, "prompt_tokens": used.prompt_tokens,
                "completion_tokens": used.completion_tokens,
                "cached_tokens": used.cached_tokens, "latency_s": round(used.latency_s, 6),
                "queue_s": round(used.queue_s, 6), "retries": used.retries,
                "replayed": used.replayed,
            })  # fmt: skip
    return rows


# -- calls ------------------------------------------------------------------------------


def call_rows(calls: Iterable[Mapping[str, Any]]) -> list[Row]:
    """One row per LLM call; a failed call's error in three columns."""
    rows: list[Row] = []
    for call in calls:
        data = dict(call)
        error = data.pop("error", None)
        row: Row = {
            column: scalar(data.get(column))
            for column in CALL_COLUMNS
            if column not in MADE_BY_COLUMNS
        }  # (the export adds those)
        if isinstance(error, Mapping):
            row["error_type"] = scalar(error.get("type"))
            row["error_message"] = scalar(error.get("message"))
            row["error_status"] = scalar(error.get("status"))
        elif error is not None:
            row["error_message"] = scalar(error)
        rows.append(row)
    return rows


# -- memories ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunWindow:
    """Which memories a run recorded: by its record's journal ranges, or, for a record
    made before it kept them, by when it took place (wall time, as the vault writes it)."""

    id: str
    started: str
    ended: str | None
    """None: the run has no recorded end (it is going on, or was killed)."""
    journals: Mapping[str, tuple[int, int | None]] | None = None
    """Agent name -> the seqs of its journal recorded in the run, ``[first, end)`` (end
    None: not known, the run has no recorded end and no run came after it); None: the
    record has no journal ranges."""

    def holds(self, at: str) -> bool:
        return self.started <= at and (self.ended is None or at <= self.ended)

    def recorded(self, agent: str, seq: int) -> bool:
        """Whether the run's journal ranges hold ``agent``'s memory ``seq``."""
        span = (self.journals or {}).get(agent)
        return span is not None and span[0] <= seq and (span[1] is None or seq < span[1])


def run_of(agent: str, record: MemoryRecord, windows: Sequence[RunWindow]) -> str | None:
    """The run that recorded a memory: the one whose journal ranges hold it; else (a
    memory no range holds) the last run without ranges whose time holds its ``at``."""
    ranged = [w for w in windows if w.journals is not None]
    found = next((w.id for w in reversed(ranged) if w.recorded(agent, record.seq)), None)
    if found is not None:
        return found
    return next((w.id for w in reversed(windows) if w.journals is None and w.holds(record.at)),
                None)  # fmt: skip


def memory_rows(journals: Mapping[str, Sequence[MemoryRecord]],
                windows: Sequence[RunWindow] = ()) -> list[Row]:  # fmt: skip
    """One row per memory of each agent (agent name -> its journal's records), with the
    run it was recorded in (``run_of``; None for none)."""
    rows: list[Row] = []
    for agent, records in journals.items():
        for record in records:
            rows.append({
                "agent": agent, "seq": record.seq, "kind": record.kind.value, "at": record.at,
                "sim": record.sim, "text": record.text, "location": record.location,
                "occupants": ", ".join(record.occupants), "command": record.command,
                "reason": record.reason, "failed": record.failed, "speaker": record.speaker,
                "run": run_of(agent, record, windows),
            })  # fmt: skip
    return rows


# -- training ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingFilter:
    """Which training pairs to keep (the default keeps every one, failures included)."""

    successful_only: bool = False
    agent: str | None = None
    """Only this agent's (any case)."""
    verb: str | None = None
    """Only commands with this verb (any case)."""
    min_reply_chars: int = 0
    """Only completions at least this long (leading and trailing space not counted)."""

    def keeps(self, row: Row) -> bool:
        if self.successful_only and row["ok"] is not True:
            return False
        if self.agent is not None and str(row["agent"]).casefold() != self.agent.casefold():
            return False
        if self.verb is not None and str(row["verb"]).casefold() != self.verb.casefold():
            return False
        return len(str(row["completion"]).strip()) >= self.min_reply_chars


def training_rows(lines: Iterable[Mapping[str, Any]],
                  keep: TrainingFilter = TrainingFilter()) -> list[Row]:  # fmt: skip
    """Prompt/completion pairs from ``training.jsonl``: the completion is the model's
    reply (the command it ran when the reply was not kept); pairs ``keep`` keeps, each
    identical (prompt, completion) pair once (the first)."""
    rows: list[Row] = []
    seen: set[tuple[str, str]] = set()
    for line in lines:
        prompt, reply, command = line.get("prompt"), line.get("reply"), line.get("command")
        if not isinstance(prompt, str):
            continue
        completion = reply if isinstance(reply, str) and reply.strip() else command
        if not isinstance(completion, str):
            continue
        row: Row = {"prompt": prompt, "completion": completion,
                    "agent": str(line.get("agent") or ""), "verb": str(line.get("verb") or ""),
                    "ok": line.get("ok") is True, "replayed": line.get("replayed") is True}  # fmt: skip
        if not keep.keeps(row) or (prompt, completion) in seen:
            continue
        seen.add((prompt, completion))
        rows.append(row)
    return rows


def chat_lines(rows: Iterable[Row]) -> list[dict[str, Any]]:
    """Training rows as chat conversations: a user turn (the prompt), an assistant turn
    (the completion)."""
    return [{"messages": [{"role": "user", "content": row["prompt"]},
                          {"role": "assistant", "content": row["completion"]}]}
            for row in rows]  # fmt: skip


def of_agent(rows: Iterable[Row], agent: str) -> list[Row]:
    """The rows whose ``agent`` is ``agent`` (any case)."""
    return [row for row in rows if str(row.get("agent") or "").casefold() == agent.casefold()]
