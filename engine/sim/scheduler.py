"""When agents think: real time, or a fixed number of turns as fast as the LLM allows.

    scheduler = Scheduler(sim, dispatcher, seed=7)
    await scheduler.run(turns=5)        # every agent takes 5 turns, then it returns
    await scheduler.run()               # real time, until stop()

Real time: each agent thinks ``think_interval`` seconds (divided by ``speed``) after
its previous turn completes; the first turn comes after a random part of one
interval, so agents do not all think at once. ``turns=N``: rounds in which every
agent that still needs a turn takes one; within a round the requests reach the
dispatcher in an order shuffled by ``seed``. A turn whose call failed still counts.

A turn waits at the simulation's memory gate (``engine.sim.memory_gate``) while a
character's memory is too far behind, before it asks and before its command runs:
back-pressure keeps every character's unsummarized memories bounded however crowded a
room is. What its calls then wait in the dispatcher's queue while urgent compactions go
first is counted too (``MemoryGate.counting``).

Every turn the scheduler completes, taken or skipped, is one of a round of the world
clock (``Simulation.turn_taken``: as many turns as this run has agents), so simulation
time depends on the turns alone, never on how fast the model answers.

``pause``, ``resume``, ``step`` (one turn per agent while paused), ``speed`` and
``listen`` (every world event and every finished turn) are what the TUI drives.
``stop`` ends a run: nothing new is dispatched, turns in progress get a bounded wait.

Every task has an owner: a round's turns and the real-time timers run in an
``asyncio.TaskGroup``; a turn in progress when a real-time run stops is left to
``finish``, which waits for it and then cancels it. Cancelling ``run`` cancels every
turn it started. Nothing one agent does ends the run: a turn that raises (the thinker
already turns its own failures into a skipped turn) is logged to the ``mudsim`` log
with its traceback and published as a skipped turn; so is a timer that fails (that
agent then thinks no more this run); a listener that raises is logged and the others
still hear everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.agents.thinker import Generator, Thinker, Turn, describe
from engine.world.events import Event
from engine.world.model import Character

if TYPE_CHECKING:
    from engine.sim.simulation import Simulation

Happening = Event | Turn
"""What listeners hear: a world event, or an agent's finished turn."""

CANCEL_WAIT = 5.0
"""Seconds ``finish`` waits for cancelled turns to end."""

log = logging.getLogger("mudsim")


