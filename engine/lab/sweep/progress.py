"""How far a sweep has come, on stderr: a ``rich`` progress bar (runs done of all,
running, failed, elapsed and time left) when stderr is a terminal, otherwise one line
per finished run, e.g.::

    sweep: 3/12 done, 2 running, 0 failed, about 0:01:10 left: finished trio_..._9c1e (11.8 s)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engine.lab.sweep.store import Outcome


def time_left(done_now: int, elapsed: float, remaining: int) -> float | None:
    """Seconds left at the pace of this session's finished runs (None before the first;
    the pace already counts the runs that go on side by side)."""
    if done_now <= 0 or elapsed <= 0:
        return None
    return elapsed / done_now * remaining


def shown(seconds: float | None) -> str:
    return "?" if seconds is None else str(timedelta(seconds=round(seconds)))


class SweepProgress:
    def __init__(self, total: int, done_before: int, err: TextIO, *,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.total, self.done, self.failed, self.running = total, done_before, 0, 0
        self.done_now = 0
        self.clock = clock
        self.began = clock()
        self.err = err
        console = Console(file=err)
        self.bar: Progress | None = None
        if console.is_terminal:
            self.bar = Progress(
                TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[state]}"), TimeElapsedColumn(),
                TextColumn("{task.fields[left]} left"), console=console,
            )  # fmt: skip
            self.task = self.bar.add_task("sweep", total=total, completed=done_before,
                                          state=self._state(), left="?")  # fmt: skip
            self.bar.start()

    def _state(self) -> str:
        return f"{self.running} running, {self.failed} failed"

    def left(self) -> float | None:
        return time_left(self.done_now, self.clock() - self.began, self.total - self.done)

    def started(self) -> None:
        self.running += 1
        self._refresh()

    def finished(self, key: str, outcome: Outcome) -> None:
        self.running -= 1
        self.done += 1
        self.done_now += 1
        self.failed += outcome.status == "failed"
        if self.bar is not None:
            self._refresh()
            return
        what = (f"finished {key} ({outcome.seconds:.1f} s)" if outcome.status == "finished"
                else f"FAILED {key}: {outcome.error}")  # fmt: skip
        print(f"sweep: {self.done}/{self.total} done, {self._state()}, about "
              f"{shown(self.left())} left: {what}", file=self.err, flush=True)  # fmt: skip

    def say(self, line: str) -> None:
        """A line above the bar (or on its own)."""
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=self.err, flush=True)

    def _refresh(self) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, state=self._state(),
                            left=shown(self.left()))  # fmt: skip

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
