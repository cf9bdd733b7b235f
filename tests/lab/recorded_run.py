"""A recorded run for the lab's tests, written by the product's own ``RunRecorder``."""

from __future__ import annotations

from pathlib import Path

from engine.agents.thinker import Turn
from engine.commands import Result
from engine.errors import LLMUnavailableError
from engine.llm.request import Generation, LLMRequest, Priority, Role
from engine.memory.record import utc_now
from engine.sim.recorder import RunRecorder
from engine.vault.run_store import RunFolder
from engine.world.events import Event, EventKind

GPU = "http://gpu1:11434"
PRICES = {GPU: (2.0, 8.0)}
PROMPT_ADA = 'You are Ada. A careful gardener.\n---\nBo says, "hello, friend"\n---\n~Ada>'
PROMPT_BO = "You are Bo. A quiet smith.\n---\nYou are Bo in The Yard.\n~Bo>"
SIM = "2026-01-01T08:00"
LATER = "2026-01-01T08:10"


def _ask(rec: RunRecorder, agent: str, turn: int, prompt: str, reply: str | None,
         *, tokens: tuple[int, int] = (0, 0), latency: float = 0.0, seconds: float = 0.0,
         retries: int = 0, role: Role = "actor") -> None:  # fmt: skip
    request = LLMRequest(prompt=lambda: prompt, model="gemma3:4b", agent=agent,
                         options={"stop": ["\n"], "num_predict": 32}, role=role,
                         priority=Priority.TURN if role == "actor" else Priority.SUMMARY)  # fmt: skip
    if reply is None:
        error = LLMUnavailableError("cannot reach http://gpu1:11434: connection refused")
        error.endpoint, error.retries = GPU, retries
        rec.call(request, rec.key(request, turn), prompt=prompt, sent_after=rec.count,
                 generation=None, error=error, seconds=seconds, builds=1)  # fmt: skip
        return
    generation = Generation(reply, tokens[0], tokens[1], latency, "stop", endpoint=GPU,
                            retries=retries)  # fmt: skip
    rec.call(request, rec.key(request, turn), prompt=prompt, sent_after=rec.count,
             generation=generation, error=None, seconds=seconds, builds=1)  # fmt: skip


def _turn(rec: RunRecorder, agent_id: str, name: str, number: int, line: str, result: Result,
          room: str, sim: str, events: tuple[Event, ...] = ()) -> Turn:  # fmt: skip
    rec.command(agent_id, line, room=room, sim=sim)
    for event in events:
        rec.world_event(event)
    rec.event("result", actor=agent_id, ok=result.ok, text=result.text)
    turn = Turn(name, line, result, 1)
    rec.turn_ended(agent_id, turn, number)
    return turn


def record_run(vault: Path, *, priced: bool = True, end: bool = True) -> RunFolder:
    """A run of two agents over two rounds, recorded as ``Simulation`` records one:

    - Ada, turn 1: says hello (two asks: the first reply was rejected), ok;
    - Bo, turn 1: ``go west`` fails; a summary call of Bo's fails (LLM down);
    - Pat (a player) types ``look`` (an ``input``);
    - the clock ticks; Ada, turn 2: the same prompt and reply as turn 1 (a duplicate
      training pair); Bo, turn 2: skipped, its call failed after two retries.
    """
    run = RunFolder.create(vault, "run")
    endpoints = [{"url": GPU, "kind": "ollama", "model": "gemma3:4b", "slots": 1,
                  "price_in": PRICES[GPU][0] if priced else 0.0,
                  "price_out": PRICES[GPU][1] if priced else 0.0}]  # fmt: skip
    meta = {"id": run.id, "kind": "run", "started": utc_now(), "ended": None,
            "settings": {"llm": {"endpoints": endpoints}}}  # fmt: skip
    run.write_meta(meta)
    rec = RunRecorder(run, prices=PRICES if priced else {})

    rec.turn_started("ada", "Ada", 1)
    _ask(rec, "Ada", 1, PROMPT_ADA, "say hello", tokens=(120, 4), latency=0.5, seconds=0.75)
    _ask(rec, "Ada", 1, PROMPT_ADA, 'say hello, "friend"', tokens=(121, 6), latency=0.25,
         seconds=0.25, retries=1)  # fmt: skip
    said = Event(EventKind.SPEECH, 'Ada says, "hello, friend"', "hall", "ada", SIM)
    turn = _turn(rec, "ada", "Ada", 1, 'say hello, "friend"',
                 Result('You say, "hello, friend"'), "hall", SIM, (said,))  # fmt: skip
    rec.capture(turn, PROMPT_ADA, 'say hello, "friend"', "hall")

    rec.turn_started("bo", "Bo", 1)
    _ask(rec, "Bo", 1, PROMPT_BO, "go west", tokens=(80, 3), latency=0.125, seconds=0.125)
    turn = _turn(rec, "bo", "Bo", 1, "go west", Result("There is no exit west.", ok=False),
                 "yard", SIM)  # fmt: skip
    rec.capture(turn, PROMPT_BO, "go west", "yard")
    _ask(rec, "Bo", 1, "Summarize:\n...", None, role="summarizer", seconds=2.0)

    rec.command("pat", "look", room="hall", sim=SIM)
    rec.event("result", actor="pat", ok=True, text="The Hall\nA long hall.\nExits: north")
    rec.event("clock", sim=LATER)

    rec.turn_started("ada", "Ada", 2)
    _ask(rec, "Ada", 2, PROMPT_ADA, 'say hello, "friend"', tokens=(121, 6), latency=0.25,
         seconds=0.5)  # fmt: skip
    again = Event(EventKind.SPEECH, 'Ada says, "hello, friend"', "hall", "ada", LATER)
    turn = _turn(rec, "ada", "Ada", 2, 'say hello, "friend"',
                 Result('You say, "hello, friend"'), "hall", LATER, (again,))  # fmt: skip
    rec.capture(turn, PROMPT_ADA, 'say hello, "friend"', "hall")

    rec.turn_started("bo", "Bo", 2)
    _ask(rec, "Bo", 2, PROMPT_BO, None, retries=2, seconds=3.0)
    rec.turn_ended("bo", Turn("Bo", None, None, 1, error="the LLM is unreachable"), 2)
    if end:
        rec.event("end", reason="turns", sim=LATER)
    rec.close()
    if end:
        costs = {name: cost.to_json() for name, cost in sorted(rec.costs.items())}
        run.write_meta({**meta, "ended": utc_now(), "reason": "turns", "events": rec.count,
                        "costs": costs, "training": dict(rec.captured)})  # fmt: skip
    return run
