"""Every run on the record (``vault/runs/<run id>/``, ``engine.vault.run_store``).

``RunRecorder`` is what a recorded run writes through:

- **calls**: every LLM call (``RecordingLLM`` wraps the dispatcher for turns,
  summaries, knowledge passes, handbooks and dreams): the agent, its turn, the call's
  kind (turn, summary, merge, extraction, consolidation, handbook, dream, warm) and its
  index among calls of that agent, turn and kind (the key a replay serves it by, never
  a hash of the prompt), the model and endpoint, the prompt (unless ``record_prompts:
  false``) and options, the reply, why it stopped, tokens in and out, the seconds it
  waited and ran, the seconds a turn's call waited in the dispatcher's queue while
  urgent compactions went first (``memory_wait_s``, which a replay serves back: the
  turn's agent counts it in ``held_for_memory``), retries, the error; and where in the event stream it was sent and
  answered (``sent_after``, ``answered_after``), which is what lets a replay of
  concurrent agents commit in the recorded order.
- **events**, numbered in commit order: every world event, every command with its
  result, each turn as it starts (a scheduling decision) and ends, each round of the
  world clock, each compaction, knowledge pass, handbook and dream that committed, and
  the run's end.
- **draws**: every wall-clock reading and random token (``engine.wallclock``), in order.
- **training**: each agent turn's prompt, reply, parsed command and result (unless
  ``training: false``).

It also keeps each agent's **cost** as the run goes (calls by kind, tokens, LLM and
queue seconds, retries, failures; money with a price per endpoint in ``llm.md``).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from engine import wallclock
from engine.agents.thinker import Generator, Turn
from engine.errors import LLMError, VaultError
from engine.llm.request import Generation, LLMRequest
from engine.memory.secrets import redact
from engine.memory.tokens import TokenCounter, counter_of
from engine.sim.sequencer import Sequencer, Turnstile
from engine.vault.run_store import CALLS, DRAWS, EVENTS, TRAINING, RunFolder, Tape

if TYPE_CHECKING:
    from engine.world.events import Event

TAPE: Final = "tape:"
"""The endpoint a replay's tape answers as: a call it answered was not spent again."""
KIND_OF_ROLE: Mapping[str, str] = {"actor": "turn", "summarizer": "summary",
                                   "consolidator": "consolidation"}  # fmt: skip


def local_now_iso() -> str:
    """``datetime.now().astimezone().isoformat()``: an event's wall time."""
    return wallclock.local_iso(time.time())


def call_kind(request: LLMRequest) -> str:
    """What a call is for: the request's ``purpose``, else its role's."""
    return request.purpose or KIND_OF_ROLE.get(request.role, request.role)


@dataclass
class Cost:
    """What one agent's calls cost in a run."""

    calls: Counter[str] = field(default_factory=Counter)
    tokens_in: int = 0
    tokens_out: int = 0
    llm_s: float = 0.0
    queue_s: float = 0.0
    retries: int = 0
    failures: int = 0
    money: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"calls": dict(self.calls), "calls_total": sum(self.calls.values()),
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "llm_s": round(self.llm_s, 3), "queue_s": round(self.queue_s, 3),
                "retries": self.retries, "failures": self.failures,
                "money": round(self.money, 6)}  # fmt: skip


def replayed(call: Mapping[str, Any]) -> bool:
    """Whether a ``calls.jsonl`` line was answered from a recorded run's tape (a replay's
    calls, a fork's before its branch): it cost nothing again."""
    return call.get("replayed") is True or call.get("endpoint") == TAPE


