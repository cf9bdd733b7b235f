"""``mudsim serve``: the world live, its agents thinking, MUD clients joining over telnet
and browsers over the web (``engine.web``).

    mudsim serve worlds/demo.yaml --vault V --telnet 4000 --web 8080

The world runs as ``run --headless`` runs it (the LLM chosen and checked the same way,
an unreachable one is exit 3; the narrative on stdout, one event a line), and the
server listens beside it (``engine.telnet.server``). ``--turns N`` lets each agent take
N turns, then they stand still while players play on. Logins, logouts and failures
are said on stderr and kept in ``logs/telnet.log``.

Stopping: Ctrl-C or SIGTERM tells every client the world is stopping and closes the
connections, lets turns in progress finish (at most 30 s; a second Ctrl-C cuts them
short), saves and exits 0. ``mudsim run --telnet`` (or ``--web``) serves the world the
same way with the terminal UI open (``served``): when the app closes, the clients are
told first.

``Listen`` says which listeners open: telnet (on ``ServeOptions.port``), the web page
(``WebServer``, on its own port, same address), or both; without telnet the
``MudServer`` still runs every login and session, it only does not listen. With
``--tls-cert``/``--tls-key`` (``tls_context``) both speak TLS; the certificate is
checked first (``engine.telnet.certificates``: expired, not yet valid, another host's).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import ssl
import sys
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from engine.errors import UsageError
from engine.sim.run import Narrator, RunOptions, connect, cost_line, start_agents, summary
from engine.sim.run_ending import end_reason, graceful_interrupts, wind_down
from engine.sim.simulation import Simulation
from engine.telnet.certificates import refuse_passphrase
from engine.telnet.server import MudServer
from engine.telnet.settings import DEFAULT_BIND, ServeOptions, load_config
from engine.web.server import WebServer


@dataclass(frozen=True)
class Listen:
    """Which listeners open: telnet (on ``ServeOptions.port``) and the web page."""

    telnet: bool = True
    web: int | None = None
    """The web page's port (0: any free port), or None for no web page."""


def tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A server's TLS context from a PEM certificate (chain) and its private key; a file
    that cannot be read, a pair that does not match or an encrypted key is one
    ``UsageError``."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key, password=refuse_passphrase(key))  # never a prompt
    except FileNotFoundError as exc:
        missing = exc.filename or (cert if not Path(cert).exists() else key)
        raise UsageError(f"cannot read the TLS certificate or key: no file {missing}") from exc
    except ssl.SSLError as exc:
        raise UsageError(f"the TLS certificate {cert} and key {key} are not a certificate "
                         f"and its private key in PEM form ({exc.reason or exc})") from exc  # fmt: skip
    except OSError as exc:
        raise UsageError(f"cannot read the TLS certificate {cert} or key {key}: "
                         f"{exc.strerror or exc}") from exc  # fmt: skip
    return context


def exposure_warning(bind: str, *, tls: bool = False) -> str | None:
    """The warning for listening beyond this machine (anything but a loopback address),
    or None."""
    if bind == "localhost":
        return None
    with contextlib.suppress(ValueError):
        if ipaddress.ip_address(bind).is_loopback:
            return None
    warning = f"listening on {bind}: anyone who can reach this machine there may try to log in"
    if tls:
        return warning
    return (warning + ", and telnet sends passwords unencrypted (as does the web page: "
            "--tls-cert and --tls-key encrypt both)")  # fmt: skip


def _warnings(telnet: ServeOptions) -> list[str]:
    """The exposure warning, if any, then the TLS certificate's (``tls_warnings``)."""
    exposed = exposure_warning(telnet.bind, tls=telnet.tls is not None)
    return ([] if exposed is None else [exposed]) + list(telnet.tls_warnings)


@contextlib.asynccontextmanager
async def listening(server: MudServer, telnet: ServeOptions,
                    listen: Listen) -> AsyncIterator[WebServer | None]:  # fmt: skip
    """``server`` listening on telnet and/or the web (the web server, if any) while the
    block runs; then every client is told and every connection closed."""
    web = None if listen.web is None else WebServer(server, listen.web, telnet.bind, telnet.tls)
    try:
        if listen.telnet:
            await server.start()
        else:
            await server.start(listen=False)  # all that start does but the listener
        if web is not None:
            await web.start()
        yield web
    finally:
        if web is not None:
            await web.close()
        await server.close()


async def serve(options: RunOptions, telnet: ServeOptions, environ: Mapping[str, str],
                out: TextIO | None = None, listen: Listen | None = None) -> None:  # fmt: skip
    out = out or sys.stdout
    listen = listen or Listen()
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
            async with listening(server, telnet, listen) as web:
                _said_listening(server if listen.telnet else None, web, telnet)
                with graceful_interrupts(stop, abort):
                    try:
                        async with asyncio.TaskGroup() as group:
                            group.create_task(scheduler.run(options.turns), name="agents")
                            await stopping.wait()
                    except BaseExceptionGroup as failed:  # one line for the user, as anywhere
                        raise failed.exceptions[0] from failed
                    reason = end_reason(scheduler, options.turns)
        finally:
            await wind_down(sim, scheduler, dispatcher)
            await sim.checkpoint()
            sim.end_record(reason)
        print(summary(scheduler, dispatcher, time.perf_counter() - started), file=out, flush=True)
        print(cost_line(sim), file=out, flush=True)
    finally:
        sim.end_record("error")  # only if it was not closed above
        sim.close()


def _said_listening(server: MudServer | None, web: WebServer | None,
                    telnet: ServeOptions) -> None:  # fmt: skip
    """After the log's "serving WORLD on ADDR port N" (on stderr too): how to join."""
    for warning in _warnings(telnet):
        print(f"mudsim: warning: {warning}", file=sys.stderr, flush=True)
    host = "localhost" if telnet.bind in ("0.0.0.0", "::", "") else telnet.bind
    joining = "accounts, and new names" if telnet.open else "accounts: mudsim account add"
    if server is not None:
        secure = ", over TLS: a client that speaks it" if telnet.tls is not None else ""
        print(f"mudsim: connect with: telnet {host} {server.port} ({joining}{secure})",
              file=sys.stderr, flush=True)  # fmt: skip
    if web is not None:
        print(f"mudsim: play in a browser at {web.url} ({joining})", file=sys.stderr,
              flush=True)  # fmt: skip


@contextlib.asynccontextmanager
async def served(sim: Simulation, telnet: ServeOptions,
                 listen: Listen | None = None) -> AsyncIterator[MudServer]:  # fmt: skip
    """The world served while the block runs (``run --telnet``/``--web``, beside the
    TUI); the clients are told when it ends. Connections are logged to
    ``logs/telnet.log``."""
    for warning in _warnings(telnet):
        sim.warn(warning)
    server = MudServer(sim, telnet)
    async with listening(server, telnet, listen or Listen()):
        yield server


__all__ = ["DEFAULT_BIND", "Listen", "exposure_warning", "listening", "serve", "served",
           "tls_context"]  # fmt: skip
