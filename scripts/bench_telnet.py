"""``bench.py telnet``: the world served to 50 MUD clients while 5 agents think.

Three processes, as in use: the loopback stub (``engine.llm.stub_server``, answering
each call in ``STUB_DELAY`` s, ``SLOTS`` calls at once), the server (this file run as
``bench_telnet.py serve``: the fixture of ``mudsim serve``, a ``MudServer`` beside the
agents' scheduler, turns back to back), and the clients (50 telnetlib3 clients in the
benchmark's own process, 10 in each of the 5 rooms with one agent, each sending a
command a second: ``say``, ``emote`` or ``look`` in turn).

Over a ``WINDOW``-second window the server notes each world event as it is delivered
(``time.monotonic``, one clock for every process of the machine) and each client notes
when each line reaches it. Reported, as medians over ``REPEATS`` runs:

- ``delivery_ms_p50`` / ``_p95``: from an event (an agent's speech, a player's say or
  emote) to its arrival at one client in its room, over every such arrival;
- ``all_delivered_ms_p50`` / ``_p95``: to its arrival at the last client in the room;
- ``turns_per_s``: the agents' turns in the window, with the clients, and
  ``turns_per_s_alone`` with none connected; ``turns_ratio`` = with / alone. The 50
  players remember what they hear, as every character does, and with the clients they
  also hear each other: their memory compactions (summary calls, files written) are
  part of this cost. ``turns_ratio_quiet`` (and ``turns_per_s_quiet``,
  ``_quiet_alone``, ``delivery_ms_p95_quiet``) is the same with the players' memory
  windows at 5,000, so no player compacts in a run: the cost of serving alone;
- ``commands_per_s``: the commands the players sent; ``missed``: arrivals that never came.

Targets: p95 event-to-delivery <= 50 ms; turns/s with clients within 10% of alone.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_common import REPEATS, rooms_yaml, summary

ROOT = Path(__file__).resolve().parents[1]
ROOMS = 5
PLAYERS = 50
WINDOW = 10.0
STUB_DELAY = 0.1
SLOTS = 2 * ROOMS
"""Calls the stub runs at once: room for every agent's turn and for the memory work
(summaries, knowledge passes) beside them."""
QUIET_WINDOW = 5000
"""The players' memory windows for ``turns_ratio_quiet``: no player compacts in a run."""
PASSWORD = "bench-password"
MODEL = "bench"


def _world(rooms: int = ROOMS, players: int = PLAYERS, window: int | None = None) -> str:
    lines = [*rooms_yaml(rooms), "characters:"]
    for r in range(rooms):
        lines += [f"  - {{name: Agent{r}, type: agent, location: r{r}, profile: A talker.}}"]
    for p in range(players):
        windows = f", immediate_window: {window}, recent_window: {window}" if window else ""
        lines += [f"  - {{name: Player{p}, type: player, location: r{p % rooms}{windows}}}"]
    return "\n".join(lines) + "\n"


# -- the server process ----------------------------------------------------------------
async def _serve(folder: Path, url: str) -> None:
    """``bench_telnet.py serve FOLDER URL``: serve FOLDER/vault; ``READY port`` on stdout,
    then ``GO`` and ``STOP`` on stdin open and close the window; the window's figures on
    stdout as one JSON line."""
    from engine.sim.run import RunOptions, connect, start_agents
    from engine.sim.run_ending import wind_down
    from engine.sim.simulation import Simulation
    from engine.telnet.server import MudServer
    from engine.telnet.settings import ServeOptions, TelnetConfig
    from engine.world.events import Event, EventKind

    world = folder / "bench.yaml"
    sim = Simulation.open(folder / "vault", world)
    options = RunOptions(world, folder / "vault", url, MODEL)
    dispatcher, models = await connect(sim, options, {}, kind="serve")
    dispatcher.endpoints[0].slots = SLOTS
    scheduler = start_agents(sim, dispatcher, models, seed=1)
    scheduler.speed = 1000.0  # turns back to back: as fast as the stub answers
    events: list[tuple[float, str, str]] = []
    window = {"open": False}

    def note(event: Event) -> None:  # before the server's listener: it writes to clients
        if window["open"] and event.kind is not EventKind.AMBIENT:
            events.append((time.monotonic(), event.room_id, event.text))

    sim.listeners.append(note)
    server = MudServer(
        sim, ServeOptions(port=0), config=TelnetConfig(max_logging_in=PLAYERS)
    )  # (all log in at once)
    await server.start()
    print(f"READY {server.port}", flush=True)
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    agents = asyncio.create_task(scheduler.run())
    await commands.readline()  # GO
    window["open"] = True
    turns_before, start = sum(scheduler.turns_taken.values()), time.monotonic()
    await commands.readline()  # STOP
    window["open"] = False
    turns, seconds = sum(scheduler.turns_taken.values()) - turns_before, time.monotonic() - start
    scheduler.stop()
    await agents
    await server.close()
    await wind_down(sim, scheduler, dispatcher)
    sim.end_record("bench")
    sim.close()
    print(json.dumps({"turns": turns, "seconds": seconds, "events": events}), flush=True)


