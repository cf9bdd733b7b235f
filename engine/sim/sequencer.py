"""The order of a recorded run: what makes it replayable with several agents thinking at
once.

A run is a sequence of *steps* of the event loop. Most steps follow from the one before
(a command's events, the memory a compaction commits): given the same start they repeat
exactly. What does not repeat by itself is *when* something from outside lands: an LLM
answer arriving, a prompt being built when the server has a free slot, a turn timer
firing, a player typing. Those are the run's **gates**; each writes one event to the run
record (``send``, ``answer``, ``turn-start``, ``input``, ``wind-down``, ``settle``,
``save``).

Live (``Turnstile``), a gate waits until nothing else is ready to run (``quiet``) and
holds a lock while it writes its event, so everything that followed the previous gate
has been committed first and every gate sits at an exact place in the event stream. The
LLM calls still run concurrently on the wire: only their landings are put in a line.

In a replay (``engine.lab.replay``), the same gates are opened by the tape, in the
recorded order, and so the same steps happen in the same order.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

QUIET_STEPS = 64
"""At most this many turns of the loop are waited for it to have nothing ready (a loop
that never goes quiet, a TUI's, is not waited for forever)."""


async def quiet(limit: int = QUIET_STEPS) -> None:
    """Yield until the event loop has nothing else ready to run."""
    loop = asyncio.get_running_loop()
    for _ in range(limit):
        await asyncio.sleep(0)
        ready = getattr(loop, "_ready", None)  # CPython's ready queue; else one turn
        if not ready:
            return


class Sequencer(Protocol):
    async def gate(self, kind: str, key: str = "") -> None:
        """Wait until the gate ``kind`` (for ``key``: a call's, an agent's) may pass; the
        caller writes its event right after, without awaiting anything in between."""
        ...


class Turnstile:
    """Live: one gate at a time, each when the loop is quiet."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    async def gate(self, kind: str, key: str = "") -> None:
        async with self._lock:
            await quiet()
