"""The default executor: a local process pool (``concurrent.futures``), one run per
worker at a time, the workers kept from run to run.

Workers are forked by a fork server (``forkserver``: a fresh interpreter that imported
the run's code once, with none of the sweep's threads or open files), so a worker starts
in milliseconds instead of importing mudsim again; ``spawn`` where there is no fork
server (Windows). Each worker leaves the terminal's process group, so a Ctrl-C reaches
the sweep alone (which lets runs in progress finish, or on a second Ctrl-C kills the
workers), and ends itself the moment the sweep's process ends, so a sweep killed with
SIGKILL leaves no run going on behind it (a restart would race it for the same folder).

A worker that dies (a crash in a C library, the out-of-memory killer) breaks the pool:
every run in flight is recorded failed, with that said, and the rest go on in a new pool.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import multiprocessing.context
import os
import select
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures.process import BrokenProcessPool
from typing import Final

from engine.lab.sweep.executor import Hooks, Worker, failed
from engine.lab.sweep.run import RunTask, execute_run
from engine.lab.sweep.store import Outcome

WATCH_SECONDS: Final = 0.5
"""How often a worker looks for the sweep where it cannot be told at once (not Linux)."""
PRELOAD: Final = ("engine.lab.sweep.run", "httpcore", "anyio._backends._asyncio")
"""What the fork server imports once, for every worker it forks: the run's code, and what
its HTTP client imports only when it first connects (one that is missing is skipped)."""
POLL_SECONDS: Final = 0.5
"""How often the pool looks up from waiting (a Ctrl-C is handled at once anyway)."""


def _worker_start(sweep_pid: int) -> None:
    """In each worker: out of the terminal's process group, and gone with the sweep."""
    setpgid = getattr(os, "setpgid", None)  # not on Windows
    if setpgid is not None:
        with contextlib.suppress(OSError):
            setpgid(0, 0)
    _exit_with(sweep_pid)


def _exit_with(pid: int) -> None:
    """End this worker the moment process ``pid`` ends (a kernel signal on the parent's
    death would not do: a worker's parent is the fork server, which lives as long as any
    worker does). On Linux a pidfd becomes readable then; elsewhere the pid is looked for
    twice a second. The watcher's one act is to end the process."""
    pidfd = None
    with contextlib.suppress(AttributeError, OSError):  # not Linux 5.3+, or already gone
        pidfd = os.pidfd_open(pid)
    if pidfd is None and not _alive(pid):
        os._exit(1)

    def watch() -> None:
        if pidfd is not None:
            select.select([pidfd], [], [])
        else:
            while _alive(pid):
                time.sleep(WATCH_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="sweep-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but is not ours to signal
        return True
    return True


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(PRELOAD))  # not __main__: no script runs again
        return context
    return multiprocessing.get_context("spawn")


class PoolExecutor:
    def __init__(self, workers: int, worker: Worker = execute_run) -> None:
        self.slots = max(1, workers)
        self.worker = worker

    def _pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(max_workers=self.slots, mp_context=_context(),
                                      initializer=_worker_start, initargs=(os.getpid(),))  # fmt: skip

    def run(self, tasks: Sequence[RunTask], hooks: Hooks) -> None:
        waiting = deque(tasks)
        pool = self._pool()
        in_flight: dict[cf.Future[Outcome], RunTask] = {}
        try:
            while waiting or in_flight:
                while waiting and len(in_flight) < self.slots and not hooks.stopping():
                    task = waiting.popleft()
                    in_flight[pool.submit(self.worker, task)] = task
                    hooks.started(task)
                if not in_flight:
                    return
                done, _ = cf.wait(in_flight, timeout=POLL_SECONDS,
                                  return_when=cf.FIRST_COMPLETED)  # fmt: skip
                broken = False
                for future in done:
                    task = in_flight.pop(future)
                    outcome, died = _outcome_of(future, task)
                    broken = broken or died
                    hooks.finished(task, outcome)
                if broken:  # every run in flight has failed with it: count them, start anew
                    for future in cf.as_completed(list(in_flight)):
                        hooks.finished(in_flight[future], _outcome_of(future, in_flight[future])[0])
                    in_flight.clear()
                    pool.shutdown(wait=True)
                    pool = self._pool()
        finally:
            if in_flight:  # a second Ctrl-C, or an error of the sweep's own: stop them now
                _kill_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)


def _outcome_of(future: cf.Future[Outcome], task: RunTask) -> tuple[Outcome, bool]:
    """The run's outcome, and whether its worker died."""
    try:
        return future.result(), False
    except BrokenProcessPool:
        return failed(task, "a worker process died while this run was in progress (killed, "
                            "or a crash in native code); it runs again next time"), True  # fmt: skip
    except Exception as exc:  # e.g. a task that could not be sent to the worker
        return failed(task, f"the worker could not run it: {type(exc).__name__}: {exc}"), False


def _kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Kill the pool's processes (Python 3.14 has ``kill_workers``; before it, the pool
    keeps them in ``_processes``, pid -> process)."""
    kill = getattr(pool, "kill_workers", None)
    if callable(kill):
        kill()
        return
    for process in list(getattr(pool, "_processes", {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.kill()
