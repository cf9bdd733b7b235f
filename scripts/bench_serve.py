"""``bench.py serve``: ``mudsim serve`` under a crowd of telnet and web clients, against
the same world unloaded.

    python scripts/bench.py serve                      # 100 telnet + 50 web, 60 s, 3 runs
    python scripts/bench_serve.py                      # a quick look: 8 + 4 clients, 10 s
    python scripts/bench_serve.py --telnet 100 --web 50 --seconds 60 --unloaded-seconds 20 \\
        --repeats 3 [--json] [--keep DIR [--profile]] [--memory-window N]

Time it alone (``flock /tmp/bench.lock ...`` where other benchmarks share the machine):
the server's loop has little headroom under this load, so another process's work on
the same cores shows in every figure (``server_cpu_wait_pct_loaded`` says how much).

Two processes. The server is the real ``mudsim serve`` (``python -m engine.cli serve
--telnet 0 --web 0 --open --llm fake:...``) on a vault made for the run: 3 rooms in a
row, one agent in each on the scripted ``fake:`` model thinking every ``THINK_S`` s, and
``config/telnet.md`` with the caps raised for the test (``max_connections: 400``,
``max_per_address: 10``; ``max_logging_in`` stays a quarter of that, 100). The load
generator is this process: N telnetlib3 clients and M websocket clients (as the page
speaks: ``{"type": "line", ...}``, no Origin), in one asyncio loop.

A run:

1. **unloaded**: the agents alone for ``--unloaded-seconds`` (the server's CPU and RSS
   from ``/proc``, its agents' turns from the run record's ``turn`` events);
2. **logins**: every client, as a new name (``--open``: name, yes, the password twice),
   ``LOGINS_AT_ONCE`` at a time, from ``ADDRESSES`` source addresses (sockets bound to
   127.0.0.1 ... 127.0.0.30, so the server counts 5 an address), walks to its room
   (clients spread over the rooms, telnet and web alike) and starts chatting: a line
   every 4-6 s, 60% ``say`` (with a token of its own), the rest ``look`` / ``who``;
3. **loaded**: ``--seconds`` of that, once every client is in its room (and a
   ``SETTLE_S`` settling);
4. **SIGTERM** while the clients still chat (``GRACE_S`` after the window); the time
   until the server has exited, its exit code, and whether the world was saved (the
   record's ``save`` and ``end`` events after the signal, ``world/world.yaml`` written
   after it and holding every player).

Figures, each a median over the runs (``_min``/``_max`` beside it):

- ``delivery_ms_p50/_p95/_p99``: from a client's ``say`` (just before it is written to
  the socket) to the line's arrival at each client in the room, **the sender's own
  echo included**, on this process's one monotonic clock, over every arrival of the
  says sent in the loaded window; ``arrivals``, ``missed`` (expected arrivals that never
  came before the SIGTERM);
- ``to_gate_ms_p50/_p95``: from the say to its ``input`` event in the run record (the
  server passed the record's gate and runs it): where a slow delivery waits;
- ``turns_per_s_unloaded``, ``turns_per_s_loaded``, ``turns_ratio`` (loaded /
  unloaded: the target is >= 0.5);
- ``server_cpu_pct_unloaded/_loaded`` (100 = one core), ``server_rss_mb_unloaded/
  _loaded`` (the highest VmRSS sampled each second), ``server_hwm_mb`` (VmHWM before the
  signal); ``server_cpu_wait_pct_*`` (the server's main thread ready to run but waiting
  for a core: other processes' load, ``/proc/PID/task/PID/schedstat``),
  ``server_sleeps_per_s_*`` (its main thread's voluntary context switches: waits for
  input, and every blocking fsync or rename on the loop), ``machine_busy_pct_*`` (all
  cores, anyone's, ``/proc/stat``); ``generator_cpu_pct`` and ``generator_lag_ms_p95``
  (this process's own loop: a saturated generator inflates the delivery figures);
- ``player_summary_calls`` (summary and merge calls in the record's ``calls.jsonl`` for
  a character that is no agent: 0 by default, players' summaries are extractive in a
  served world), ``player_calls`` (any call for them), ``agent_summary_calls``;
- ``login_s`` (every client logged in and in its room: within 120 s), ``logged_in``;
- ``stop_s`` (SIGTERM to exit: within 10 s), ``exit_code``, ``saved`` (1 or 0).

Every wait is bounded; the server is killed whatever happens. For a diagnosis:
``--keep DIR`` keeps each run's folder (vault and run record, the server's stdout and
stderr), ``--profile`` runs the server under cProfile (``DIR/runN/serve.prof``; it slows
the server), ``--memory-window N`` sets every character's memory windows (5000: nobody
compacts in a run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from bench_common import summary

ROOT = Path(__file__).resolve().parents[1]
ROOMS = 3
THINK_S = 2.0
"""Each agent's ``think_interval``."""
ADDRESSES = 30
LOGINS_AT_ONCE = 4
GAP_S = (4.0, 6.0)
"""A client's pause between two lines."""
SAY_SHARE = 0.6
CAPS = {"max_connections": 400, "max_per_address": 10}
"""``config/telnet.md`` for the test (the rest at their defaults)."""
PASSWORD = "bench-password"
SETTLE_S = 3.0
"""After the last login, before the loaded window: the chatter spreads out."""
GRACE_S = 3.0
"""After the loaded window, before the SIGTERM: the window's last says arrive."""
LOGIN_LIMIT_S = 240.0
STOP_LIMIT_S = 60.0
"""How long the bench waits for the server to exit after SIGTERM (the target is 10 s)."""