def add_call(costs: dict[str, Cost], call: Mapping[str, Any],
             prices: Mapping[str, tuple[float, float]]) -> None:  # fmt: skip
    """Count one ``calls.jsonl`` line in ``costs`` (agent name -> ``Cost``), unless it
    was ``replayed``."""
    if replayed(call):
        return
    cost = costs.setdefault(str(call.get("agent") or "(none)"), Cost())
    cost.calls[str(call.get("kind"))] += 1
    cost.tokens_in += int(call.get("prompt_tokens") or 0)
    cost.tokens_out += int(call.get("completion_tokens") or 0)
    cost.llm_s += float(call.get("latency_s") or 0.0)
    cost.queue_s += float(call.get("queue_s") or 0.0)
    cost.retries += int(call.get("retries") or 0)
    cost.failures += bool(call.get("error"))
    price_in, price_out = prices.get(str(call.get("endpoint") or ""), (0.0, 0.0))
    cost.money += (int(call.get("prompt_tokens") or 0) * price_in
                   + int(call.get("completion_tokens") or 0) * price_out) / 1e6  # fmt: skip


@dataclass
class RunRecorder:
    run: RunFolder
    prompts: bool = True
    """Keep the prompts' text (``record_prompts``)."""
    training: bool = True
    """Capture each agent turn as a training pair (``training``; ``@training-toggle``)."""
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    """Endpoint -> (price per million tokens in, out)."""
    replaying: bool = False
    """Calls come from a recorded run's tape (a replay; a fork until its branch point):
    one that names no endpoint (it never reached one) is marked ``replayed`` too."""
    events: Tape = field(init=False)
    calls: Tape = field(init=False)
    draws: Tape = field(init=False)
    training_tape: Tape = field(init=False)
    count: int = 0
    """Events written so far (the position calls are placed at)."""
    costs: dict[str, Cost] = field(default_factory=dict)
    captured: Counter[str] = field(default_factory=Counter)
    """Training pairs captured this run: ``ok``, ``failed``."""
    sequencer: Sequencer = field(default_factory=Turnstile)
    """Puts the run's gates in order (``engine.sim.sequencer``; a replay's follows the tape)."""
    on_event: Callable[[dict[str, Any]], None] | None = None
    """Told each event as it is written (a replay compares it with the tape)."""
    warn: Callable[[str], None] | None = None
    """Told once when a tape cannot be written (the run goes on, its record incomplete)."""
    broken: str | None = None
    """Why the record stopped being written (a full disk ...), or None."""
    _keys: Counter[tuple[str, int, str]] = field(default_factory=Counter)
    _in_turn: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.events = self.run.tape(EVENTS)
        self.calls = self.run.tape(CALLS)
        self.draws = self.run.tape(DRAWS)
        self.training_tape = self.run.tape(TRAINING)

    # -- events ----------------------------------------------------------------------------

    def event(self, kind: str, **data: Any) -> int:
        """Write one event; its number (from 1)."""
        self.count += 1
        line = {
            "n": self.count,
            "kind": kind,
            **data,
            "at": local_now_iso(),
        }
        self._append(self.events, line)
        if self.on_event is not None:
            self.on_event(line)
        return self.count

    def _append(self, tape: Tape, line: dict[str, Any]) -> None:
        """Append to a tape; a failure (said once) stops the record, never the run: what
        was written stays, and ``run.json`` says the record is incomplete."""
        if self.broken is not None:
            return
        try:
            tape.append(line)
        except VaultError as exc:
            self.broken = str(exc)
            if self.warn is not None:
                self.warn(f"the run record stopped (the run goes on): {exc}")

    async def gate(self, kind: str, key: str = "") -> None:
        """Wait for the gate ``kind`` (see ``engine.sim.sequencer``); write its event
        right after."""
        await self.sequencer.gate(kind, key)

    def world_event(self, event: Event) -> None:
        self.event("event", event=event.kind.value, room=event.room_id, actor=event.actor_id,
                   text=event.text, sim=event.sim)  # fmt: skip

    def command(self, actor: str, line: str, *, room: str, sim: str) -> None:
        """A command about to run: an agent's in its turn, or one from outside (a
        player's, ``do``'s: an ``input``, which a replay runs itself). Its ``result``
        event follows the events it caused."""
        kind = "command" if actor in self._in_turn else "input"
        self.event(kind, actor=actor, line=line, room=room, sim=sim)

    def turn_started(self, agent_id: str, name: str, turn: int) -> None:
        self._in_turn.add(agent_id)
        self.event("turn-start", agent=agent_id, name=name, turn=turn)

    def turn_ended(self, agent_id: str, turn: Turn, number: int) -> None:
        self._in_turn.discard(agent_id)
        self.event("turn", agent=agent_id, name=turn.agent, turn=number, command=turn.command,
                   ok=turn.result.ok if turn.result else None, asks=turn.asks,
                   error=turn.error)  # fmt: skip

    def draw(self, draw: wallclock.Draw) -> None:
        self._append(self.draws, {"kind": draw[0], "value": draw[1]})

    # -- calls -----------------------------------------------------------------------------

    def key(self, request: LLMRequest, turn: int) -> str:
        """A new call's key: ``agent|turn|kind|index``, the index counting that agent's
        calls of that kind in that turn (given when the call is asked for)."""
        kind, agent = call_kind(request), request.agent or ""
        index = self._keys[agent, turn, kind]
        self._keys[agent, turn, kind] += 1
        return f"{agent}|{turn}|{kind}|{index}"

    def call(self, request: LLMRequest, key: str, *, prompt: str | None, sent_after: int,
             generation: Generation | None, error: LLMError | str | None, seconds: float,
             builds: int) -> None:  # fmt: skip
        agent, turn, kind, index = key.split("|")
        latency = generation.latency if generation is not None else 0.0
        # the endpoint, without a password its URL may hold
        endpoint = redact(generation.endpoint if generation else getattr(error, "endpoint", ""))
        line: dict[str, Any] = {
            "key": key, "agent": agent, "turn": int(turn), "kind": kind, "index": int(index),
            "model": request.model, "endpoint": endpoint,
            "replayed": endpoint == TAPE or (not endpoint and self.replaying),
            "prompt": prompt if self.prompts else None, "options": dict(request.options),
            "reply": generation.text if generation else None,
            "done_reason": generation.done_reason if generation else None,
            "prompt_tokens": generation.prompt_tokens if generation else 0,
            "completion_tokens": generation.completion_tokens if generation else 0,
            "cached_tokens": generation.cached_tokens if generation else 0,
            "queue_s": round(max(0.0, seconds - latency), 6), "latency_s": round(latency, 6),
            "memory_wait_s": (generation.memory_wait if generation is not None
                              else getattr(error, "memory_wait", 0.0)),
            "retries": generation.retries if generation else getattr(error, "retries", 0),
            "error": None if error is None else _error(error), "builds": builds,
            "sent_after": sent_after, "answered_after": self.count,
        }  # fmt: skip
        self._append(self.calls, line)
        add_call(self.costs, line, self.prices)

    # -- training --------------------------------------------------------------------------

    def capture(self, turn: Turn, prompt: str | None, reply: str | None, room: str) -> None:
        """An agent turn as a training pair (when capture is on and it ran a command)."""
        if not self.training or turn.command is None or prompt is None:
            return
        ok = turn.result is not None and turn.result.ok
        self.captured["ok" if ok else "failed"] += 1
        self._append(self.training_tape, {
            "agent": turn.agent, "prompt": prompt, "reply": reply, "command": turn.command,
            "verb": turn.command.split(" ", 1)[0].lower(), "ok": ok,
            "result": turn.result.text if turn.result else turn.error, "room": room,
            "replayed": self.replaying,  # a fork's turn before its branch point
        })  # fmt: skip

    def close(self) -> None:
        """fsync and close the tapes (the first failure is raised after all are closed)."""
        first: VaultError | None = None
        for tape in (self.events, self.calls, self.draws, self.training_tape):
            try:
                tape.close()
            except VaultError as exc:
                first = first or exc
        if first is not None:
            raise first


