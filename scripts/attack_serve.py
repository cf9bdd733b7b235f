"""Attack ``mudsim serve``'s login defences from outside, and check the Done-when lines.

``prelogin``: 10 addresses open telnet and websocket connections until refused (again 1 s
after a refusal), trickle a byte (a websocket ping) every 5 s, and half type a name
first. ``guess``: 40 addresses guess the victim's password, one guess a connection, each
giving up 1 s after the password; then one more address checks that logging in as its
own account does not make its next wrong answer faster. During each attack, honest clients
from clean addresses log in every ~2 s, refusing every telnet option at once. Each client binds to
its own 127.x.y.z; everything is loopback. Prints a JSON summary and a verdict per line
(exit 0: all pass). Written from docs/how-to/serve.md alone, not the server's code.

    flock /tmp/bench.lock .venv/bin/python scripts/attack_serve.py guess [--seconds 60]

A run takes about 1.5 min (``prelogin``: the attack, then up to ``login_seconds`` + 6 s for
the last connections to be closed) or 2 min (``guess``: the attack, then the reset check);
``both`` serves a fresh vault for each. Give ``timeout`` 5 min or more; on SIGTERM or
Ctrl-C the server is still stopped and the temporary vault removed.
"""

from __future__ import annotations

import abc
import argparse
import asyncio
import contextlib
import datetime as dt
import json
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from websockets.asyncio.client import ClientConnection, connect

REPO = Path(__file__).resolve().parents[1]
PASSWORDS = {"Victim": "victim-pw-1", "Bystander": "bystand-pw-2", "Mallory": "mallory-pw-3"}
ADMIN = "Boss"
PASSWORDS[ADMIN] = "boss-pw-4"
WRONG = "Wrong name or password"
IAC, SB, SE, WILL, WONT, DO, DONT = 255, 250, 240, 251, 252, 253, 254
now = time.monotonic


class Conn(abc.ABC):
    """A client connection's text (telnet bytes or websocket messages) as one string."""

    def __init__(self) -> None:
        self.text, self.cursor, self.changed = "", 0, asyncio.Event()
        self.opened: float = now()
        self.closed_at: float | None = None  # when it was closed (by the server, mostly)
        self.task: asyncio.Task[None] | None = None

    def feed(self, text: str) -> None:
        self.text += text
        if len(self.text) > 20_000:  # a bounded buffer: keep the tail
            cut = len(self.text) - 10_000
            self.text, self.cursor = self.text[cut:], max(0, self.cursor - cut)
        self.changed.set()

    def eof(self) -> None:
        self.closed_at = self.closed_at or now()
        self.changed.set()

    def last_line(self) -> str:
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return lines[-1][:80] if lines else "(nothing)"

    async def until(self, needle: str, within: float) -> bool:
        """Wait for ``needle`` past what was consumed; False on close or after ``within`` s."""
        deadline = now() + within
        while (at := self.text.find(needle, self.cursor)) < 0:
            if self.closed_at is not None or now() >= deadline:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), deadline - now())
        self.cursor = at + len(needle)
        return True

    @abc.abstractmethod
    async def open(self, src: str, port: int) -> None: ...
    @abc.abstractmethod
    async def send_line(self, line: str) -> None: ...
    @abc.abstractmethod
    async def trickle(self) -> None: ...
    @abc.abstractmethod
    async def close(self) -> None: ...