class Scheduler:
    def __init__(
        self,
        sim: Simulation,
        llm: Generator,
        thinkers: dict[str, Thinker],
        *,
        seed: int | None = None,
        speed: float = 1.0,
    ) -> None:
        self.sim = sim
        self.llm = llm
        self.thinkers = thinkers
        """Agent id -> its thinker."""
        self.speed = speed
        self.rng = random.Random(seed)
        self.turns_taken: dict[str, int] = dict.fromkeys(thinkers, 0)
        self._listeners: list[Callable[[Happening], None]] = []
        self._running = asyncio.Event()
        self._running.set()
        self._stopping = asyncio.Event()
        self._turns: set[asyncio.Task[Turn]] = set()
        sim.listeners.append(self._publish)

    # -- controls ---------------------------------------------------------------------
    def listen(self, listener: Callable[[Happening], None]) -> None:
        self._listeners.append(listener)

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def stop(self) -> None:
        self._stopping.set()
        self._running.set()  # a paused run must wake up to end

    def abort(self) -> None:
        """Stop now: turns in progress are cancelled (their commands have not run)."""
        self.stop()
        for task in self._turns:
            task.cancel()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    async def step(self) -> list[Turn]:
        """One turn for every agent now, paused or not."""
        return await self._round(list(self.thinkers))

    # -- running ----------------------------------------------------------------------
    async def run(self, turns: int | None = None) -> None:
        """Run until every agent has taken ``turns`` turns, or, in real time, until stopped."""
        if turns is None:
            async with asyncio.TaskGroup() as group:
                timers = [group.create_task(self._live(agent)) for agent in self.thinkers]
                await self._stopping.wait()
                for timer in timers:
                    timer.cancel()
        else:
            while not self.stopping:
                await self._running.wait()
                due = [a for a in self.thinkers if self.turns_taken[a] < turns]
                if not due or self.stopping:
                    break
                await self._round(due)

    async def _live(self, agent: str) -> None:
        """One agent's real-time timer; a failure of its own ends only this agent's turns."""
        try:
            await self._timer(agent)
        except Exception as exc:
            error = f"its timer failed ({describe(exc)}); no more turns this run"
            self._publish(self._failed(agent, error, exc))

    async def _timer(self, agent: str) -> None:
        first = True
        while not self.stopping:
            interval = self.interval(self.sim.world.characters[agent])
            await asyncio.sleep(self.rng.uniform(0, interval) if first else interval)
            first = False
            await self._running.wait()
            if self.stopping:
                return
            turn = asyncio.create_task(self.take_turn(agent))
            try:
                # shielded: stopping cancels this timer, never a turn in progress
                await asyncio.shield(turn)
            except asyncio.CancelledError:
                if not self.stopping:  # cancelled from outside: the turn goes too
                    turn.cancel()
                raise  # when stopping, finish() waits for the turn

    def interval(self, character: Character) -> float:
        seconds = character.think_interval or self.sim.settings.ai_defaults.think_interval
        return seconds / max(self.speed, 1e-6)

    async def _round(self, agents: list[str]) -> list[Turn]:
        order = list(agents)
        self.rng.shuffle(order)
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(self.take_turn(agent)) for agent in order]
        return [task.result() for task in tasks]

    async def take_turn(self, agent: str) -> Turn:
        """One turn, run as its own task (so ``finish`` can wait for it)."""
        task = asyncio.current_task()
        assert task is not None
        self._turns.add(task)
        thinker = self.thinkers[agent]
        try:
            await self.sim.turn_starting(agent, thinker.turns + 1)  # the run record's gate
            gate, mind = self.sim.memory_gate, self.sim.minds[agent]
            async with gate.turn(mind) as hold:  # back-pressure: the gate's holds, and
                turn = await thinker.take_turn(gate.counting(self.llm, mind), hold)  # queues
        except asyncio.CancelledError:
            if not self.stopping:
                raise
            return Turn(thinker.name, None, None, 0, error="cut short when the run stopped")
        except Exception as exc:  # the thinker's own bug: this turn is lost, not the run
            thinker.skipped += 1
            thinker.last_error = f"the turn failed: {describe(exc)}"
            turn = self._failed(agent, thinker.last_error, exc)
        finally:
            self._turns.discard(task)
        self.turns_taken[agent] += 1
        self.sim.turn_finished(agent, turn, thinker.turns, thinker.last_prompt, thinker.last_reply)
        self.sim.turn_taken(len(self.thinkers))
        self._publish(turn)
        return turn

    def _failed(self, agent: str, error: str, exc: BaseException) -> Turn:
        """Log ``exc`` with its traceback; a skipped turn saying ``error`` for the listeners."""
        name = self.thinkers[agent].name
        log.error("%s's turn was skipped: %s", name, error, exc_info=exc)
        return Turn(name, None, None, 0, error=error)

    async def finish(self, grace: float = 30.0) -> None:
        """Stop, and give the turns in progress ``grace`` seconds before cancelling them."""
        self.stop()
        for task in self.sim.memory_gate.holding & self._turns:
            task.cancel()  # held for memory: it cannot run, so nothing to wait for
        pending = [task for task in self._turns if not task.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=grace)
            for task in late:
                task.cancel()
            if late:  # a cancellation of finish itself goes through
                await asyncio.wait(late, timeout=CANCEL_WAIT)
        with contextlib.suppress(ValueError):
            self.sim.listeners.remove(self._publish)

    def _publish(self, happening: Happening) -> None:
        for listener in self._listeners:
            try:
                listener(happening)
            except Exception:  # one broken listener must not end the run
                log.exception("a listener of the run failed on %r", happening)
