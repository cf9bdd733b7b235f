"""Do summaries keep up with agents acting back to back? (``python scripts/bench.py fairness``)

The real Scheduler, Thinkers, Compactor, memory gate and Dispatcher, against a model
that answers after ``delay`` seconds; each figure is the median of ``REPEATS`` runs
(``--repeats``).

**Alone** (issue 13): each agent alone in a room, thinking back to back (every turn is one
memory, its own), windows 4/4: 5 agents on one slot and 3 on a 4-slot server, each with
the dispatcher's aging (``bypass_limit`` 4) and strict priority. Per run: the largest
M - b any agent reached (target: at most I + 2R = 12), the most turn dispatches a summary
request waited through (target: at most 4), the summaries' share of the calls, turns a
second.

**Crowds** (issue 29): every agent in one room, saying things (so every line is a memory
for all of them), on one slot: 5 agents at windows 4/4 and 8/8, 10 agents at 16/16, and
5 agents at 4/4 with a player who speaks after every turn. Per crowd, under
``crowd_<agents>in1_w<R>[_player]_``:

- ``peak_unsummarized_agents`` / ``_players``: the largest M - b, looked at after every
  event and turn (targets: ``bound_agents`` = I + 2R + slots, ``bound_players`` = I + 4R);
- ``turns_per_s``, and ``ungated_turns_per_s`` with the memory gate off (what main did
  before back-pressure: faster, because its summaries fall behind without limit, as
  ``ungated_peak_unsummarized_agents`` shows): what the back-pressure costs;
- ``compaction_s``: the median time of one compaction, from its first request to its
  commit; ``held_s_per_turn``: the most any agent's turns waited for memory, per turn it
  took (``held_for_memory``); ``held_per_turn_in_compactions``: the one over the other
  (target: at most 1, no agent's turn delayed by more than one compaction per turn);
  ``held_s_per_hold``: how long a turn that waited waited, on average.

``gate_us_per_turn``: what the memory gate costs a turn that does not wait (50
characters looked at twice).

**Whatever arrives** (issue 42): 5 agents and a player in one room, windows 4/4, one
slot, the model the loopback stub server over HTTP (``StubOllama``), the agents thinking
in real time at ``STUB_SPEED``; the bound (an agent's I + 2R, a player's I + 4R) is kept
by committing the due chunk extractively at once, whatever the summarizer does:

- ``crowd_5in1_w4_typing_player_``: the player says a line every ``TYPING_EVERY`` s for
  ``TYPING_SECONDS`` s, the summarizer answers in 0.5-2 s. ``lines_typed``;
  ``min_agent_turns`` (the fewest turns an agent took while the player typed) and
  ``min_agent_turns_last_third`` (in the typing's last third: no agent starved);
  ``summary_calls`` (the compactor's calls), ``extractive_share_pct`` (the committed
  chunk summaries made without the model), ``turns_per_s``;
- ``crowd_5in1_w4_failing_summarizer_``: every summary answered with HTTP 500, the agents
  taking ``FAILING_TURNS`` turns each. ``first_notice_s``: from the first summary
  request to the first ``notice`` line (target: within 10 s; the median of the runs it
  came in, -1 if none; ``runs_without_notice`` counts the others);
  ``extractive_share_pct``, ``min_agent_turns``, ``turns_per_s``.

Both give ``peak_unsummarized_agents`` / ``_players`` (medians, with ``_min`` and ``_max``:
looked at after every event and turn, and after each typed line) against
``bound_agents`` (I + 2R + slots = 13) and ``bound_players`` (I + 4R = 20).

``bench_fairness(repeats)``: ``bench.py fairness --repeats N`` sets the runs of every case.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench_common import REPEATS

from engine.agents.memory import MemoryStream
from engine.agents.thinker import Turn
from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.fake import fake_summary
from engine.llm.request import Generation, LLMRequest, Priority
from engine.sim.run import make_thinkers
from engine.sim.scheduler import Happening, Scheduler
from engine.sim.simulation import Simulation

WINDOW = 4
TURNS_PER_AGENT = 60
SETUPS = ((5, 1), (3, 4))
"""(agents, slots) of the agents alone."""
CROWDS = ((5, 4, False), (5, 8, False), (10, 16, False), (5, 4, True))
"""(agents, window, a player beside them), all in one room on one slot."""
CROWD_WORLD_TURNS = 20
"""A crowd runs this many turns in all per memory of its window (some 20 compactions of
each agent)."""
CROWD_DELAY = 0.002
"""Seconds each call of a crowd takes (a fast server), so that waits can be timed."""


def fairness_world(agents: int, window: int = WINDOW, *, crowd: bool = False,
                   player: bool = False) -> str:  # fmt: skip
    rooms = 1 if crowd else agents
    lines = ["name: Fairness", "rooms:"]
    for n in range(rooms):
        lines += [f"  - id: r{n}", f"    name: Room {n}", "    description: A bare room."]
    lines.append("characters:")
    for n in range(agents):
        lines += [f"  - name: Agent{n}", "    type: agent", f"    location: r{0 if crowd else n}",
                  "    profile: A talker.", f"    immediate_window: {window}",
                  f"    recent_window: {window}"]  # fmt: skip
    if player:
        lines += ["  - name: Pat", "    type: player", "    location: r0",
                  f"    immediate_window: {window}", f"    recent_window: {window}"]  # fmt: skip
    return "\n".join(lines) + "\n"


@dataclass
class PromptModel:
    """Answers after ``delay`` s: a new line for a turn (``verb``), one fixed summary
    otherwise; notes when each character's compaction sent its first request."""

    delay: float = 0.0
    verb: str = "think"
    turns: int = 0
    summaries: int = 0
    first_request: dict[str | None, float] = field(default_factory=dict)
    compactions: list[float] = field(default_factory=list)

    async def generate(self, request: LLMRequest) -> Generation:
        loop = asyncio.get_running_loop()
        if request.role == "summarizer":
            self.first_request.setdefault(request.agent, loop.time())
        await asyncio.sleep(self.delay)
        prompt = request.prompt()
        if request.role == "actor":
            self.turns += 1
            text = f"{self.verb} Something number {self.turns}."
        else:
            self.summaries += 1
            text = fake_summary(prompt)  # (in its memories' words: the gate takes it)
        return Generation(text=text, prompt_tokens=10, completion_tokens=5, done_reason="stop")

    def committed(self, mind: MemoryStream) -> None:
        started = self.first_request.pop(mind.character.name, None)
        if started is not None:
            self.compactions.append(asyncio.get_running_loop().time() - started)

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True)
class FairnessRun:
    peak_unsummarized: int
    """The largest M - b any agent reached."""
    most_bypassed: int
    """The most turn dispatches one summary request waited through."""
    summary_share: float
    turns_per_second: float
    peak_players: int = 0
    held_s_per_turn: float = 0.0
    """The most an agent's turns waited for memory, per turn it took."""
    held_s_per_hold: float = 0.0
    """How long a turn that waited for memory waited, on average."""
    compaction_s: float = 0.0
    """The median time of one compaction, from its first request to its commit."""