class Size(NamedTuple):
    telnet: int
    web: int
    seconds: float
    """The loaded window."""
    unloaded: float
    """The unloaded window."""
    repeats: int


FULL = Size(telnet=100, web=50, seconds=60.0, unloaded=20.0, repeats=3)
"""The issue's load (``bench.py serve``)."""
QUICK = Size(telnet=8, web=4, seconds=10.0, unloaded=5.0, repeats=1)
"""``bench_serve.py``'s defaults: a quick look."""
TOKEN = re.compile(r"zq\d+n\d+")
SUMMARY_KINDS = frozenset({"summary", "merge"})
"""The kinds of calls in ``calls.jsonl`` that are memory summaries."""
AGENT_SCRIPT = ";".join(
    line
    for n in range(40)
    for line in (f"say Agent line {n}.", f"emote nods, {n}.", f"think Thought {n}.")
)
"""The agents' ``fake:`` replies, all different (a reply repeating the agent's last is
asked again), none a move: the agents stay in their rooms."""
AGENT_NAMES = [f"Agent{r}" for r in range(ROOMS)]


def world_yaml() -> str:
    lines = ["name: Bench", "rooms:"]
    for r in range(ROOMS):
        exits = {**({"west": f"r{r - 1}"} if r else {}),
                 **({"east": f"r{r + 1}"} if r + 1 < ROOMS else {})}  # fmt: skip
        lines += [f"  - id: r{r}", f"    name: Room {r}", "    description: A plain room.",
                  "    exits: {" + ", ".join(f"{k}: {v}" for k, v in exits.items()) + "}"]  # fmt: skip
    lines.append("characters:")
    for r, name in enumerate(AGENT_NAMES):
        lines.append(f"  - {{name: {name}, type: agent, location: r{r}, profile: A talker., "
                     f"think_interval: {THINK_S}}}")  # fmt: skip
    return "\n".join(lines) + "\n"


def prepare(folder: Path, memory_window: int | None = None) -> tuple[Path, Path]:
    """The world file and the vault (its ``config/telnet.md`` with ``CAPS``; with
    ``memory_window``, every character's immediate and recent windows: a diagnosis, no
    compaction in a run)."""
    from engine.telnet.settings import TelnetConfig, config_path
    from engine.vault.files import write_front_matter

    world = folder / "bench.yaml"
    world.write_text(world_yaml(), encoding="utf-8")
    vault = folder / "vault"
    path = config_path(vault)
    path.parent.mkdir(parents=True)
    config = TelnetConfig.model_validate(CAPS)
    write_front_matter(path, config.model_dump(mode="json"), "# Telnet\n\nRaised for the bench.\n")
    if memory_window is not None:
        windows = {"immediate_window": memory_window, "recent_window": memory_window}
        write_front_matter(path.parent / "memory_compaction.md", windows, "# Memory compaction\n")
    return world, vault


