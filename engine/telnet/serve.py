"""``mudsim serve``: the world live, its agents thinking, MUD clients joining over telnet.

    mudsim serve worlds/demo.yaml --vault V --telnet 4000

The world runs as ``run --headless`` runs it (the LLM chosen and checked the same way,
an unreachable one is exit 3; the narrative on stdout, one event a line), and the
server listens beside it (``engine.telnet.server``). ``--turns N`` lets each agent take
N turns, then they stand still while players play on. Logins, logouts and failures
are said on stderr and kept in ``logs/telnet.log``.

Stopping: Ctrl-C or SIGTERM tells every client the world is stopping and closes the
connections, lets turns in progress finish (at most 30 s; a second Ctrl-C cuts them
short), saves and exits 0. ``mudsim run --telnet`` serves the world the same way with
the terminal UI open (``served``): when the app closes, the clients are told first.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import sys
import time
from collections.abc import AsyncIterator, Mapping
from typing import TextIO

from engine.sim.run import Narrator, RunOptions, connect, cost_line, start_agents, summary
from engine.sim.run_ending import end_reason, graceful_interrupts, wind_down
from engine.sim.simulation import Simulation
from engine.telnet.server import MudServer
from engine.telnet.settings import DEFAULT_BIND, ServeOptions, load_config


def exposure_warning(bind: str) -> str | None:
    """The warning for listening beyond this machine (anything but a loopback address),
    or None."""
    if bind == "localhost":
        return None
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(bind).is_loopback:
            return None
    return (f"listening on {bind}: anyone who can reach this machine there may try to log "
            "in, and telnet sends passwords unencrypted")  # fmt: skip


async def serve(options: RunOptions, telnet: ServeOptions, environ: Mapping[str, str],
                out: TextIO | None = None) -> None:  # fmt: skip
    out = out or sys.stdout
    sim = Simulation.open(options.vault, options.world)
    try:
        config = load_config(sim.vault.root, write_default=True)  # before the record starts
        dispatcher, models = await connect(sim, options, environ, kind="serve")
        scheduler = start_agents(sim, dispatcher, models, options.seed)
        scheduler.listen(Narrator(sim, out))
        server = MudServer(sim, telnet, config=config, log_to_stderr=True)
        stopping = asyncio.Event()

        def stop() -> None:
            stopping.set()
            scheduler.stop()

        def abort() -> None:
            stopping.set()
            scheduler.abort()

        started, reason = time.perf_counter(), "error"
        try:
            await server.start()
            _said_listening(server, telnet)
            with graceful_interrupts(stop, abort):
                try:
                    async with asyncio.TaskGroup() as group:
                        group.create_task(scheduler.run(options.turns), name="agents")
                        await stopping.wait()
                except BaseExceptionGroup as failed:  # one line for the user, as anywhere
                    raise failed.exceptions[0] from failed
                reason = end_reason(scheduler, options.turns)
        finally:
            await server.close()
            await wind_down(sim, scheduler, dispatcher)
            await sim.checkpoint()
            sim.end_record(reason)
        print(summary(scheduler, dispatcher, time.perf_counter() - started), file=out, flush=True)
        print(cost_line(sim), file=out, flush=True)
    finally:
        sim.end_record("error")  # only if it was not closed above
        sim.close()


def _said_listening(server: MudServer, telnet: ServeOptions) -> None:
    """After the log's "serving WORLD on ADDR port N" (on stderr too): how to join."""
    warning = exposure_warning(telnet.bind)
    if warning is not None:
        print(f"mudsim: warning: {warning}", file=sys.stderr, flush=True)
    host = "localhost" if telnet.bind in ("0.0.0.0", "::", "") else telnet.bind
    joining = "accounts, and new names" if telnet.open else "accounts: mudsim account add"
    print(f"mudsim: connect with: telnet {host} {server.port} ({joining})", file=sys.stderr,
          flush=True)  # fmt: skip


@contextlib.asynccontextmanager
async def served(sim: Simulation, telnet: ServeOptions) -> AsyncIterator[MudServer]:
    """The world served while the block runs (``run --telnet``, beside the TUI); the
    clients are told when it ends. Connections are logged to ``logs/telnet.log``."""
    warning = exposure_warning(telnet.bind)
    if warning is not None:
        sim.warn(warning)
    server = MudServer(sim, telnet)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


__all__ = ["DEFAULT_BIND", "exposure_warning", "serve", "served"]