async def fairness_run(
    agents: int, slots: int, *, bypass_limit: int | None = 4, delay: float = 0.0,
    turns_per_agent: int = TURNS_PER_AGENT, window: int = WINDOW, crowd: bool = False,
    player: bool = False, gate: bool = True,
) -> FairnessRun:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "fair.yaml"
        world.write_text(fairness_world(agents, window, crowd=crowd, player=player), "utf-8")
        sim = Simulation.open(Path(tmp) / "vault", world)
        model = PromptModel(delay, "say" if crowd else "think")
        dispatcher = Dispatcher([Endpoint("model", model, slots=slots)], bypass_limit=bypass_limit)
        sim.knowledge.enabled = False  # only turns and summaries share the slots here
        sim.memory_gate.enabled = gate
        told = sim.compactor.committed

        def committed(mind: MemoryStream) -> None:
            model.committed(mind)
            if told is not None:
                told(mind)

        sim.compactor.committed = committed
        ids = [c.id for c in sim.world.characters.values() if c.type == "agent"]
        sim.start_compaction(dispatcher, dict.fromkeys(sim.minds, "tiny"))
        thinkers = make_thinkers(sim, dict.fromkeys(ids, "tiny"))
        scheduler = Scheduler(sim, dispatcher, thinkers, seed=1, speed=1e6)
        someone = next((c for c in sim.world.characters.values() if c.type == "player"), None)
        peaks = {"agent": 0, "player": 0}
        spoken = 0

        def watch(happening: Happening) -> None:
            nonlocal spoken
            for mind in sim.minds.values():
                kind = mind.character.type
                peaks[kind] = max(peaks[kind], mind.count - mind.boundary)
            if isinstance(happening, Turn):
                if someone is not None:
                    spoken += 1
                    sim.execute(someone, f"say I am still here, number {spoken}.")
                if sum(scheduler.turns_taken.values()) >= turns_per_agent * agents:
                    scheduler.stop()

        scheduler.listen(watch)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            await scheduler.run()
            elapsed = loop.time() - started
            await scheduler.finish(5)
            await sim.compactor.drain(5)
            await dispatcher.aclose()
        finally:
            sim.close()
        calls = model.turns + model.summaries
        held = [sim.minds[a].held_seconds / max(1, scheduler.turns_taken[a]) for a in ids]
        holds = sum(sim.minds[a].held_turns for a in ids)
        waited = sum(sim.minds[a].held_seconds for a in ids)
        return FairnessRun(
            peak_unsummarized=peaks["agent"],
            most_bypassed=dispatcher.fairness.most_bypassed[Priority.SUMMARY],
            summary_share=model.summaries / calls if calls else 0.0,
            turns_per_second=sum(scheduler.turns_taken.values()) / elapsed,
            peak_players=peaks["player"],
            held_s_per_turn=max(held, default=0.0),
            held_s_per_hold=waited / holds if holds else 0.0,
            compaction_s=statistics.median(model.compactions) if model.compactions else 0.0,
        )