# -- the server, from outside -----------------------------------------------------------
class Server:
    """``mudsim serve`` in its own process: its ports, and its CPU and memory from /proc."""

    def __init__(self, folder: Path, world: Path, vault: Path, *, profile: bool = False) -> None:
        self.out_path, self.err_path = folder / "serve.out", folder / "serve.err"
        self.vault = vault
        profiler = ["-m", "cProfile", "-o", str(folder / "serve.prof")] if profile else []
        with self.out_path.open("wb") as out, self.err_path.open("wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, *profiler, "-m", "engine.cli", "serve", str(world),
                 "--vault", str(vault),
                 "--telnet", "0", "--web", "0", "--open", "--seed", "1",
                 "--llm", f"fake:{AGENT_SCRIPT}"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
        self.ticks = os.sysconf("SC_CLK_TCK")

    async def ports(self, limit: float = 60.0) -> tuple[int, int]:
        """(telnet, web), as ``serve`` says them on stderr."""
        async with asyncio.timeout(limit):
            while True:
                text = self.err_path.read_text(encoding="utf-8", errors="replace")
                telnet = re.search(r"serving .* on [\d.]+ port (\d+)", text)
                web = re.search(r"serving .* to browsers on [\d.]+ port (\d+)", text)
                if telnet and web:
                    return int(telnet[1]), int(web[1])
                if self.process.poll() is not None:
                    raise RuntimeError(f"mudsim serve exited ({self.process.returncode}): "
                                       f"{text.strip()[-2000:]}")  # fmt: skip
                await asyncio.sleep(0.1)

    def cpu_s(self) -> float:
        """User + system seconds the server has used (every thread)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.ticks

    def waited_s(self) -> float:
        """Seconds the server's main thread (its event loop) was ready to run but waited
        for a core (``/proc/PID/task/PID/schedstat``: a busy machine, not the server)."""
        pid = self.process.pid
        return int(Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()[1]) / 1e9

    def sleeps(self) -> int:
        """How often the server's main thread has blocked (its voluntary context
        switches: an idle loop's wait for input, and every fsync, rename or read that
        waits for the disk)."""
        pid = self.process.pid
        for line in Path(f"/proc/{pid}/task/{pid}/status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
        return 0

    def memory_mb(self) -> dict[str, float]:
        """VmRSS and VmHWM in MB."""
        found: dict[str, float] = {}
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key] = int(value.split()[0]) / 1024
        return found

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)


# -- the load ---------------------------------------------------------------------------
@dataclass
class Said:
    """One ``say`` a client sent: when, and who was in the room to hear it."""

    sender: int
    room: int
    mono: float
    wall: float
    expected: frozenset[int]


@dataclass
class Load:
    rooms: list[set[int]] = field(default_factory=lambda: [set() for _ in range(ROOMS)])
    """The clients in each room, chatting."""
    said: dict[str, Said] = field(default_factory=dict)
    arrivals: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    lines: Counter[str] = field(default_factory=Counter)
    """Lines sent, by verb."""
    sent: list[float] = field(default_factory=list)
    """When each line was sent."""
    counting: bool = True
    """Arrivals are noted (until the SIGTERM)."""
    errors: Counter[str] = field(default_factory=Counter)

    def arrived(self, client: int, text: str, now: float) -> None:
        if self.counting and "zq" in text:
            for token in TOKEN.findall(text):
                self.arrivals[token].setdefault(client, now)


@dataclass
class Client:
    number: int
    kind: str
    """``telnet`` or ``web``."""
    room: int
    address: str
    logged_in: bool = False
    placed: bool = False
    closed: bool = False

    @property
    def name(self) -> str:
        return f"{'Tel' if self.kind == 'telnet' else 'Web'}{self.number:03d}"


def make_clients(telnet: int, web: int) -> list[Client]:
    """Telnet and web clients interleaved (each room gets both kinds), room by number,
    address by number (consecutive clients from different addresses)."""
    kinds = sorted([("telnet", (i + 0.5) / telnet) for i in range(telnet)]
                   + [("web", (i + 0.5) / web) for i in range(web)], key=lambda k: k[1])  # fmt: skip
    return [Client(n, kind, n % ROOMS, f"127.0.0.{n % ADDRESSES + 1}")
            for n, (kind, _) in enumerate(kinds)]  # fmt: skip


class Telnet:
    """A telnetlib3 client's side of the dialogue."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self.reader, self.writer, self.buffer = reader, writer, ""

    @classmethod
    async def open(cls, port: int, client: Client) -> Telnet:
        import telnetlib3

        reader, writer = await telnetlib3.open_connection(
            "127.0.0.1", port, cols=250, term="dumb", connect_minwait=0.0,
            local_addr=(client.address, 0),
        )  # fmt: skip
        return cls(reader, writer)

    async def until(self, text: str) -> None:
        while text not in self.buffer:
            chunk = await self.reader.read(65536)
            if not chunk:
                raise ConnectionError(f"closed while waiting for {text!r}: {self.buffer[-300:]!r}")
            self.buffer += chunk
        self.buffer = self.buffer[self.buffer.index(text) + len(text) :]

    async def send(self, line: str) -> None:
        self.writer.write(line + "\r\n")

    async def listen(self, client: Client, load: Load) -> None:
        pending = self.buffer
        while chunk := await self.reader.read(65536):
            now = time.monotonic()
            pending += chunk
            *lines, pending = pending.split("\n")
            for line in lines:
                load.arrived(client.number, line, now)

    async def close(self) -> None:
        self.writer.close()