class Telnet(Conn):
    """A raw socket that answers every DO with WONT and every WILL with DONT at once."""

    async def open(self, src: str, port: int) -> None:
        opening = asyncio.open_connection("127.0.0.1", port, local_addr=(src, 0))
        self.r, self.w = await asyncio.wait_for(opening, 5)
        self.opened, self.task = now(), asyncio.create_task(self._read())

    async def _read(self) -> None:
        state, cmd = 0, 0  # 0 text, 1 after IAC, 2 an option, 3 in SB, 4 IAC in SB
        with contextlib.suppress(OSError):
            while data := await self.r.read(4096):
                out, reply = bytearray(), bytearray()
                for b in data:
                    if state == 0 and b != IAC:
                        out.append(b)
                    elif state == 0 or (state == 1 and b == IAC):
                        state = 1 - state  # IAC, or IAC IAC: the byte 255 (dropped)
                    elif state == 1:
                        state, cmd = {DO: 2, DONT: 2, WILL: 2, WONT: 2, SB: 3}.get(b, 0), b
                    elif state == 2:
                        if cmd in (DO, WILL):
                            reply += bytes([IAC, WONT if cmd == DO else DONT, b])
                        state = 0
                    else:  # SB data (3), or an IAC in it (4): IAC SE ends it
                        state = (
                            0 if state == 4 and b == SE else (4 if state == 3 and b == IAC else 3)
                        )
                if reply:
                    self.w.write(reply)
                self.feed(out.replace(b"\r\0", b"\r").decode("utf-8", "replace"))
        self.eof()

    async def send_line(self, line: str) -> None:
        if self.closed_at is None:
            self.w.write(line.encode() + b"\r\n")

    async def trickle(self) -> None:
        if self.closed_at is None:
            self.w.write(b"x")  # never a line end: the line is never finished

    async def close(self) -> None:
        self.w.close()
        self.task and self.task.cancel()
        self.eof()


class Web(Conn):
    """The page's websocket (engine/web/static/app.js): ``{"type": "line", "text": ...}``
    out; ``text``, ``prompt`` and ``close`` messages in."""

    async def open(self, src: str, port: int) -> None:
        self.ws: ClientConnection = await connect(
            f"ws://127.0.0.1:{port}/ws",
            origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]  # (an Origin)
            local_addr=(src, 0),
            open_timeout=5,
            close_timeout=1,
            ping_interval=None,
        )
        self.opened, self.task = now(), asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for raw in self.ws:
                message = json.loads(raw)
                end = "" if message.get("type") == "prompt" else "\n"
                if message.get("type") in ("text", "close", "prompt"):
                    self.feed(str(message.get("text", "")) + end)
        self.eof()

    async def send_line(self, line: str) -> None:
        with contextlib.suppress(Exception):
            await self.ws.send(json.dumps({"type": "line", "text": line}))

    async def trickle(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.ping()  # the websocket's "byte": activity that is not a line

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 2)
        self.task and self.task.cancel()
        self.eof()


async def open_conn(kind: str, src: str, port: int) -> tuple[Conn | None, str]:
    """A connection that got the Name prompt, or None and why (refused, closed, 5 s of nothing)."""
    conn: Conn = Telnet() if kind == "telnet" else Web()
    try:
        await conn.open(src, port)
    except Exception as exc:
        return None, type(exc).__name__
    if await conn.until("Name:", 5):
        return conn, ""
    await conn.close()
    return None, conn.last_line()


async def login(port: int, src: str, name: str, wait: float = 10.0) -> dict[str, Any]:
    """Log in honestly over telnet; once more if the first connection is turned away or
    closed. The figures run from the first connect."""
    t0, row = now(), dict[str, Any](ok=False, attempts=0)
    for attempt in (1, 2):
        row["attempts"] = attempt
        conn, why = await open_conn("telnet", src, port)
        if conn is None:
            row["why"] = f"turned away: {why}"
            continue
        try:
            await conn.send_line(name)
            if not await conn.until("Password:", wait):
                row["why"] = f"no Password: prompt: {conn.last_line()}"
                continue
            row["to_password_prompt_s"] = (t_pw := now()) - t0
            await conn.send_line(PASSWORDS[name])
            if await conn.until(f"{name}>", wait):
                row |= {"ok": True, "total_s": now() - t0, "answer_s": now() - t_pw}
                await conn.send_line("quit")
                await asyncio.sleep(0.05)
                return row
            row["why"] = f"no answer: {conn.last_line()}"
        finally:
            await conn.close()
    return row | {"total_s": now() - t0}