def bench_fairness(repeats: int | None = None) -> dict[str, float]:
    """Every case, each run ``repeats`` times (default: ``REPEATS``)."""
    repeats = REPEATS if repeats is None else max(1, repeats)
    out: dict[str, float] = {}
    for agents, slots in SETUPS:
        for label, limit in (("aging", 4), ("strict", None)):
            runs = [
                asyncio.run(fairness_run(agents, slots, bypass_limit=limit)) for _ in range(repeats)
            ]
            key = f"{agents}on{slots}_{label}"
            peaks = [float(r.peak_unsummarized) for r in runs]
            out[f"{key}_peak_unsummarized"] = statistics.median(peaks)
            out[f"{key}_peak_unsummarized_min"] = min(peaks)
            out[f"{key}_peak_unsummarized_max"] = max(peaks)
            out[f"{key}_most_bypassed"] = statistics.median(r.most_bypassed for r in runs)
            out[f"{key}_summary_share_pct"] = 100 * statistics.median(r.summary_share for r in runs)
            out[f"{key}_turns_per_s"] = statistics.median(r.turns_per_second for r in runs)
    for agents, window, player in CROWDS:
        out |= bench_crowd(agents, window, player, repeats=repeats)
    out |= bench_typing_player(repeats=repeats)
    out |= bench_failing_summarizer(repeats=repeats)
    out["gate_us_per_turn"] = statistics.median(bench_gate() for _ in range(repeats))
    return out


