"""What a replay plays back from a run's record: the LLM calls by key (``TapeBackend``)
and the order of the run's gates (``ReplaySequencer``). No I/O but what the engine
itself does; ``engine.lab.replay`` drives them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine.commands.result import Result, failed
from engine.errors import LLMError, LLMResponseError, LLMUnavailableError, MudsimError
from engine.llm.dispatcher import Endpoint
from engine.llm.request import Generation, LLMRequest
from engine.memory.tokens import ESTIMATE, TokenCounter
from engine.sim.sequencer import Turnstile

WAITED_GATES = frozenset({"send", "answer", "wake"})
"""The gates a replay opens when the tape reaches them (a prompt sent, a reply landing,
a backoff's end); the others (a turn's start, a run's wind-down) are the replay's own
actions, so they pass at once."""
UNCOMPARED = frozenset({"at"})
"""Event fields a replay does not compare (the wall-clock time it was written)."""


class ReplayDiverged(MudsimError):
    """The replay left the recorded path (the first place is said)."""


def first_difference(recorded: str, replayed: str) -> str:
    """Where two texts first differ, as one line: the line, and each side around the
    first character that differs (never two identical excerpts)."""
    old, new = recorded.splitlines(), replayed.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return f"line {number}, {where_lines_differ(a, b)}"
    if len(old) != len(new):
        return f"the recorded text has {len(old)} lines, the replayed {len(new)}"
    return "the texts differ only in their line endings"


def where_lines_differ(recorded: str, replayed: str, width: int = 60) -> str:
    """The column where two lines first differ and ``width`` characters of each from a
    little before it (``...`` where an excerpt is cut)."""
    column = next((at for at, (a, b) in enumerate(zip(recorded, replayed, strict=False))
                   if a != b), min(len(recorded), len(replayed)))  # fmt: skip
    start = max(0, column - width // 4)
    return (f"column {column + 1}: recorded {_excerpt(recorded, start, width)}, "
            f"replayed {_excerpt(replayed, start, width)}")  # fmt: skip


def _excerpt(line: str, start: int, width: int) -> str:
    cut = line[start : start + width]
    return ("..." if start else "") + repr(cut) + ("..." if start + width < len(line) else "")


class ReplaySequencer:
    """The gates of a replay: ``send`` and ``answer`` wait until ``open`` (the tape has
    reached them); after ``go_live`` (a fork's branch point) every gate is a live one."""

    def __init__(self, events: Sequence[Mapping[str, Any]]) -> None:
        self.events = events
        self.waiting: dict[tuple[str, str], asyncio.Future[bool]] = {}
        self.live: Turnstile | None = None
        self.failure: str | None = None

    async def gate(self, kind: str, key: str = "") -> None:
        if self.live is not None:
            await self.live.gate(kind, key)
            return
        if kind not in WAITED_GATES:
            return
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.waiting[kind, key] = future
        try:
            opened = await future
        finally:
            self.waiting.pop((kind, key), None)
        if not opened and self.live is not None:  # let go at a fork's branch point: it
            await self.live.gate(kind, key)  # passes as a live gate, one at a time

    def open(self, kind: str, key: str) -> bool:
        future = self.waiting.get((kind, key))
        if future is None or future.done():
            return False
        future.set_result(True)
        return True

    def go_live(self) -> None:
        """A fork's branch point: every gate from now on is a live one, those waiting
        for the tape included (they pass one at a time, in the live order, so the
        fork's record replays)."""
        self.live = Turnstile()
        for future in list(self.waiting.values()):
            if not future.done():
                future.set_result(False)

    def diverge(self, message: str) -> None:
        """Note the first way the replay left the recorded path."""
        if self.failure is None:
            self.failure = message

    def compare(self, line: Mapping[str, Any]) -> None:
        """An event the replay wrote, against the tape's event of the same number."""
        if self.live is not None:
            return
        number = int(line["n"])
        if number > len(self.events):
            self.diverge(f"event {number} ({line['kind']}) is not in the recording")
            return
        recorded = self.events[number - 1]
        for field in sorted((set(recorded) | set(line)) - UNCOMPARED):
            if recorded.get(field) != line.get(field):
                was, now = recorded.get(field), line.get(field)
                where = (where_lines_differ(was, now) if isinstance(was, str) and
                         isinstance(now, str) else f"recorded {_short(was)}, replayed "
                         f"{_short(now)}")  # fmt: skip
                self.diverge(f"event {number} ({recorded.get('kind')}) differs in {field}, "
                             f"{where}")  # fmt: skip
                return


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def recorded_results(sequencer: ReplaySequencer,
                     count: Callable[[], int]) -> Callable[[str], Result]:  # fmt: skip
    """What ``Simulation.recorded_result`` is in a replay: the result the record holds
    for the command a character runs now (the first ``result`` event of that character
    after the ``count()`` events recorded so far); none there is a divergence."""

    def result(actor: str) -> Result:
        for event in sequencer.events[count() :]:
            if event.get("kind") == "result" and event.get("actor") == actor:
                return Result(str(event.get("text") or ""), event.get("ok") is True)
        sequencer.diverge(f"the record holds no result for {actor}'s command at event "
                          f"{count()}")  # fmt: skip
        return failed("The record holds no result for this command.")

    return result


class TapeBackend:
    """Serves each call its recorded reply, by the call's key (never by its prompt), after
    building the prompt as the recorded run did and checking it is the same text, with
    what it waited for memory in the run (``memory_wait_s``: a replay's own queue is
    never full, yet its agents' ``held_for_memory`` must come out as the run's). After
    a fork's branch point (``live`` set) the calls it still holds go to the live LLM
    (the dispatcher sends new ones there itself: ``Dispatcher.adopt``)."""

    name = "tape"

    def __init__(self, calls: Mapping[str, Mapping[str, Any]], sequencer: ReplaySequencer,
                 token_counter: TokenCounter = ESTIMATE) -> None:  # fmt: skip
        self.calls = calls
        self.sequencer = sequencer
        self.token_counter = token_counter
        """How the recorded run counted tokens (its prompts are fitted alike)."""
        self.live: Endpoint | None = None
        """After a fork's branch point: where a call still in the tape's hands goes."""
        self.live_model: str | None = None
        """After a fork's branch point with ``--model``: the model such a call is asked of
        (never the parent's: the fork is one model's run from its branch on)."""
        self.served = 0
        self._attempts: dict[str, int] = {}

    async def generate(self, request: LLMRequest) -> Generation:
        if self.live is not None:  # sent before a fork's branch point, answered live
            if self.live_model is not None:
                request = replace(request, model=self.live_model)
            return await self._live(self.live, request)
        key = request.record_key or ""
        call = self.calls.get(key)
        if call is None:
            self.sequencer.diverge(f"the replay asked for a call the recording lacks: {key}")
            raise LLMUnavailableError(f"the tape has no call {key}")
        prompt = request.prompt()
        attempt = self._attempts.get(key, 0)
        self._attempts[key] = attempt + 1
        if attempt + 1 < int(call.get("builds") or 1):  # an attempt the run retried
            raise LLMResponseError(f"attempt {attempt + 1} of {key} failed", status=500)
        recorded = call.get("prompt")
        if recorded is not None and prompt != recorded:
            self.sequencer.diverge(
                f"the prompt of call {key} differs: {first_difference(recorded, prompt)}"
            )
        self.served += 1
        error = call.get("error")
        if isinstance(error, dict):
            if error.get("type") == "cancelled":  # it never ended: neither does this
                await asyncio.Event().wait()
            message = str(error.get("message") or "the recorded call failed")
            failure: LLMError = (
                LLMResponseError(message, status=error.get("status"))
                if error.get("type") == "LLMResponseError"
                else LLMUnavailableError(message)
            )
            failure.started = True  # the run's last attempt: no more retries here
            failure.memory_wait = float(call.get("memory_wait_s") or 0.0)
            raise failure
        return Generation(
            text=str(call.get("reply") or ""),
            prompt_tokens=int(call.get("prompt_tokens") or 0),
            completion_tokens=int(call.get("completion_tokens") or 0),
            latency=float(call.get("latency_s") or 0.0),
            done_reason=call.get("done_reason"),
            cached_tokens=int(call.get("cached_tokens") or 0),
            memory_wait=float(call.get("memory_wait_s") or 0.0),
        )

    @staticmethod
    async def _live(endpoint: Endpoint, request: LLMRequest) -> Generation:
        """A call that passed its ``send`` gate as the fork went live: its prompt is built
        now, as it would have been (no queue for a slot in between), and it names the
        endpoint it went to; it is not retried."""
        try:
            generation = await endpoint.backend.generate(replace(request, on_send=None,
                                                                 record_key=None))  # fmt: skip
        except LLMError as exc:
            exc.endpoint, exc.started = endpoint.name, True
            raise
        return replace(generation, endpoint=endpoint.name)

    async def aclose(self) -> None:
        return None