class Web:
    """A websocket client, speaking as the page does."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket

    @classmethod
    async def open(cls, port: int, client: Client) -> Web:
        from websockets.asyncio.client import connect

        socket = await connect(f"ws://127.0.0.1:{port}/ws", proxy=None, compression=None,
                               ping_interval=None, open_timeout=30,
                               local_addr=(client.address, 0))  # fmt: skip
        return cls(socket)

    async def until(self, text: str) -> None:
        """Until a ``prompt`` message saying ``text``."""
        while True:
            message = json.loads(await self.socket.recv())
            if message.get("type") == "prompt" and str(message.get("text")).endswith(text):
                return
            if message.get("type") == "close":
                raise ConnectionError(f"closed while waiting for {text!r}: {message}")

    async def send(self, line: str) -> None:
        await self.socket.send(json.dumps({"type": "line", "text": line}))

    async def listen(self, client: Client, load: Load) -> None:
        from websockets.exceptions import ConnectionClosed

        with contextlib.suppress(ConnectionClosed):
            async for message in self.socket:
                load.arrived(client.number, message, time.monotonic())

    async def close(self) -> None:
        await self.socket.close()


async def log_in(port: int, web_port: int, client: Client) -> Telnet | Web:
    """A new character: name, yes, the password twice; then the walk east to its room."""
    conn = await (
        Telnet.open(port, client) if client.kind == "telnet" else Web.open(web_port, client)
    )
    name = client.name
    await conn.until("Name: ")
    await conn.send(name)
    await conn.until("(yes/no) ")
    await conn.send("yes")
    await conn.until("Password: ")
    await conn.send(PASSWORD)
    await conn.until("The same again: ")
    await conn.send(PASSWORD)
    await conn.until(f"{name}> ")
    client.logged_in = True
    for _ in range(client.room):
        await conn.send("go east")
        await conn.until(f"{name}> ")
    return conn


async def chat(conn: Telnet | Web, client: Client, load: Load, stop: asyncio.Event) -> None:
    """A line every 4-6 s until ``stop``: 60% ``say`` with a token, else look or who."""
    rng = random.Random(client.number)
    sent = 0
    await asyncio.sleep(rng.uniform(0, GAP_S[1]))  # the clients out of step
    while not stop.is_set() and not client.closed:
        roll = rng.random()
        if roll < SAY_SHARE:
            token = f"zq{client.number}n{sent}"
            load.said[token] = Said(client.number, client.room, time.monotonic(), time.time(),
                                    frozenset(load.rooms[client.room]))  # fmt: skip
            line = f"say {token} is my word for today."
        else:
            line = "look" if roll < SAY_SHARE + (1 - SAY_SHARE) / 2 else "who"
        try:
            await conn.send(line)
        except Exception:  # the server went away (the SIGTERM)
            return
        load.lines[line.split()[0]] += 1
        load.sent.append(time.monotonic())
        sent += 1
        await asyncio.sleep(rng.uniform(*GAP_S))


async def play(port: int, web_port: int, client: Client, load: Load, logins: asyncio.Semaphore,
               stop: asyncio.Event) -> None:  # fmt: skip
    """One client: log in (``logins`` at a time), then listen and chat until the
    connection ends or ``stop``."""
    try:
        async with logins:
            conn = await asyncio.wait_for(log_in(port, web_port, client), 60)
    except Exception as exc:
        load.errors[f"login: {type(exc).__name__}: {str(exc)[:120]}"] += 1
        return
    load.rooms[client.room].add(client.number)
    client.placed = True
    listening = asyncio.create_task(conn.listen(client, load))
    chatting = asyncio.create_task(chat(conn, client, load, stop))
    stopped = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait([listening, stopped], return_when=asyncio.FIRST_COMPLETED)
    finally:
        client.closed = True
        load.rooms[client.room].discard(client.number)
        for task in (chatting, listening, stopped):
            task.cancel()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5):
                await conn.close()
        await asyncio.gather(chatting, listening, stopped, return_exceptions=True)


class Lag:
    """This loop's lateness: how far past 100 ms each 100 ms sleep woke."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []

    async def run(self) -> None:
        while True:
            start = time.monotonic()
            await asyncio.sleep(0.1)
            now = time.monotonic()
            self.samples.append((now, (now - start - 0.1) * 1000))

    def within(self, start: float, end: float) -> list[float]:
        return [lag for when, lag in self.samples if start <= when <= end]


