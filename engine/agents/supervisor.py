"""The owner of every background task of a run (structured concurrency, no I/O).

    supervisor = Supervisor(report)           # report(message, exc): log it, show it
    supervisor.spawn(compact(bo), name="compaction of Bo")
    await supervisor.wait(30)                 # let them finish, at most 30 s
    await supervisor.aclose()                 # cancel what is left and wait for it

A task is never fire-and-forget: the supervisor holds it until it ends, and a task
that ends with an exception (other than its cancellation) is handed to ``report``
with the exception, traceback and all, and a one-line message naming the task; the
caller decides where that goes (the run log, one line for the user). One task's error
never cancels the others (unlike ``asyncio.TaskGroup``, where the first error cancels
the group: one agent's failed compaction must not stop another's).

``aclose`` cancels every task and waits until each has ended. Neither ``wait`` nor
``aclose`` swallows a cancellation of the task that calls them: that task is cancelled
as asked, after passing the cancellation on to every task it owns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

Report = Callable[[str, BaseException], None]
"""Where an unexpected error goes: (one-line message, the exception with its traceback)."""


def one_line(exc: BaseException) -> str:
    """``exc`` as one line: its message (or its type, when it has none)."""
    text = " ".join(str(exc).split())
    return text if text else type(exc).__name__


class Supervisor:
    def __init__(self, report: Report) -> None:
        self.report = report
        self._tasks: dict[asyncio.Task[Any], str] = {}

    @property
    def tasks(self) -> list[asyncio.Task[Any]]:
        """The tasks still running (or not yet started)."""
        return list(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Run ``work`` as a task this supervisor owns (needs a running loop)."""
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks[task] = name
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[Any]) -> None:
        name = self._tasks.pop(task, task.get_name())
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.report(f"{name} failed: {one_line(exc)}", exc)

    async def wait(self, within: float | None = None) -> bool:
        """Wait until every task has ended, at most ``within`` s; True if they have."""
        tasks = self.tasks
        if not tasks:
            return True
        try:
            _, pending = await asyncio.wait(tasks, timeout=within)
        except asyncio.CancelledError:
            await self.aclose()
            raise
        return not pending

    async def aclose(self) -> None:
        """Cancel every task and wait until each has ended."""
        tasks = self.tasks
        for task in tasks:
            task.cancel()
        if not tasks:
            return
        try:
            await asyncio.wait(tasks)
        except asyncio.CancelledError:
            for task in tasks:  # cancelled while waiting: pass it on, then stop waiting
                task.cancel()
            raise