async def guess(kind: str, port: int, src: str, name: str, wait: float) -> tuple[str, float]:
    """One wrong guess on a fresh connection: what became of it, and seconds to the answer."""
    conn, _ = await open_conn(kind, src, port)
    if conn is None:
        return "refused", 0.0
    try:
        await conn.send_line(name)
        if not await conn.until("Password:", 5):
            return "no_password_prompt", 0.0
        await conn.send_line(f"not-it-{time.time_ns()}")
        t0 = now()
        if await conn.until(WRONG, wait):
            return "answered", now() - t0
        return ("closed_unanswered" if conn.closed_at else "gave_up"), now() - t0
    finally:
        await conn.close()


def stats(values: list[float]) -> dict[str, float | None]:
    s = sorted(values)
    pick = (lambda q: round(s[min(len(s) - 1, int(q * len(s)))], 3)) if s else (lambda q: None)
    return {"p50": pick(0.5), "p95": pick(0.95), "max": pick(1.0)}


class Server:
    """``mudsim serve`` on a fresh temporary vault, free ports, the scripted ``fake:`` model."""

    def __init__(self, world: str, repo: Path) -> None:
        self.world, self.repo = world, repo
        self.vault = Path(tempfile.mkdtemp(prefix="attack-serve-")) / "v"
        self.ports: dict[str, int] = {}
        self.stderr: list[str] = []  # the last 200 lines
        self.seen: Counter[str] = Counter()  # tracebacks, and checks for Victim, on stderr

    async def mudsim(self, *args: str) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "engine.cli", *args, cwd=self.repo,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip

    async def start(self) -> None:
        for name, pw in PASSWORDS.items():
            role = ["--role", "admin"] if name == ADMIN else []
            add = await self.mudsim("account", "add", "--vault", str(self.vault), name, "--password", pw, *role)  # fmt: skip
            if await add.wait():
                raise RuntimeError(f"account add {name} failed")
        self.proc = await self.mudsim(
            "serve", self.world, "--vault", str(self.vault), "--telnet", "0", "--web", "0",
            "--llm", "fake:look", "--turns", "1",
        )  # fmt: skip
        self.reader = asyncio.create_task(self._drain())
        deadline = now() + 60
        while len(self.ports) < 2:
            if now() > deadline or self.proc.returncode is not None:
                raise RuntimeError("serve did not start: " + " | ".join(self.stderr[-5:]))
            await asyncio.sleep(0.1)

    async def _drain(self) -> None:
        assert self.proc.stderr
        async for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            self.stderr = [*self.stderr[-199:], line]
            self.seen["tracebacks"] += line.startswith("Traceback")
            self.seen["victim_checks"] += line.endswith(": wrong password for Victim")
            if m := re.search(r"serving .* on \S+ port (\d+)", line):
                self.ports["web" if "browsers" in line else "telnet"] = int(m.group(1))

    def settings(self) -> dict[str, Any]:
        text = (self.vault / "config" / "telnet.md").read_text()
        return dict(yaml.safe_load(text.split("---")[1]))

    def log(self) -> list[str]:
        return (self.vault / "logs" / "telnet.log").read_text().splitlines()

    def victim_checks(self) -> list[float]:
        """The time of each wrong-password check for Victim (logs/telnet.log's stamps)."""
        pattern = re.compile(r"^(\S+ \S+) .*failed login from \S+: wrong password for Victim$")
        stamps = [m.group(1) for line in self.log() if (m := pattern.match(line))]
        return [dt.datetime.strptime(s, "%Y-%m-%d %H:%M:%S,%f").timestamp() for s in stamps]

    def log_kinds(self) -> dict[str, int]:
        """The log's records by kind (names W, numbers and addresses N), the commonest."""
        kinds = Counter(
            re.sub(r"[0-9.]+", "N", re.sub(r"\b[A-Z][a-z]+\b", "W", line.split(": ", 1)[-1]))
            for line in self.log()
            if line.startswith("20")  # a record, not a traceback's line
        )
        return {kind[:100]: n for kind, n in kinds.most_common(8)}

    async def stop(self, keep: bool) -> None:
        if getattr(self, "proc", None) and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 45)  # turns finish in at most 30 s
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if not keep:
            shutil.rmtree(self.vault.parent, ignore_errors=True)