class Sampler:
    """The server's memory each second (the highest VmRSS of each window)."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.samples: list[tuple[float, float]] = []

    async def run(self) -> None:
        while True:
            with contextlib.suppress(OSError, ValueError, KeyError):
                self.samples.append((time.monotonic(), self.server.memory_mb()["VmRSS"]))
            await asyncio.sleep(1.0)

    def highest(self, start: float, end: float) -> float:
        return max((rss for when, rss in self.samples if start <= when <= end), default=0.0)


def machine_jiffies() -> tuple[int, int]:
    """(busy, all) jiffies of every core since boot (``/proc/stat``)."""
    numbers = [int(n) for n in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = numbers[3] + numbers[4]  # idle, iowait
    return sum(numbers[:8]) - idle, sum(numbers[:8])


@dataclass
class Window:
    mono: tuple[float, float]
    wall: tuple[float, float]
    cpu_s: float
    """The server's CPU seconds."""
    process_s: float
    """This process's (the load generator's) CPU seconds."""
    waited_s: float
    """Seconds the server's loop waited for a core."""
    machine_busy: float
    """The share of every core's time that was busy (anyone's), 0-1."""
    sleeps: int
    """Times the server's loop blocked."""

    @property
    def seconds(self) -> float:
        return self.mono[1] - self.mono[0]


async def measure(server: Server, seconds: float) -> Window:
    mono, wall = time.monotonic(), time.time()
    cpu, process, waited = server.cpu_s(), time.process_time(), server.waited_s()
    busy, every = machine_jiffies()
    sleeps = server.sleeps()
    await asyncio.sleep(seconds)
    busy_after, every_after = machine_jiffies()
    return Window((mono, time.monotonic()), (wall, time.time()), server.cpu_s() - cpu,
                  time.process_time() - process, server.waited_s() - waited,
                  (busy_after - busy) / max(1, every_after - every),
                  server.sleeps() - sleeps)  # fmt: skip