def _error(error: LLMError | str) -> dict[str, Any]:
    if isinstance(error, str):
        return {"type": error, "message": error, "status": None}
    return {"type": type(error).__name__, "message": str(error),
            "status": getattr(error, "status", None)}  # fmt: skip


class RecordingLLM:
    """The dispatcher, with every call written to the run's record and its landings put
    in order (``engine.sim.sequencer``): the ``send`` gate before the prompt is built,
    the ``answer`` gate before the caller sees the reply."""

    def __init__(self, inner: Generator, recorder: RunRecorder,
                 turn_of: Callable[[str | None], int]) -> None:  # fmt: skip
        self.inner, self.recorder, self.turn_of = inner, recorder, turn_of

    @property
    def token_counter(self) -> TokenCounter:
        """How the dispatcher's models count tokens (prompts are fitted by it)."""
        return counter_of(self.inner)

    async def generate(self, request: LLMRequest) -> Generation:
        recorder = self.recorder
        key = recorder.key(request, self.turn_of(request.agent))
        sent: dict[str, Any] = {"prompt": None, "after": recorder.count, "builds": 0,
                                "attempts": 0}  # fmt: skip
        factory = request.prompt

        async def on_send() -> None:  # each attempt (a retry builds the prompt again)
            sent["attempts"] += 1
            await recorder.gate("send", f"{key}#{sent['attempts'] - 1}")

        def prompt() -> str:
            recorder.event("send", key=key, attempt=sent["builds"])
            sent["after"] = recorder.count
            sent["builds"] += 1
            text = factory()
            sent["prompt"] = text
            return text

        started = time.perf_counter()
        wrapped = replace(request, prompt=prompt, on_send=on_send, record_key=key)
        outcome: Generation | LLMError
        try:
            try:
                outcome = await self.inner.generate(wrapped)
            except LLMError as exc:
                outcome = exc
            await recorder.gate("answer", key)
        except asyncio.CancelledError:  # a replay waits for it forever, as it was
            self._call(request, key, sent, None, "cancelled", started)
            raise
        except Exception as exc:  # the prompt could not be built: the caller says why
            self._call(request, key, sent, None, type(exc).__name__, started)
            raise
        if isinstance(outcome, LLMError):
            recorder.event("answer", key=key, ok=False)
            self._call(request, key, sent, None, outcome, started)
            raise outcome
        recorder.event("answer", key=key, ok=True)
        self._call(request, key, sent, outcome, None, started)
        return outcome

    def _call(self, request: LLMRequest, key: str, sent: dict[str, Any],
              generation: Generation | None, error: LLMError | str | None,
              started: float) -> None:  # fmt: skip
        self.recorder.call(request, key, prompt=sent["prompt"], sent_after=sent["after"],
                           generation=generation, error=error, builds=sent["builds"],
                           seconds=time.perf_counter() - started)  # fmt: skip


def costs_of(
    calls: list[dict[str, Any]], prices: Mapping[str, tuple[float, float]]
) -> dict[str, Cost]:
    """Agent name -> its cost, from a run's ``calls.jsonl`` (``replayed`` calls left out)."""
    costs: dict[str, Cost] = defaultdict(Cost)
    for call in calls:
        add_call(costs, call, prices)
    return dict(costs)


def prices_of(meta: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Endpoint URL -> (price in, price out) per million tokens, from a ``run.json``."""
    endpoints = meta.get("settings", {}).get("llm", {}).get("endpoints") or []
    return {str(e.get("url")): (float(e.get("price_in") or 0), float(e.get("price_out") or 0))
            for e in endpoints if isinstance(e, dict)}  # fmt: skip


def run_costs(run: RunFolder) -> dict[str, Cost]:
    """Each agent's cost in a run, from its calls (so a killed run has them too)."""
    return costs_of(run.read(CALLS), prices_of(run.meta()))