async def honest(port: int, end: float, names: list[str]) -> dict[str, Any]:
    """Each account logs in every ~2 s until ``end``, from four clean addresses in turn
    (one address would pass ``new_connections_per_minute`` and test that instead)."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for tick in range(10_000):
        if now() >= end:
            break
        start = now()
        logins = [login(port, f"127.0.0.{2 + 4 * i + tick % 4}", n) for i, n in enumerate(names)]
        for name, row in zip(names, await asyncio.gather(*logins), strict=True):
            rows[name].append(row)
        await asyncio.sleep(max(0.0, 2.0 - (now() - start)))
    summary = {}
    for name, done in rows.items():
        good = [r for r in done if r["ok"]]
        prompted = [r["to_password_prompt_s"] for r in done if "to_password_prompt_s" in r]
        summary[name] = {
            "probes": len(done),
            "failed": len(done) - len(good),
            "within_1s": sum(r["total_s"] <= 1.0 for r in good),
            "retried": sum(r["attempts"] > 1 for r in good),
            "login_s": stats([r["total_s"] for r in done]),
            "answer_s": stats([r["answer_s"] for r in good]),
            "prompted": len(prompted),
            "to_password_prompt_s": stats(prompted),
            "why_failed": dict(Counter(r["why"] for r in done if not r["ok"]).most_common(4)),
        }
    return summary


async def prelogin_address(
    n: int, ports: dict[str, int], end: float, name: str | None, conns: list[Conn]
) -> Counter[str]:
    """Open connections (telnet and websocket in turn) until refused; 1 s after a refusal,
    again. Each held connection trickles every 5 s; with ``name``, it types it first."""
    tally: Counter[str] = Counter()
    mine: list[Conn] = []
    while now() < end and tally["attempts"] < 200:
        if sum(c.closed_at is None for c in mine) >= 10:  # past every per-address limit
            await asyncio.sleep(0.25)
            continue
        kind = ("telnet", "web")[tally["attempts"] % 2]
        tally["attempts"] += 1
        conn, why = await open_conn(kind, f"127.0.1.{n}", ports[kind])
        if conn is None:
            tally[f"refused: {why}"] += 1
            await asyncio.sleep(1.0)
            continue
        tally[f"held_{kind}"] += 1
        mine.append(conn)
        conns.append(conn)
        if name:
            await conn.send_line(name)
        asyncio.create_task(trickle(conn, end + 70))  # noqa: RUF006 (ends when conn does)
        await asyncio.sleep(0.05)
    return tally


async def trickle(conn: Conn, until: float) -> None:
    while conn.closed_at is None and now() < until:
        await asyncio.sleep(5)
        await conn.trickle()


async def run_prelogin(server: Server, seconds: float) -> dict[str, Any]:
    limit = float(server.settings()["login_seconds"]) + 5
    end, conns = now() + seconds, list[Conn]()
    typed = ["Bystander", ADMIN, "Victim"]  # the honest accounts' names too: the harsher case
    names = [typed[n % 3] if n % 2 else None for n in range(1, 11)]
    attack = [prelogin_address(n, server.ports, end, names[n - 1], conns) for n in range(1, 11)]
    tallies, probes = await asyncio.gather(
        asyncio.gather(*attack), honest(server.ports["telnet"], end, ["Bystander", ADMIN])
    )
    readers = [c.task for c in conns if c.task and c.closed_at is None]
    if readers:  # the last connections' deadline, and a second more
        await asyncio.wait(readers, timeout=limit + 1)
    lifetimes = [(c.closed_at or now()) - c.opened for c in conns]
    still_open = sum(c.closed_at is None for c in conns)
    for conn in conns:
        await conn.close()
    attackers = {"addresses": 10, "names_typed": [n for n in names if n]}
    attackers |= sum(tallies, Counter()) | {"held_still_open_at_end": still_open}
    attackers |= {"open_to_close_s": stats(lifetimes)}
    attackers["over_deadline"] = sum(life > limit for life in lifetimes)
    in_time = all(p["failed"] == 0 and p["within_1s"] == p["probes"] for p in probes.values())
    verdict = {
        "an account and the admin log in within 1 s": in_time,
        f"every attacker connection closed within login_seconds + 5 = {limit:g} s": (
            attackers["over_deadline"] == 0 and bool(conns)
        ),
    }
    return {"honest": probes, "attackers": attackers, "verdict": verdict}


def schedule_bound(span: float, free: int, delay: float, most: float) -> int:
    """Checks one account may get in ``span`` s: ``free`` at once, then waits D, 2D, 4D ..."""
    k, t, d = 0, 0.0, delay
    while delay > 0 and t + d <= span:
        t, k, d = t + d, k + 1, min(2 * d, most)
    return free + k if delay > 0 else 10**9


async def guess_address(n: int, ports: dict[str, int], end: float) -> Counter[str]:
    tally: Counter[str] = Counter()
    kind = ("telnet", "web")[n % 2]
    while now() < end and tally["guesses"] < 200:
        tally["guesses"] += 1
        status, _ = await guess(kind, ports[kind], f"127.0.2.{n}", "Victim", 1.0)
        tally[status] += 1
        if status not in ("answered", "gave_up"):
            await asyncio.sleep(1.0)  # turned away or closed unanswered: again in a second
    return tally


async def reset_probe(port: int, settings: dict[str, Any], end: float) -> dict[str, Any]:
    """From one address: F+2 wrong guesses (names that are no account, so only the
    address's count grows), log in as its own account (Mallory), then one more guess.
    A guess turned away or closed unanswered is tried again, a second later, until ``end``."""
    src, free, tries = "127.0.3.1", int(settings["login_free_failures"]), Counter[str]()

    async def answer(name: str) -> float | None:
        while now() < end:
            wait = min(float(settings.get("login_max_delay_s", 60)) + 10, end - now())
            status, seconds = await guess("telnet", port, src, name, wait)
            tries[status] += 1
            if status == "answered":
                return round(seconds, 3)
            await asyncio.sleep(1.0)
        return None

    before = [await answer(f"Ghost{chr(97 + i)}") for i in range(free + 2)]
    own = await login(port, src, "Mallory", max(1.0, end - now()))
    after, last, slow = await answer("Ghostz"), before[-1], float(settings["login_delay_s"]) / 2
    if last is None or after is None:
        why = "a guess before or after the own login got no answer"
    elif last < slow:
        why = f"never slow: answered guess {free + 2} took {last:.2f} s"
    else:
        why = "no faster after the own login" if after >= 0.9 * last else "faster after it"
    own = {k: round(v, 3) if isinstance(v, float) else v for k, v in own.items()}
    return {"before_s": before, "own_login": own, "after_s": after, "tries": tries, "why": why}


async def run_guess(server: Server, seconds: float) -> dict[str, Any]:
    settings = server.settings()
    free, delay = int(settings["login_free_failures"]), float(settings["login_delay_s"])
    most = float(settings.get("login_max_delay_s", 60))
    end = now() + seconds
    tallies, probes = await asyncio.gather(
        asyncio.gather(*(guess_address(n, server.ports, end) for n in range(1, 41))),
        honest(server.ports["telnet"], end, ["Bystander"]),
    )
    # After the flood: during it, a connection waiting for a slowed answer is the one that
    # has waited longest, and the flood's new connections close it to make room.
    reset = await reset_probe(server.ports["telnet"], settings, now() + 90)
    await asyncio.sleep(1)  # the last log lines
    checks = server.victim_checks()
    span = (checks[-1] - checks[0]) if checks else 0.0
    bound = schedule_bound(span + 0.5, free, delay, most)  # half a second for log jitter
    gaps = [round(b - a, 3) for a, b in zip(checks[free - 1 :], checks[free:], strict=False)]
    victim: dict[str, Any] = {"checks": len(checks), "on_stderr": server.seen["victim_checks"]}
    victim |= {"span_s": round(span, 3), "schedule_bound": bound, "gaps_after_free_s": gaps[:12]}
    by = probes["Bystander"]
    verdict = {
        "another account's right password answered within 2 s": (
            by["failed"] == 0 and (by["answer_s"]["max"] or 99) <= 2.0
        ),
        "its Password: prompt within 5 s of connecting": (
            by["prompted"] == by["probes"] and (by["to_password_prompt_s"]["max"] or 99) <= 5.0
        ),
        f"checks for the victim within the schedule (F={free}, D={delay:g}, most {most:g})": (
            len(checks) <= bound
        ),
        "own login from an attacking address does not reset its failures": (
            reset["why"] == "no faster after the own login"
        ),
    }
    attackers = {"addresses": 40, **sum(tallies, Counter())}
    return {"honest": probes, "attackers": attackers, "victim": victim, "reset": reset} | {
        "verdict": verdict
    }


async def lag_monitor(box: list[float]) -> None:
    """This process's own event-loop lag: large values mean the client inflated timings."""
    while True:
        t = now()
        await asyncio.sleep(0.05)
        box[0] = max(box[0], now() - t - 0.05)


async def main(args: argparse.Namespace) -> int:
    main_task = asyncio.current_task()
    assert main_task  # SIGTERM (as from timeout) cancels it, so the server is still stopped
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, main_task.cancel)
    results: dict[str, Any] = {}
    for attack in ["prelogin", "guess"] if args.attack == "both" else [args.attack]:
        seconds = args.seconds or {"prelogin": 45.0, "guess": 60.0}[attack]
        server, lag = Server(args.world, args.repo), [0.0]
        monitor = asyncio.create_task(lag_monitor(lag))
        try:
            await server.start()
            run = run_prelogin if attack == "prelogin" else run_guess
            result = results[attack] = {"seconds": seconds, **await run(server, seconds)}
            result |= {"settings": server.settings(), "client_loop_lag_max_s": round(lag[0], 3)}
            result |= {"server_tracebacks": server.seen["tracebacks"]}
            result["server_log"] = server.log_kinds()
        except asyncio.CancelledError:
            print(f"attack_serve: stopped during {attack}; stopping the server", file=sys.stderr)
            return 143
        finally:
            monitor.cancel()
            await server.stop(args.keep_vault)
            if args.keep_vault:
                print(f"vault kept: {server.vault}", file=sys.stderr)
    print(json.dumps(results, indent=2))
    verdicts = [(a, line, ok) for a, r in results.items() for line, ok in r["verdict"].items()]
    for attack, line, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'} {attack}: {line}")
    return 0 if all(ok for *_, ok in verdicts) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("attack", choices=["prelogin", "guess", "both"])
    parser.add_argument("--seconds", type=float, help="attack length (45 prelogin, 60 guess)")
    parser.add_argument("--world", default=str(REPO / "worlds" / "demo.yaml"))
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to serve")
    parser.add_argument("--keep-vault", action="store_true", help="keep the temporary vault")
    sys.exit(asyncio.run(main(parser.parse_args())))