# -- the clients -----------------------------------------------------------------------
@dataclass
class _Player:
    number: int
    room: str
    arrivals: list[tuple[float, str]] = field(default_factory=list)
    sent: int = 0
    logged_in: bool = False


async def _play(port: int, player: _Player, start: asyncio.Event, stop: asyncio.Event) -> None:
    import telnetlib3

    # each player from an address of its own, as players on their own machines are (the
    # server allows 5 connections an address)
    source = (f"127.0.{player.number // 250}.{player.number % 250 + 2}", 0)
    reader, writer = await telnetlib3.open_connection("127.0.0.1", port, cols=250, term="dumb",
                                                      connect_minwait=0.0, local_addr=source)  # fmt: skip
    name = f"Player{player.number}"
    buffer = ""

    async def read_until(text: str) -> None:
        nonlocal buffer
        while text not in buffer:
            buffer += await reader.read(65536)
        buffer = buffer[buffer.index(text) + len(text) :]

    await read_until("Name: ")
    writer.write(f"{name}\r\n")
    await read_until("Password: ")
    writer.write(f"{PASSWORD}\r\n")
    await read_until(f"{name}> ")
    player.logged_in = True

    async def listen() -> None:
        pending = ""
        while chunk := await reader.read(65536):
            now = time.monotonic()
            pending += chunk
            *lines, pending = pending.split("\r\n")
            player.arrivals += [(now, line.removeprefix(f"{name}> ")) for line in lines]

    async def speak() -> None:
        await start.wait()
        await asyncio.sleep(player.number / PLAYERS)  # one second, spread over the players
        script = ("say {n} from {name}.", "emote waves, {n}.", "look")
        while not stop.is_set():
            writer.write(script[player.sent % 3].format(n=player.sent, name=name) + "\r\n")
            player.sent += 1
            await asyncio.sleep(1.0)

    async with asyncio.TaskGroup() as group:
        listening = group.create_task(listen())
        await speak()
        writer.close()
        await listening


async def _load(
    port: int | None, server: subprocess.Popen[str], window: float
) -> tuple[list[_Player], dict[str, Any]]:
    """Log every player in (none when ``port`` is None), open the window, play through
    it, close it; the players and the server's figures."""
    assert server.stdin is not None
    assert server.stdout is not None
    players = [_Player(n, f"r{n % ROOMS}") for n in range(PLAYERS if port else 0)]
    start, stop = asyncio.Event(), asyncio.Event()
    async with asyncio.TaskGroup() as group:
        for player in players:
            group.create_task(_play(port or 0, player, start, stop))
        async with asyncio.timeout(60):
            while not all(p.logged_in for p in players):  # noqa: ASYNC110 - scrypt, 2 at once
                await asyncio.sleep(0.1)
        await asyncio.sleep(2.0)  # the agents' first turns, warming up
        server.stdin.write("GO\n")
        server.stdin.flush()
        start.set()
        await asyncio.sleep(window)
        server.stdin.write("STOP\n")
        server.stdin.flush()
        stop.set()
    result = json.loads(await asyncio.to_thread(server.stdout.readline))
    return players, result