async def run_once(folder: Path, telnet: int, web: int, seconds: float, unloaded: float,
                   profile: bool = False, memory_window: int | None = None) -> dict[str, Any]:  # fmt: skip
    """One server, unloaded then loaded, then the SIGTERM: the raw figures."""
    world, vault = prepare(folder, memory_window)
    server = Server(folder, world, vault, profile=profile)
    load, clients = Load(), make_clients(telnet, web)
    stop, logins = asyncio.Event(), asyncio.Semaphore(LOGINS_AT_ONCE)
    lag, sampler = Lag(), Sampler(server)
    tasks: list[asyncio.Task[None]] = []
    helpers = [asyncio.create_task(lag.run()), asyncio.create_task(sampler.run())]
    try:
        port, web_port = await server.ports()
        quiet = await measure(server, unloaded)
        login_start = time.monotonic()
        tasks = [asyncio.create_task(play(port, web_port, c, load, logins, stop)) for c in clients]
        async with asyncio.timeout(LOGIN_LIMIT_S):
            while not all(c.placed or c.closed for c in clients):  # noqa: ASYNC110
                await asyncio.sleep(0.1)
        login_s = time.monotonic() - login_start
        await asyncio.sleep(SETTLE_S)
        loaded = await measure(server, seconds)
        memory = server.memory_mb()
        await asyncio.sleep(GRACE_S)
        load.counting = False
        term_mono, term_wall = time.monotonic(), time.time()
        server.process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(server.process.wait, STOP_LIMIT_S)
        except subprocess.TimeoutExpired:
            code = None
        stop_s = time.monotonic() - term_mono
        stop.set()
        async with asyncio.timeout(30):
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        stop.set()
        for task in [*tasks, *helpers]:
            task.cancel()
        await asyncio.gather(*tasks, *helpers, return_exceptions=True)
        server.kill()
    return {
        "quiet": quiet, "loaded": loaded, "memory": memory, "login_s": login_s,
        "stop_s": stop_s, "exit_code": code, "term_wall": term_wall, "load": load,
        "clients": clients, "lag": lag, "sampler": sampler, "vault": vault, "server": server,
    }  # fmt: skip


# -- reading the record -----------------------------------------------------------------
def _tape(path: Path) -> list[dict[str, Any]]:
    found = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
    return found


def _at(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["at"]).timestamp()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def figures(raw: dict[str, Any]) -> dict[str, float]:
    """One run's figures (see the module) from its raw results and its run record."""
    quiet, loaded, load = raw["quiet"], raw["loaded"], raw["load"]
    vault: Path = raw["vault"]
    runs = sorted((vault / "runs").glob("*-serve"))
    run = runs[-1] if runs else vault / "runs" / "missing"
    events, calls = _tape(run / "events.jsonl"), _tape(run / "calls.jsonl")
    meta = json.loads((run / "run.json").read_text()) if (run / "run.json").exists() else {}
    turns = [_at(e) for e in events if e.get("kind") == "turn"]

    def rate(window: Window) -> float:
        start, end = window.wall
        return sum(start <= t < end for t in turns) / window.seconds

    # delivery: the says sent in the loaded window, at every client in the room
    start, end = loaded.mono
    delays, missed, expected = [], 0, 0
    gate_at: dict[str, float] = {}  # a say's token -> when its input passed the gate
    for event in events:
        found = TOKEN.search(event.get("line", "")) if event.get("kind") == "input" else None
        if found:
            gate_at[found[0]] = _at(event)
    to_gate = []
    for token, said in load.said.items():
        if not start <= said.mono < end:
            continue
        got = load.arrivals.get(token, {})
        for client in said.expected | {said.sender}:
            expected += 1
            if client in got:
                delays.append((got[client] - said.mono) * 1000)
            else:
                missed += 1
        if token in gate_at:
            to_gate.append((gate_at[token] - said.wall) * 1000)
    agents = {name.casefold() for name in AGENT_NAMES}
    player_calls = [c for c in calls if str(c.get("agent", "")).casefold() not in agents]
    summaries = [c for c in calls if c.get("kind") in SUMMARY_KINDS]
    player_summaries = [c for c in summaries if str(c.get("agent", "")).casefold() not in agents]
    # saved: the record's save and end after the SIGTERM, the world written after it
    term = raw["term_wall"]
    after = [e.get("kind") for e in events if "at" in e and _at(e) >= term]
    world_file = vault / "world" / "world.yaml"
    clients = raw["clients"]
    players_saved = 0
    if world_file.exists():
        text = world_file.read_text(encoding="utf-8")
        players_saved = sum(f"- {c.name}\n" in text for c in clients)
    saved = ("save" in after and "end" in after and world_file.exists()
             and world_file.stat().st_mtime >= term
             and players_saved == sum(c.logged_in for c in clients))  # fmt: skip
    lags = raw["lag"].within(*loaded.mono)
    sampler = raw["sampler"]
    turns_quiet, turns_loaded = rate(quiet), rate(loaded)
    return {
        "delivery_ms_p50": percentile(delays, 0.50),
        "delivery_ms_p95": percentile(delays, 0.95),
        "delivery_ms_p99": percentile(delays, 0.99),
        "delivery_ms_max": max(delays, default=float("nan")),
        "to_gate_ms_p50": percentile(to_gate, 0.50),
        "to_gate_ms_p95": percentile(to_gate, 0.95),
        "arrivals": len(delays),
        "expected_arrivals": expected,
        "missed": missed,
        "says_in_window": sum(start <= s.mono < end for s in load.said.values()),
        "lines_per_s": sum(start <= t < end for t in load.sent) / loaded.seconds,
        "turns_per_s_unloaded": turns_quiet,
        "turns_per_s_loaded": turns_loaded,
        "turns_ratio": turns_loaded / turns_quiet if turns_quiet else float("nan"),
        "server_cpu_pct_unloaded": 100 * quiet.cpu_s / quiet.seconds,
        "server_cpu_pct_loaded": 100 * loaded.cpu_s / loaded.seconds,
        "server_rss_mb_unloaded": sampler.highest(*quiet.mono),
        "server_rss_mb_loaded": sampler.highest(*loaded.mono),
        "server_hwm_mb": raw["memory"].get("VmHWM", 0.0),
        "server_cpu_wait_pct_unloaded": 100 * quiet.waited_s / quiet.seconds,
        "server_cpu_wait_pct_loaded": 100 * loaded.waited_s / loaded.seconds,
        "server_sleeps_per_s_unloaded": quiet.sleeps / quiet.seconds,
        "server_sleeps_per_s_loaded": loaded.sleeps / loaded.seconds,
        "machine_busy_pct_unloaded": 100 * quiet.machine_busy,
        "machine_busy_pct_loaded": 100 * loaded.machine_busy,
        "generator_cpu_pct": 100 * loaded.process_s / loaded.seconds,
        "generator_lag_ms_p95": percentile(lags, 0.95),
        "player_summary_calls": len(player_summaries),
        "player_calls": len(player_calls),
        "agent_summary_calls": len(summaries) - len(player_summaries),
        "players_extractive": float(meta.get("players") == "extractive"),
        "login_s": raw["login_s"],
        "logged_in": sum(c.logged_in for c in clients),
        "login_errors": sum(load.errors.values()),
        "stop_s": raw["stop_s"],
        "exit_code": float("nan") if raw["exit_code"] is None else raw["exit_code"],
        "saved": float(saved),
        "players_saved": players_saved,
    }