def bench_gate(turns: int = 20_000) -> float:
    """Microseconds the memory gate adds to a turn in a world of 50 characters (5 rooms)
    that keeps up: one ``turn`` with its two looks (before the ask, before the command)."""
    from bench_common import world_yaml

    from engine.llm.fake import ScriptedBackend

    with tempfile.TemporaryDirectory() as tmp:
        world = Path(tmp) / "gate.yaml"
        world.write_text(world_yaml(5, 50), encoding="utf-8")
        sim = Simulation.open(Path(tmp) / "vault", world)
        sim.compactor.llm = ScriptedBackend()  # summaries can be made: the gate looks
        mind = next(iter(sim.minds.values()))

        async def turns_through_the_gate() -> float:
            loop = asyncio.get_running_loop()
            started = loop.time()
            for _ in range(turns):
                async with sim.memory_gate.turn(mind) as hold:
                    await hold()
                    await hold()
            return (loop.time() - started) / turns * 1e6

        try:
            return asyncio.run(turns_through_the_gate())
        finally:
            sim.close()


def bench_crowd(agents: int, window: int, player: bool, slots: int = 1, *,
                repeats: int = REPEATS) -> dict[str, float]:  # fmt: skip
    """One crowd, gated and ungated (see the module)."""
    key = f"crowd_{agents}in1_w{window}" + ("_player" if player else "")
    turns = -(-CROWD_WORLD_TURNS * window // agents)  # each agent's share

    def run(gate: bool) -> list[FairnessRun]:
        return [asyncio.run(fairness_run(agents, slots, delay=CROWD_DELAY, crowd=True,
                                         window=window, player=player, gate=gate,
                                         turns_per_agent=turns)) for _ in range(repeats)]  # fmt: skip

    gated, ungated = run(True), run(False)
    out = {
        f"{key}_peak_unsummarized_agents": statistics.median(r.peak_unsummarized for r in gated),
        f"{key}_bound_agents": float(3 * window + slots),
        f"{key}_turns_per_s": statistics.median(r.turns_per_second for r in gated),
        f"{key}_ungated_turns_per_s": statistics.median(r.turns_per_second for r in ungated),
        f"{key}_ungated_peak_unsummarized_agents": statistics.median(
            r.peak_unsummarized for r in ungated
        ),
        f"{key}_compaction_s": statistics.median(r.compaction_s for r in gated),
        f"{key}_held_s_per_turn": statistics.median(r.held_s_per_turn for r in gated),
        f"{key}_held_s_per_hold": statistics.median(r.held_s_per_hold for r in gated),
    }
    if player:
        out[f"{key}_peak_unsummarized_players"] = statistics.median(r.peak_players for r in gated)
        out[f"{key}_bound_players"] = float(5 * window)
    compaction = out[f"{key}_compaction_s"]
    out[f"{key}_held_per_turn_in_compactions"] = (
        out[f"{key}_held_s_per_turn"] / compaction if compaction else 0.0
    )
    return out


STUB_SPEED = 60.0
"""The stub cases' Scheduler speed: the 6 s think interval becomes 0.1 s, agents think
as fast as the one slot lets them."""
TYPING_SECONDS = 12.0
"""How long the player types (some 40 lines; the whole bench within 5 minutes)."""
TYPING_EVERY = 0.3
FAILING_TURNS = 20
"""Turns each agent takes against the failing summarizer (some 5 s; the first notice
comes within about 1 s)."""
NOTICE_WAIT = 15.0
"""Seconds past the first summary request the failing case waits for a notice that has
not come by its last turn (then ``first_notice_s`` is -1)."""
STUB_REPLIES = [f"say I hear you, and here is my word number {n}." for n in range(1, 200)]


@dataclass(frozen=True)
class StubCrowdRun:
    peak_agents: int
    """The largest M - b any agent reached."""
    peak_players: int
    turns_per_second: float
    min_agent_turns: int
    """The fewest turns any agent took (while the player typed)."""
    extractive_share: float
    """The share of committed chunk summaries made without the model."""
    summary_calls: int
    """Calls the compactor made (a dispatcher's retries not counted)."""
    min_agent_turns_last_third: int = 0
    lines_typed: int = 0
    first_notice_s: float = -1.0


@dataclass
class _Watch:
    """The largest M - b of agents and of players, looked at after every event and turn
    (and, by ``look``, after each typed line); when each agent's turns ended."""

    sim: Simulation
    peaks: dict[str, int] = field(default_factory=lambda: {"agent": 0, "player": 0})
    turns: dict[str, list[float]] = field(default_factory=dict)

    def look(self) -> None:
        for mind in self.sim.minds.values():
            kind = mind.character.type
            self.peaks[kind] = max(self.peaks.get(kind, 0), mind.count - mind.boundary)

    def __call__(self, happening: object) -> None:
        self.look()
        if isinstance(happening, Turn) and happening.error is None:
            at = asyncio.get_running_loop().time()
            self.turns.setdefault(happening.agent, []).append(at)


async def stub_crowd_run(
    *, typing: float = 0.0, every: float = TYPING_EVERY, failing_turns: int = 0,
    agents: int = 5, window: int = WINDOW, slots: int = 1,
) -> StubCrowdRun:  # fmt: skip
    """5 agents and a player in one room against the stub server: the player typing a
    line every ``every`` s for ``typing`` s beside a 0.5-2 s summarizer, or (with
    ``failing_turns``) the agents taking that many turns each while every summary call
    is answered with HTTP 500."""
    from engine.llm.ollama import OllamaBackend
    from engine.llm.stub_server import RELATED, StubOllama

    loop = asyncio.get_running_loop()
    with (
        tempfile.TemporaryDirectory() as tmp,
        StubOllama(replies=STUB_REPLIES, models=["tiny"], summary=RELATED, seed=5) as stub,
    ):
        if failing_turns:
            stub.summary_status = 500
        else:
            stub.summary_delay, stub.summary_jitter = 0.5, 1.5  # a 0.5-2 s summarizer
        world = Path(tmp) / "crowd.yaml"
        world.write_text(fairness_world(agents, window, crowd=True, player=True), "utf-8")
        sim = Simulation.open(Path(tmp) / "vault", world, notice=None)
        try:
            sim.knowledge.enabled = False  # turns and summaries share the slot here
            dispatcher = Dispatcher([Endpoint(stub.url, OllamaBackend(stub.url), slots=slots)])
            sim.start_compaction(dispatcher, dict.fromkeys(sim.minds, "tiny"))
            requests: list[float] = []
            notices: list[float] = []
            methods: list[str] = []
            said = asyncio.Event()
            told = sim.compactor.committed
            assert sim.compactor.llm is not None
            backend = sim.compactor.llm

            class Counted:  # the compactor's calls, and when each was made
                async def generate(self, request: LLMRequest) -> Generation:
                    requests.append(loop.time())
                    return await backend.generate(request)

            def committed(mind: MemoryStream) -> None:
                if mind.summaries.recent is not None:
                    methods.append(mind.summaries.recent.method)
                if told is not None:
                    told(mind)

            sim.compactor.llm = Counted()
            sim.compactor.committed = committed

            def notice(line: str) -> None:
                notices.append(loop.time())
                said.set()

            sim.compactor.notice = notice
            ids = [c.id for c in sim.world.characters.values() if c.type == "agent"]
            thinkers = make_thinkers(sim, dict.fromkeys(ids, "tiny"))
            scheduler = Scheduler(sim, dispatcher, thinkers, seed=3, speed=STUB_SPEED)
            watch = _Watch(sim)
            scheduler.listen(watch)
            sim.listeners.append(watch)
            started = loop.time()
            lines = 0
            if failing_turns:
                await scheduler.run(turns=failing_turns)
                ended = loop.time()
                if requests and not notices:  # the dispatcher may still be retrying
                    left = requests[0] + NOTICE_WAIT - loop.time()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(said.wait(), max(0.0, left))
            else:
                running = asyncio.create_task(scheduler.run())
                pat = next(c for c in sim.world.characters.values() if c.type == "player")
                while loop.time() < started + typing:
                    lines += 1
                    sim.execute(pat, f"say Line {lines} from me, and more to come.")
                    watch.look()
                    await asyncio.sleep(every)
                ended = loop.time()
                scheduler.stop()
                await asyncio.wait_for(running, 30)
            await scheduler.finish(5)
            await sim.compactor.drain(1)
            await dispatcher.aclose(1)
        finally:
            sim.close()
    names = [sim.world.characters[a].name for a in ids]
    during = [[t for t in watch.turns.get(n, []) if t <= ended] for n in names]
    last_third = started + (ended - started) * 2 / 3
    return StubCrowdRun(
        peak_agents=watch.peaks["agent"],
        peak_players=watch.peaks["player"],
        turns_per_second=sum(map(len, during)) / (ended - started),
        min_agent_turns=min(map(len, during)),
        extractive_share=methods.count("extractive") / len(methods) if methods else 0.0,
        summary_calls=len(requests),
        min_agent_turns_last_third=min(sum(t >= last_third for t in ts) for ts in during),
        lines_typed=lines,
        first_notice_s=notices[0] - requests[0] if notices and requests else -1.0,
    )


def _stub_figures(key: str, runs: list[StubCrowdRun], window: int = WINDOW,
                  slots: int = 1) -> dict[str, float]:  # fmt: skip
    """What both stub cases report: the peaks (median, min, max) and their bounds."""
    agents = [float(r.peak_agents) for r in runs]
    players = [float(r.peak_players) for r in runs]
    return {
        f"{key}_peak_unsummarized_agents": statistics.median(agents),
        f"{key}_peak_unsummarized_agents_min": min(agents),
        f"{key}_peak_unsummarized_agents_max": max(agents),
        f"{key}_bound_agents": float(3 * window + slots),
        f"{key}_peak_unsummarized_players": statistics.median(players),
        f"{key}_peak_unsummarized_players_min": min(players),
        f"{key}_peak_unsummarized_players_max": max(players),
        f"{key}_bound_players": float(5 * window),
        f"{key}_turns_per_s": statistics.median(r.turns_per_second for r in runs),
        f"{key}_min_agent_turns": statistics.median(r.min_agent_turns for r in runs),
        f"{key}_extractive_share_pct": 100 * statistics.median(r.extractive_share for r in runs),
        f"{key}_summary_calls": statistics.median(r.summary_calls for r in runs),
    }


def bench_typing_player(*, repeats: int = REPEATS, seconds: float = TYPING_SECONDS,
                        every: float = TYPING_EVERY) -> dict[str, float]:  # fmt: skip
    """A player typing a line every ``every`` s beside a crowd (see the module)."""
    key = f"crowd_5in1_w{WINDOW}_typing_player"
    runs = [asyncio.run(stub_crowd_run(typing=seconds, every=every)) for _ in range(repeats)]
    return _stub_figures(key, runs) | {
        f"{key}_lines_typed": statistics.median(r.lines_typed for r in runs),
        f"{key}_min_agent_turns_last_third": statistics.median(
            r.min_agent_turns_last_third for r in runs
        ),
    }


def bench_failing_summarizer(*, repeats: int = REPEATS,
                             turns: int = FAILING_TURNS) -> dict[str, float]:  # fmt: skip
    """A crowd whose summarizer answers HTTP 500 (see the module)."""
    key = f"crowd_5in1_w{WINDOW}_failing_summarizer"
    runs = [asyncio.run(stub_crowd_run(failing_turns=turns)) for _ in range(repeats)]
    came = [r.first_notice_s for r in runs if r.first_notice_s >= 0] or [-1.0]
    return _stub_figures(key, runs) | {
        f"{key}_first_notice_s": statistics.median(came),
        f"{key}_first_notice_s_min": min(came),
        f"{key}_first_notice_s_max": max(came),
        f"{key}_runs_without_notice": float(sum(r.first_notice_s < 0 for r in runs)),
    }


if __name__ == "__main__":
    for name, value in bench_fairness().items():
        print(f"{name:52} {value:10.3f}")