def _latencies(
    players: list[_Player], events: list[list[Any]]
) -> tuple[list[float], list[float], int]:
    """(every arrival's ms, each event's last arrival's ms, arrivals missed)."""
    in_room: dict[str, list[_Player]] = defaultdict(list)
    for player in players:
        in_room[player.room].append(player)
    seen: list[dict[str, float]] = [{} for _ in players]
    for player in players:
        for when, text in player.arrivals:
            seen[player.number].setdefault(text, when)
    each, last, missed = [], [], 0
    for when, room, text in events:
        speaker = text.split(" ", 1)[0]
        arrivals = [
            seen[p.number].get(text) for p in in_room[room] if f"Player{p.number}" != speaker
        ]
        got = [(a - when) * 1000 for a in arrivals if a is not None]
        missed += len(arrivals) - len(got)
        each += got
        if got:
            last.append(max(got))
    return each, last, missed


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _prepare(folder: Path, accounts: str, window: int | None) -> None:
    (folder / "bench.yaml").write_text(_world(window=window), encoding="utf-8")
    config = folder / "vault" / "config"
    config.mkdir(parents=True)
    (config / "accounts.md").write_text(accounts, encoding="utf-8")


def _accounts() -> str:
    from engine.vault.accounts import Account, AccountStore, hash_password

    with tempfile.TemporaryDirectory() as tmp:
        store = AccountStore(Path(tmp))
        hashed = hash_password(PASSWORD)  # one salt for all: a benchmark, not a vault
        for p in range(PLAYERS):
            store.add(Account(f"Player{p}", None, hashed))
        return store.path.read_text(encoding="utf-8")


def _one(url: str, accounts: str, clients: bool, window: float, memory: int | None = None
         ) -> dict[str, Any]:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _prepare(folder, accounts, memory)
        server = subprocess.Popen(
            [sys.executable, __file__, "serve", str(folder), url], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline().split()[1])
            players, result = asyncio.run(_load(port if clients else None, server, window))
            server.wait(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
    each, last, missed = _latencies(players, result["events"])
    sent = sum(p.sent for p in players)
    return {"turns_per_s": result["turns"] / result["seconds"], "commands_per_s": sent / window,
            "each": each, "last": last, "missed": missed}  # fmt: skip


def bench_telnet(repeats: int = REPEATS, window: float = WINDOW) -> dict[str, float]:
    """50 clients, 5 agents on the loopback stub (see the module)."""
    stub = subprocess.Popen(
        [sys.executable, "-m", "engine.llm.stub_server", "--model", MODEL, "--delay",
         str(STUB_DELAY), "--summary", "I talked with the people around me.",
         *(arg for n in range(4000) for arg in ("--reply", f"say Bench line {n}."))],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    figures: dict[str, list[float]] = defaultdict(list)
    try:
        assert stub.stdout is not None
        url = stub.stdout.readline().strip()
        accounts = _accounts()
        for _ in range(repeats):
            alone = _one(url, accounts, clients=False, window=window)
            served = _one(url, accounts, clients=True, window=window)
            figures["delivery_ms_p50"].append(statistics.median(served["each"]))
            figures["delivery_ms_p95"].append(_percentile(served["each"], 0.95))
            figures["all_delivered_ms_p50"].append(statistics.median(served["last"]))
            figures["all_delivered_ms_p95"].append(_percentile(served["last"], 0.95))
            figures["turns_per_s"].append(served["turns_per_s"])
            figures["turns_per_s_alone"].append(alone["turns_per_s"])
            figures["turns_ratio"].append(served["turns_per_s"] / alone["turns_per_s"])
            quiet_alone = _one(url, accounts, clients=False, window=window, memory=QUIET_WINDOW)
            quiet = _one(url, accounts, clients=True, window=window, memory=QUIET_WINDOW)
            figures["turns_per_s_quiet"].append(quiet["turns_per_s"])
            figures["turns_per_s_quiet_alone"].append(quiet_alone["turns_per_s"])
            figures["turns_ratio_quiet"].append(quiet["turns_per_s"] / quiet_alone["turns_per_s"])
            figures["delivery_ms_p95_quiet"].append(_percentile(quiet["each"], 0.95))
            figures["commands_per_s"].append(served["commands_per_s"])
            figures["arrivals"].append(len(served["each"]))
            figures["missed"].append(served["missed"])
    finally:
        stub.terminate()
        stub.wait(timeout=10)
    result: dict[str, float] = {}
    for key, values in figures.items():
        result |= summary(key, values)
    return result


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        sys.path.insert(0, str(ROOT))
        asyncio.run(_serve(Path(sys.argv[2]), sys.argv[3]))
    else:  # python scripts/bench_telnet.py [REPEATS [WINDOW]]: a quicker look
        numbers = [float(arg) for arg in sys.argv[1:3]]
        print(json.dumps(bench_telnet(int(numbers[0]) if numbers else REPEATS,
                                      numbers[1] if len(numbers) > 1 else WINDOW), indent=2))  # fmt: skip