def one_run(telnet: int, web: int, seconds: float, unloaded: float, keep: Path | None = None,
            profile: bool = False, memory_window: int | None = None) -> dict[str, float]:  # fmt: skip
    """One run in a fresh folder (kept at ``keep`` when given; ``profile``: the server
    under cProfile, its stats in ``serve.prof`` there): its figures."""
    with tempfile.TemporaryDirectory(prefix="mudsim-bench-serve-") as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        raw = asyncio.run(run_once(folder, telnet, web, seconds, unloaded, profile, memory_window))
        found = figures(raw)
        if raw["load"].errors:
            print(f"bench_serve: client errors: {dict(raw['load'].errors)}", file=sys.stderr)
        return found


def bench_serve(telnet: int = FULL.telnet, web: int = FULL.web,
                seconds: float = FULL.seconds, unloaded: float = FULL.unloaded,
                repeats: int = FULL.repeats, keep: Path | None = None,
                progress: bool = False, profile: bool = False,
                memory_window: int | None = None) -> dict[str, Any]:  # fmt: skip
    """N telnet and M web clients against ``mudsim serve`` (see the module): medians over
    ``repeats`` runs, each run's figures under ``runs``."""
    runs = []
    for n in range(repeats):
        found = one_run(telnet, web, seconds, unloaded, keep / f"run{n}" if keep else None,
                        profile, memory_window)  # fmt: skip
        runs.append(found)
        if progress:
            print(f"bench_serve: run {n + 1}/{repeats}: " + ", ".join(
                f"{k} {found[k]:.1f}" for k in ("delivery_ms_p95", "turns_ratio",
                                                "server_cpu_pct_loaded", "stop_s")),
                file=sys.stderr, flush=True)  # fmt: skip
    result: dict[str, Any] = {"telnet_clients": telnet, "web_clients": web,
                              "loaded_s": seconds, "unloaded_s": unloaded, "runs_done": repeats,
                              "cores": os.cpu_count() or 0}  # fmt: skip
    for key in runs[0]:
        values = [run[key] for run in runs]
        if any(isinstance(v, float) and v != v for v in values):  # NaN: the median of what is
            values = [v for v in values if v == v] or [float("nan")]
        result |= summary(key, values)
    result["runs"] = runs
    return result


