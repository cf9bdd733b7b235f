"""What runs a sweep's runs: the executors' shared shape, and the simplest one.

An executor takes the runs to do and the sweep's ``Hooks``: it calls ``started`` as it
hands a run to a worker, ``finished`` with each run's ``Outcome`` (a worker that died is
a failed outcome, never an exception), and asks ``stopping`` before each new run (a first
Ctrl-C: runs in progress finish, no new one starts). At most ``slots`` runs are in
flight at once, so "running" on the progress bar is exact.

- ``InProcess``: one run after another in this process (the benchmark's baseline);
- ``engine.lab.sweep.pool.PoolExecutor``: a local process pool, the default;
- ``engine.lab.sweep.ray.RayExecutor``: each run a Ray task, on this machine or a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.lab.sweep.run import RunTask, execute_run
from engine.lab.sweep.store import Outcome

Worker = Callable[[RunTask], Outcome]
"""What a worker does with one run (``execute_run``; a test may give another)."""


@dataclass
class Hooks:
    started: Callable[[RunTask], None]
    finished: Callable[[RunTask, Outcome], None]
    stopping: Callable[[], bool]


class Executor(Protocol):
    slots: int
    """Runs in flight at most."""

    def run(self, tasks: Sequence[RunTask], hooks: Hooks) -> None: ...


def failed(task: RunTask, error: str) -> Outcome:
    return Outcome(task.key, "failed", {}, error)


class InProcess:
    """Each run in this process, one at a time."""

    slots = 1

    def __init__(self, worker: Worker = execute_run) -> None:
        self.worker = worker

    def run(self, tasks: Sequence[RunTask], hooks: Hooks) -> None:
        for task in tasks:
            if hooks.stopping():
                return
            hooks.started(task)
            hooks.finished(task, self.worker(task))
