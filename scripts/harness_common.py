"""What the crash harness (``crashtest.py``) and the fault soak (``soak.py``) share:
the world they run, how they start ``mudsim``, and the checks they make on a vault's
files (read here directly, not through the engine, so an engine bug cannot hide
itself). Every check returns a list of problems, each one line naming the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.llm.stub_server import RELATED

REPO = Path(__file__).resolve().parents[1]
AGENTS = ("Ada", "Bo", "Cy")
MODEL = "tiny"
WINDOW = 4
"""Both windows (I and R) of every agent: a compaction is due every 4 memories."""

TURN_SCRIPT = [
    "@dig Nook -> A small nook.",
    "go nook",
    "say Hello there.",
    "look",
    "think Quiet day.",
]
"""Five replies (coprime with three agents, so each gets all of them): digging a chain
of rooms and walking into it keeps the world changing, so world saves happen."""
SUMMARY = RELATED
"""Every summary names what its memories are about (a fixed text would share no word with
some chunks, and the quality gate would rightly reject it)."""


def world_yaml(think_interval: float) -> str:
    agents = "\n".join(
        f"  - {{name: {name}, type: agent, location: {room}, role: builder, "
        f"profile: A restless builder., immediate_window: {WINDOW}, recent_window: {WINDOW}, "
        f"think_interval: {think_interval}}}"
        for name, room in zip(AGENTS, ("hall", "hall", "yard"), strict=True)
    )
    return (
        "name: Harness\nrooms:\n"
        "  - {id: hall, name: The Hall, description: A bare hall., exits: {yard: yard}}\n"
        "  - {id: yard, name: The Yard, description: A muddy yard.}\n"
        f"characters:\n{agents}\n"
    )


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a ``mudsim`` child: this checkout first on the path, no
    stray crash point or LLM settings from the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUDSIM_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


def mudsim(*args: str) -> list[str]:
    return [sys.executable, "-m", "engine.cli", *args]


def in_workdir(
    keep: Path | None, prefix: str, work: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """``work(folder)`` in a fresh folder: ``keep`` (emptied first, kept after) or a
    temporary one (removed after, whatever happens)."""
    workdir = keep or Path(tempfile.mkdtemp(prefix=prefix))
    if keep:
        shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(parents=True)
    try:
        return work(workdir)
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def write_report(path: Path | None, report: dict[str, Any]) -> None:
    """The full report as JSON, when ``--report FILE`` asked for it."""
    if path is not None:
        path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def stop_process(process: subprocess.Popen[Any], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to a child this harness started, and reap it (cleanup-safe)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# -- journals -----------------------------------------------------------------------------


@dataclass
class JournalSnapshot:
    """A journal as the OS has it: its complete lines, and a torn tail if any."""

    lines: list[bytes] = field(default_factory=list)
    torn_tail: int = 0
    """Bytes after the last newline (an append cut short)."""

    @classmethod
    def read(cls, path: Path) -> JournalSnapshot:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return cls()
        *lines, tail = data.split(b"\n")
        return cls(lines, len(tail))


def check_journal(path: Path, snapshot: JournalSnapshot) -> list[str]:
    """Every complete line is a JSON object whose seq is its line index (from 0)."""
    for index, line in enumerate(snapshot.lines):
        try:
            seq = json.loads(line)["seq"]
        except (ValueError, KeyError, TypeError):
            return [f"{path}, line {index + 1}: not a memory record: {line[:80]!r}"]
        if seq != index:
            return [f"{path}, line {index + 1}: seq {seq}, expected {index} (not contiguous)"]
    return []


def lost_records(path: Path, before: JournalSnapshot, after: JournalSnapshot) -> list[str]:
    """Records of ``before`` (complete lines) missing or changed in ``after``."""
    problems = []
    for index, line in enumerate(before.lines):
        if index >= len(after.lines):
            problems.append(
                f"{path}: record seq {index} is gone (the journal ends at {len(after.lines)})"
            )
        elif after.lines[index] != line:
            problems.append(
                f"{path}: record seq {index} changed: {line[:60]!r} -> {after.lines[index][:60]!r}"
            )
    return problems


# -- summaries ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Range:
    start: int
    end: int
    file: str

    def __str__(self) -> str:
        return f"[{self.start}, {self.end})"


def _front_matter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        raise ValueError("no front matter")
    head = text[4 : text.index("\n---\n", 3)]
    meta = yaml.safe_load(head)
    if not isinstance(meta, dict):
        raise ValueError("front matter is not a mapping")
    return meta


def _range(path: Path) -> Range:
    meta = _front_matter(path)
    return Range(int(meta["covers_from"]), int(meta["covers_to"]), path.name)


@dataclass
class SummaryCheck:
    boundary: int = 0
    committed: int = 0
    """History files of committed ranges."""
    pending: int = 0
    """History files of an interrupted commit (left by a kill, redone by the next run)."""
    problems: list[str] = field(default_factory=list)


def check_summaries(agent_dir: Path, memories: int, *, settled: bool) -> SummaryCheck:
    """The boundary b (recent.md's covers_to) and the ranges agree: recent.md covers
    [x, b), longterm.md [0, x), one history file per committed range tiling [0, b)
    exactly, none beyond b. Unless ``settled`` (a run ended cleanly), a kill may have
    left one commit half done: a history file starting at b, and longterm.md already
    covering [0, b)."""
    folder = agent_dir / "summaries"
    check = SummaryCheck()
    try:
        recent = _range(folder / "recent.md") if (folder / "recent.md").exists() else None
        longterm = _range(folder / "longterm.md") if (folder / "longterm.md").exists() else None
        history = sorted(
            (_range(path) for path in folder.glob("recent-*.md")), key=lambda r: (r.start, r.end)
        )
    except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
        check.problems.append(f"{folder}: a summary file does not read: {exc}")
        return check
    b = recent.end if recent else 0
    check.boundary = b
    problems = check.problems
    if b > memories:
        problems.append(
            f"{folder}/recent.md: boundary {b} is past the journal's {memories} records"
        )
    if recent is not None and recent.start >= recent.end:
        problems.append(f"{folder}/recent.md: empty range {recent}")
    if longterm is not None:
        if recent is None:
            problems.append(f"{folder}/longterm.md exists without recent.md")
        elif longterm.start != 0:
            problems.append(f"{folder}/longterm.md covers {longterm}, not from 0")
        elif longterm.end != recent.start and (settled or longterm.end != recent.end):
            problems.append(
                f"{folder}/longterm.md covers {longterm} but recent.md covers {recent}: "
                f"expected [0, {recent.start})"
            )
    elif recent is not None and recent.start != 0:
        problems.append(f"{folder}/recent.md covers {recent} but there is no longterm.md")
    committed = [r for r in history if r.end <= b]
    pending = [r for r in history if r.start >= b]
    for r in history:
        if r.start < b < r.end:
            problems.append(f"{folder}/{r.file}: range {r} straddles the boundary {b}")
    by_range: dict[tuple[int, int], list[str]] = {}
    for r in committed:
        by_range.setdefault((r.start, r.end), []).append(r.file)
    expected = 0
    for (start, end), files in by_range.items():
        if len(files) > 1:
            problems.append(
                f"{folder}: range [{start}, {end}) has {len(files)} history files: {', '.join(files)}"
            )
        if start != expected:
            what = "overlaps" if start < expected else f"comes after a gap from {expected}"
            problems.append(
                f"{folder}/{files[0]}: range [{start}, {end}) {what} (history must tile [0, {b}))"
            )
        expected = max(expected, end)
    if expected != b:
        problems.append(f"{folder}: history files cover [0, {expected}), the boundary is {b}")
    if (
        recent is not None
        and committed
        and (committed[-1].start, committed[-1].end)
        != (
            recent.start,
            recent.end,
        )
    ):
        problems.append(
            f"{folder}: the newest history range {committed[-1]} is not recent.md's {recent}"
        )
    if pending and (settled or len(pending) > 1 or pending[0].start != b):
        names = ", ".join(f"{r.file} {r}" for r in pending)
        problems.append(f"{folder}: history beyond the boundary {b}: {names}")
    check.committed, check.pending = len(committed), len(pending)
    return check


def read_state(agent_dir: Path) -> dict[str, Any] | None:
    path = agent_dir / "memory-state.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def stale_temp_files(vault: Path) -> list[str]:
    return sorted(str(p.relative_to(vault)) for p in vault.rglob("*.tmp"))


# -- status ---------------------------------------------------------------------------------


@dataclass
class StatusResult:
    code: int
    agents: dict[str, dict[str, Any]]
    error: str


def read_status(vault: Path) -> StatusResult:
    """``mudsim status --vault V --json`` in a child process: does the vault load?"""
    done = subprocess.run(
        mudsim("status", "--vault", str(vault), "--json"),
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    agents: dict[str, dict[str, Any]] = {}
    if done.returncode == 0:
        try:
            agents = {a["name"]: a for a in json.loads(done.stdout)["agents"]}
        except (ValueError, KeyError, TypeError) as exc:
            return StatusResult(1, {}, f"status printed no JSON: {exc}")
    return StatusResult(done.returncode, agents, last_line(done.stderr))


# -- measuring --------------------------------------------------------------------------------


def rss_kib(pid: int) -> int | None:
    """VmRSS of a process, in KiB (None once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def fsync_round_ms(folder: Path, journals: int = 3, rounds: int = 30) -> dict[str, float]:
    """How long one round of the journal group fsync takes here: append a line to each
    of ``journals`` files, then fsync them all (median and max, in ms)."""
    folder.mkdir(parents=True, exist_ok=True)
    handles = [open(folder / f"probe-{i}.jsonl", "ab") for i in range(journals)]  # noqa: SIM115
    times = []
    try:
        for _ in range(rounds):
            for handle in handles:
                handle.write(b'{"seq": 0, "text": "probe"}\n')
                handle.flush()
            started = time.perf_counter()
            for handle in handles:
                os.fsync(handle.fileno())
            times.append((time.perf_counter() - started) * 1000)
    finally:
        for handle in handles:
            handle.close()
        for i in range(journals):
            (folder / f"probe-{i}.jsonl").unlink(missing_ok=True)
    times.sort()
    return {"median_ms": round(times[len(times) // 2], 2), "max_ms": round(times[-1], 2)}


def durability_contract(
    fsync: dict[str, float], kills: int, acknowledged: int, lost: int
) -> dict[str, str]:
    """What a crash and a power cut can lose, per fsync setting (the journal's documented
    group fsync; atomic writes elsewhere), with this run's measurements."""
    window = 100 + fsync["max_ms"]
    return {
        "process_crash": (
            f"A crash of the process (SIGKILL, OOM, a bug) loses no acknowledged memory: "
            f"{kills} kills, {acknowledged} records acknowledged before a kill, {lost} lost. "
            "At most the line being written is torn; the next load cuts it off with a warning."
        ),
        "power_cut_group_fsync": (
            "Journal, default (fsync in groups every 100 ms on a background thread): a power "
            f"cut can lose the appends of the last ~{window:.0f} ms (100 ms plus one fsync "
            f"round, measured here at {fsync['median_ms']} ms median, {fsync['max_ms']} ms max)."
        ),
        "power_cut_fsync_each": (
            "Journal with fsync on every append (sync_group=None): a power cut loses no "
            "acknowledged memory."
        ),
        "power_cut_atomic_files": (
            "Summaries, memory-state.json, world.yaml, agent.md, notes (temp file, fsync, "
            "rename, directory fsync): a power cut loses nothing already renamed; a write in "
            "progress leaves the old file."
        ),
        "note": (
            "Power-cut figures follow from the fsync design and the measured fsync time; "
            "the harness kills processes, it cannot cut power."
        ),
    }


def print_verdict(title: str, failures: list[str], lines: list[str]) -> None:
    print(f"== {title} ==")
    for line in lines:
        print(f"  {line}")
    if failures:
        print(f"FAIL ({len(failures)} problems):")
        for problem in failures[:40]:
            print(f"  - {problem}")
        if len(failures) > 40:
            print(f"  ... and {len(failures) - 40} more (see the report)")
    else:
        print("PASS")


def check_tapes(vault: Path) -> list[str]:
    """Every tape of every run record (``vault/runs/*/*.jsonl``) is whole JSON lines but
    perhaps a torn last one (a kill mid-write, which a reader leaves out), and each run's
    events are numbered 1, 2, 3 ... with none missing."""
    problems = []
    for tape in sorted(vault.glob("runs/*/*.jsonl")):
        lines = tape.read_bytes().split(b"\n")
        objects = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                objects.append(json.loads(line))
            except ValueError:
                if number != len(lines):  # only the last, unterminated line may be torn
                    problems.append(f"{tape}: line {number} does not read")
        if tape.name == "events.jsonl":
            numbers = [o.get("n") for o in objects if isinstance(o, dict)]
            if numbers != list(range(1, len(numbers) + 1)):
                problems.append(f"{tape}: events are not numbered 1, 2, 3 ...")
    return problems
