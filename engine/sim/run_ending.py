"""How a run ends: what a Ctrl-C (or SIGTERM, or a player leaving) does, what is waited
for and for how long, and the wind-down every run goes through.

- ``RunEnding``: a first press stops dispatching; turns and summary calls in progress
  may finish within ``SHUTDOWN_GRACE`` s, counted down; knowledge passes and dreams are
  left for the next run at once. A second press (or the grace's end) cuts everything
  short. A batch whose turns are done waits for its last memory work instead.
- ``wind_down``: the end of every run (headless, ``play``, ``serve``, a fork): turns,
  memory work, the supervisor and the dispatcher, in that order.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

from engine.commands.helpers import counted, join_names
from engine.llm.dispatcher import Dispatcher
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation

SHUTDOWN_GRACE = 30.0
"""Seconds turns in progress may take to finish once a run ends."""


async def wind_down(sim: Simulation, scheduler: Scheduler | None, dispatcher: Dispatcher,
                    ending: RunEnding | None = None) -> None:  # fmt: skip
    """A stopped run: turns and summary calls in progress get what is left of the grace
    (knowledge passes and dreams are left for the next run). With an ``ending`` whose
    turns are done (a batch), the memory work the run's end starts gets as long as it
    takes, or until a Ctrl-C. Every task ends."""
    patient = ending is not None and ending.patient
    if scheduler is not None:
        await scheduler.finish(ending.remaining() if ending is not None else SHUTDOWN_GRACE)
    if ending is not None:
        ending.memory_phase = True
    grace = None if patient else ending.remaining() if ending is not None else SHUTDOWN_GRACE
    await sim.wind_down_memory(grace, say=ending.waiting if ending is not None else None,
                               passes=patient)  # fmt: skip
    await sim.supervisor.aclose()
    cut = ending is not None and ending.cut_short
    await dispatcher.aclose(grace=0.0 if cut else 1.0)  # cut short: no call is waited for
    if ending is not None:
        ending.close()


COUNTDOWN_EVERY = 5.0
"""Seconds between the lines that count a stop's wait down."""


class RunEnding:
    """How a headless run ends, and what Ctrl-C (or SIGTERM) does meanwhile.

    While turns run, a first press stops the run: the turns and summary calls in progress
    may finish, within ``grace`` s counted down on stderr, and the knowledge passes and
    dreams in progress are left for the next run at once (``Simulation.leave_memory_work``).
    A second press, or the grace's end, cuts everything short: the run saves and exits at
    once. A run whose turns are all done (``--turns``: a batch) instead waits for the
    memory work its end starts (the last summaries and knowledge passes, which a small
    local model can take minutes over) as long as it takes; a press then cuts it short,
    leaving what is not committed for the next run."""

    def __init__(self, sim: Simulation, scheduler: Scheduler, err: TextIO | None = None,
                 *, grace: float | None = None, say_idle: bool = True) -> None:  # fmt: skip
        self.sim, self.scheduler, self.err = sim, scheduler, err or sys.stderr
        self.grace = SHUTDOWN_GRACE if grace is None else grace
        self.say_idle = say_idle
        """``say_idle``: a stop with nothing to wait for is said too (``play``: silent)."""
        self.patient = False
        """The turns are done: the memory work gets as long as it takes."""
        self.memory_phase = False
        self.presses = 0
        self.cut_short = False
        """A second press (or the grace's end) cut the work in progress short."""
        self.deadline: float | None = None
        """When a stopped run's wait ends (the loop's clock), from the first press."""
        self._timers: list[asyncio.TimerHandle] = []

    def press(self) -> None:
        self.presses += 1
        if self.presses > 1 or (self.memory_phase and self.patient):
            self._cut(at_once=True)
            return
        loop = asyncio.get_running_loop()
        self.deadline = loop.time() + self.grace
        left = self.sim.memory_in_progress(summaries=False)
        self.scheduler.stop()
        self.sim.leave_memory_work()
        waiting = self._waiting_for()
        if waiting or left or self.say_idle:
            self._say(stop_line(waiting, left, self.grace))
        ticks = int((self.grace - 0.5) // COUNTDOWN_EVERY)
        self._timers = [loop.call_at(self.deadline - self.grace + COUNTDOWN_EVERY * k,
                                     self._count_down) for k in range(1, ticks + 1)]  # fmt: skip
        self._timers.append(loop.call_at(self.deadline, self._cut))

    def remaining(self) -> float:
        """Seconds a stopped run may still wait (the whole grace before a press)."""
        if self.deadline is None:
            return self.grace
        return max(0.0, self.deadline - asyncio.get_running_loop().time())

    def waiting(self, work: str) -> None:
        if self.patient:
            self._say(f"the turns are done; finishing {work} before saving (Ctrl-C leaves "
                      "what is unfinished for the next run)")  # fmt: skip

    def close(self) -> None:
        """The run has ended: no more countdown."""
        for timer in self._timers:
            timer.cancel()
        self._timers.clear()

    def _waiting_for(self) -> str:
        turns = sum(1 for thinker in self.scheduler.thinkers.values() if thinker.thinking)
        summaries = self.sim.compactor.calls_in_flight
        return join_names([counted(turns, "turn", "turns")] * bool(turns)
                          + [counted(summaries, "summary call", "summary calls")] * bool(summaries),
                          empty="")  # fmt: skip

    def _count_down(self) -> None:
        waiting = self._waiting_for()
        if waiting:
            self._say(f"still waiting for {waiting} ({self.remaining():.0f} s left; "
                      "Ctrl-C again to stop at once)")  # fmt: skip

    def _cut(self, *, at_once: bool = False) -> None:
        self.close()
        self.cut_short = True
        if at_once:
            cut, left = self._waiting_for(), self.sim.memory_in_progress(summaries=False)
            parts = [f"cutting short {cut}"] * bool(cut) + [f"leaving {left} for the next run"] * bool(left)  # fmt: skip
            if parts:
                self._say("stopping now: " + "; ".join(parts))
        self.scheduler.abort()
        self.sim.cut_memory_short()

    def _say(self, line: str) -> None:
        print(f"mudsim: {line}", file=self.err, flush=True)


def stop_line(waiting: str, left: str, grace: float) -> str:
    """What a first Ctrl-C says: what it waits for, how long at most, what it leaves."""
    head = (f"stopping: waiting at most {grace:.0f} s for {waiting} in progress"
            if waiting else "stopping: nothing in progress to wait for")  # fmt: skip
    leaves = f"; {left} left for the next run" if left else ""
    return f"{head}{leaves} (Ctrl-C again to stop at once)"


def end_reason(scheduler: Scheduler, turns: int | None) -> str:
    """Why a run ended, as its record says."""
    if turns is not None and all(n >= turns for n in scheduler.turns_taken.values()):
        return "turns done"
    return "stopped"


STOPPING = "stopping: letting turns in progress finish (Ctrl-C again to cut short)"


@contextlib.contextmanager
def graceful_interrupts(
    stop: Callable[[], None], abort: Callable[[], None], *, say: str | None = STOPPING
) -> Iterator[None]:
    """The first Ctrl-C (or SIGTERM) calls ``stop`` (saying ``say``), a second ``abort``."""
    loop = asyncio.get_running_loop()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            if say is not None:
                print(f"mudsim: {say}", file=sys.stderr, flush=True)
            stop()
        else:
            abort()

    installed = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Not on Windows' loop, nor off the main thread: Ctrl-C then stays Python's
        # KeyboardInterrupt, which the CLI turns into one line.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, on_signal)
            installed.append(signum)
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