TABLE = [
    ("delivery p50 / p95 / p99 ms", ("delivery_ms_p50", "delivery_ms_p95", "delivery_ms_p99")),
    ("say to the input gate p50 / p95 ms", ("to_gate_ms_p50", "to_gate_ms_p95")),
    ("arrivals / missed", ("arrivals", "missed")),
    ("agent turns/s unloaded / loaded", ("turns_per_s_unloaded", "turns_per_s_loaded")),
    ("turn ratio (target >= 0.5)", ("turns_ratio",)),
    ("server CPU % unloaded / loaded", ("server_cpu_pct_unloaded", "server_cpu_pct_loaded")),
    ("server loop waiting for a core % un/loaded",
     ("server_cpu_wait_pct_unloaded", "server_cpu_wait_pct_loaded")),
    ("server loop blocked, times/s un/loaded",
     ("server_sleeps_per_s_unloaded", "server_sleeps_per_s_loaded")),
    ("machine busy % (all cores) un/loaded", ("machine_busy_pct_unloaded", "machine_busy_pct_loaded")),
    ("server RSS MB unloaded / loaded / HWM",
     ("server_rss_mb_unloaded", "server_rss_mb_loaded", "server_hwm_mb")),
    ("generator CPU % / loop lag p95 ms", ("generator_cpu_pct", "generator_lag_ms_p95")),
    ("player summary calls / agents'", ("player_summary_calls", "agent_summary_calls")),
    ("logged in / login s", ("logged_in", "login_s")),
    ("SIGTERM to exit s / exit code / saved", ("stop_s", "exit_code", "saved")),
]  # fmt: skip


def table(result: dict[str, Any]) -> str:
    lines = [f"mudsim serve under load: {result['telnet_clients']} telnet + {result['web_clients']} "
             f"web clients, {result['loaded_s']:g} s loaded vs {result['unloaded_s']:g} s "
             f"unloaded, median of {result['runs_done']} (min-max), {result['cores']} cores"]  # fmt: skip
    for label, keys in TABLE:
        values = " / ".join(f"{result[k]:,.1f}" for k in keys)
        spreads = " / ".join(f"{result[k + '_min']:,.1f}-{result[k + '_max']:,.1f}" for k in keys)
        lines.append(f"  {label:40} {values:>24}   ({spreads})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--telnet", type=int, default=QUICK.telnet, help="telnet clients")
    parser.add_argument("--web", type=int, default=QUICK.web, help="web clients")
    parser.add_argument("--seconds", type=float, default=QUICK.seconds, help="loaded window")
    parser.add_argument("--unloaded-seconds", type=float, default=QUICK.unloaded)
    parser.add_argument("--repeats", type=int, default=QUICK.repeats)
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep each run's folder (vault, server output) here")  # fmt: skip
    parser.add_argument("--profile", action="store_true",
                        help="run the server under cProfile (with --keep: RUN/serve.prof)")  # fmt: skip
    parser.add_argument("--memory-window", type=int, default=None, metavar="N",
                        help="diagnosis: every character's memory windows at N (5000: "
                        "nobody compacts in a run)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    args = parser.parse_args(argv)
    if args.profile and args.keep is None:
        parser.error("--profile needs --keep (the stats are written in the run's folder)")
    result = bench_serve(args.telnet, args.web, args.seconds, args.unloaded_seconds,
                         args.repeats, args.keep, progress=not args.json,
                         profile=args.profile, memory_window=args.memory_window)  # fmt: skip
    if not args.json:
        print(table(result))
    print(json.dumps({"serve": result}))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
