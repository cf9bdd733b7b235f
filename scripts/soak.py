"""The fault soak: a live ``mudsim run --headless`` against a stub that misbehaves on a
fixed schedule, for minutes, checked as it goes and at the end.

    python scripts/soak.py --minutes 30             # by hand
    python scripts/soak.py --minutes 2 --report soak.json

Three builder agents (windows 4/4, a turn every ``--think`` seconds) talk to the
loopback stub, which answers HTTP 500 to every 5th call, leaves every 17th unanswered
(longer than the run's per-attempt deadline, ``--deadline``, 2 s here) and answers
garbage to every 11th (empty, cut-off JSON, a refusal, an echo of the instructions, a
loop, a reply cut by the token limit, control characters). Checks:

- no agent waits past its timeout: every agent's turns keep coming (each quarter of
  the soak has some), and the longest gap between two of an agent's turns stays under
  what the retry policy allows (think + 2 x (attempts x deadline + backoff) + 2 x deadline);
- every compaction is committed exactly once (one history file per range, tiling
  [0, b)), and every agent's boundary moved;
- failures are visible: in every ``mudsim status --json`` sample, failures > 0 comes
  with a last_error; garbage summaries show up as failures, and none is stored
  (``garbage_stored``: summaries the model wrote that hold one, 0); the run summary
  counts retries;
- memory is flat: the run's RSS, median of the last quarter within 1.2x of the second;
- the run stops cleanly on SIGINT (exit 0, run summary printed) and the vault loads.

Prints PASS or FAIL and what broke; ``--report FILE`` writes it all as JSON. Exit 1 on FAIL.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness_common import (
    AGENTS,
    MODEL,
    SUMMARY,
    TURN_SCRIPT,
    JournalSnapshot,
    check_journal,
    check_summaries,
    child_env,
    in_workdir,
    last_line,
    mudsim,
    print_verdict,
    read_status,
    rss_kib,
    stop_process,
    world_yaml,
    write_report,
)

from engine.llm.dispatcher import RetryPolicy
from engine.llm.stub_server import GARBAGE, FaultSchedule, StubOllama
from engine.vault.files import read_front_matter

STATUS_EVERY_S = 5.0
STOP_WAIT_S = 90.0
RSS_GROWTH_LIMIT = 1.2
_SUMMARY_LINE = re.compile(
    r"(\d+) turns \((\d+) skipped\), (\d+) LLM calls \((\d+) failed, (\d+) retries\)"
)


@dataclass
class Samples:
    rss: list[tuple[float, int]] = field(default_factory=list)
    """(seconds since start, KiB)."""
    status: list[tuple[float, dict[str, dict[str, Any]]]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def gap_limit(think: float, deadline: float) -> float:
    """The longest an agent may go between two turns: a turn that fails every attempt
    (each up to the deadline, with the backoff between) and the next one, plus a slot
    held by a hung call."""
    policy = RetryPolicy()
    backoff = sum(
        min(policy.max_delay, policy.base_delay * 2.0**r) for r in range(policy.attempts - 1)
    )
    return think + 2 * (policy.attempts * deadline + backoff) + 2 * deadline


def watch(
    process: subprocess.Popen[bytes], vault: Path, seconds: float, stub: StubOllama
) -> Samples:
    samples = Samples()
    started = time.monotonic()
    next_status = STATUS_EVERY_S
    hidden: set[str] = set()
    while (elapsed := time.monotonic() - started) < seconds:
        if process.poll() is not None:
            samples.problems.append(
                f"the run ended by itself after {elapsed:.0f} s (exit {process.returncode})"
            )
            break
        kib = rss_kib(process.pid)
        if kib is not None:
            samples.rss.append((round(elapsed, 1), kib))
        if elapsed >= next_status:
            next_status += STATUS_EVERY_S
            status = read_status(vault)
            if status.code != 0:
                samples.problems.append(
                    f"at {elapsed:.0f} s mudsim status exited {status.code}: {status.error}"
                )
            for name, agent in status.agents.items():
                if agent["failures"] > 0 and agent["last_error"] is None and name not in hidden:
                    hidden.add(name)  # said once, from the first sample that shows it
                    samples.problems.append(
                        f"from {elapsed:.0f} s on, {name} shows {agent['failures']} failures "
                        "but no last_error"
                    )
            samples.status.append((round(elapsed, 1), status.agents))
        stub.requests.clear()
        time.sleep(1.0)
    return samples


def _when(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def turn_times(journal: Path) -> list[float]:
    """When the agent's own commands ran (its result memories), as epoch seconds."""
    times = []
    for line in JournalSnapshot.read(journal).lines:
        record = json.loads(line)
        if record.get("command") is not None and record.get("kind") == "result":
            times.append(_when(record["at"]))
    return times


def rss_flat(rss: list[tuple[float, int]]) -> tuple[float | None, dict[str, float]]:
    """Last-quarter median / second-quarter median of the RSS samples (the first
    quarter is warm-up)."""
    if len(rss) < 8:
        return None, {}
    quarter = len(rss) // 4
    second = statistics.median(k for _, k in rss[quarter : 2 * quarter])
    last = statistics.median(k for _, k in rss[3 * quarter :])
    figures = {
        "second_quarter_mib": round(second / 1024, 1),
        "last_quarter_mib": round(last / 1024, 1),
        "max_mib": round(max(k for _, k in rss) / 1024, 1),
    }
    return last / second, figures


def soak(
    minutes: float, think: float, deadline: float, faults: FaultSchedule, workdir: Path
) -> dict[str, Any]:
    world = workdir / "world.yaml"
    world.write_text(world_yaml(think), encoding="utf-8")
    vault = workdir / "vault"
    # Hangs must outlast the run's per-attempt limit: the vault's llm.md sets it.
    (vault / "config").mkdir(parents=True, exist_ok=True)
    (vault / "config" / "llm.md").write_text(f"---\ntimeout: {deadline}\n---\n", encoding="utf-8")
    problems: list[str] = []
    stub = StubOllama(TURN_SCRIPT, models=[MODEL], summary=SUMMARY, faults=faults, record=False)
    stub.start()
    out_path, err_path = workdir / "run.out", workdir / "run.err"
    started = time.time()
    try:
        with out_path.open("wb") as out, err_path.open("wb") as err:
            process = subprocess.Popen(
                mudsim(
                    "run",
                    str(world),
                    "--headless",
                    "--vault",
                    str(vault),
                    "--llm",
                    stub.url,
                    "--model",
                    MODEL,
                    "--seed",
                    "1",
                ),
                stdout=out,
                stderr=err,
                env=child_env(),
                start_new_session=True,
            )
            try:
                samples = watch(process, vault, minutes * 60, stub)
                process.send_signal(signal.SIGINT)
                try:
                    code = process.wait(timeout=STOP_WAIT_S)
                except subprocess.TimeoutExpired:
                    code = None
                    problems.append(f"the run did not stop within {STOP_WAIT_S:.0f} s of SIGINT")
            finally:
                stop_process(process)
    finally:
        stub.stop()
    wall = time.time() - started
    problems += samples.problems
    output, errors = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
    # the run summary, then the cost per agent, end the output
    summary_line = next((line for line in reversed(output.splitlines())
                         if line.startswith("Run summary:")), last_line(output))  # fmt: skip
    if code != 0:
        problems.append(f"the run exited {code} after SIGINT: {last_line(errors)}")
    counts = _SUMMARY_LINE.search(summary_line)
    if counts is None:
        problems.append(f"no run summary at the end of the output: {summary_line[:120]!r}")
    elif stub.injected["fail"] and int(counts[5]) == 0:
        problems.append("the stub answered 500 but the run summary counts no retries")
    # turns keep coming
    limit = gap_limit(think, deadline)
    agents: dict[str, dict[str, Any]] = {}
    for name in AGENTS:
        journal = vault / "agents" / name / "memories.jsonl"
        snapshot = JournalSnapshot.read(journal)
        problems += check_journal(journal, snapshot)
        times = turn_times(journal)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        quarters = [0, 0, 0, 0]
        for moment in times:
            quarters[min(3, max(0, int(4 * (moment - started) / (minutes * 60))))] += 1
        summaries = check_summaries(journal.parent, len(snapshot.lines), settled=True)
        problems += summaries.problems
        agents[name] = {
            "turns": len(times),
            "turns_by_quarter": quarters,
            "max_gap_s": round(max(gaps, default=0.0), 2),
            "memories": len(snapshot.lines),
            "boundary": summaries.boundary,
            "compactions": summaries.committed,
        }
        if 0 in quarters:
            problems.append(
                f"{name}: no turns in quarter {quarters.index(0) + 1} of the soak {quarters}"
            )
        if gaps and max(gaps) > limit:
            problems.append(
                f"{name}: {max(gaps):.1f} s between two turns, over the {limit:.1f} s the retry policy allows"
            )
        if summaries.boundary == 0:
            problems.append(f"{name}: no compaction was ever committed")
    # failures are visible
    final = read_status(vault)
    if final.code != 0:
        problems.append(f"after the soak mudsim status exited {final.code}: {final.error}")
    for name, agent in final.agents.items():
        agents.setdefault(name, {}).update(
            failures=agent["failures"], last_error=agent["last_error"]
        )
        if agent["failures"] > 0 and agent["last_error"] is None:
            problems.append(
                f"after the soak {name} shows {agent['failures']} failures but no last_error"
            )
    if stub.injected["garbage:summary"] and not any(a["failures"] for a in final.agents.values()):
        problems.append(
            f"the stub answered {stub.injected['garbage:summary']} summaries with garbage, "
            "but no agent's status shows a failure"
        )
    stored = garbage_stored(vault)
    if stored:
        problems.append(f"{stored} summaries hold a garbage reply the stub injected")
    # memory is flat
    ratio, rss = rss_flat(samples.rss)
    if ratio is None:
        problems.append("too few RSS samples to judge memory")
    elif ratio > RSS_GROWTH_LIMIT:
        problems.append(f"memory grew: last-quarter RSS is {ratio:.2f}x the second quarter's {rss}")
    return {
        "tool": "soak",
        "passed": not problems,
        "minutes": minutes,
        "seconds": round(wall, 1),
        "think_interval_s": think,
        "deadline_s": deadline,
        "schedule": {
            "fail_every": faults.fail_every,
            "hang_every": faults.hang_every,
            "garbage_every": faults.garbage_every,
            "hang_seconds": faults.hang_seconds,
        },
        "stub_calls": stub.calls,
        "injected": dict(stub.injected),
        "garbage_stored": stored,
        "run_summary": summary_line,
        "gap_limit_s": round(limit, 1),
        "agents": agents,
        "rss": rss | {"growth": round(ratio, 3) if ratio else None, "samples": len(samples.rss)},
        "status_samples": len(samples.status),
        "warnings": sorted({line for line in errors.splitlines() if line.strip()})[:20],
        "problems": problems,
    }


def garbage_stored(vault: Path) -> int:
    """Summaries the model wrote (``method: llm``) that hold one of the stub's garbage
    replies: the quality gate must keep every one out (0). An extractive summary may
    quote one: garbage sent as a turn is a failed command, which is a memory."""
    texts = [text.strip() for text, _ in GARBAGE if len(text.strip()) >= 3]
    found = 0
    for path in vault.glob("agents/*/summaries/*.md"):
        meta, body = read_front_matter(path)
        if meta.get("method", "llm") == "llm":
            found += any(text in body for text in texts)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--minutes", type=float, default=2.0, help="how long (default 2; 30 by hand)"
    )
    parser.add_argument("--think", type=float, default=0.25, help="think interval, seconds")
    parser.add_argument("--deadline", type=float, default=2.0, help="per-attempt LLM deadline, s")
    parser.add_argument("--fail-every", type=int, default=5)
    parser.add_argument("--hang-every", type=int, default=17)
    parser.add_argument("--garbage-every", type=int, default=11)
    parser.add_argument("--report", type=Path, help="write the report as JSON here")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    faults = FaultSchedule(
        args.fail_every,
        args.hang_every,
        args.garbage_every,
        hang_seconds=max(10.0, 5 * args.deadline),
    )
    report = in_workdir(
        args.keep,
        "mudsim-soak-",
        lambda workdir: soak(args.minutes, args.think, args.deadline, faults, workdir),
    )
    write_report(args.report, report)
    lines = [
        f"{report['seconds']} s, {report['stub_calls']} LLM calls, injected {report['injected']}",
        report["run_summary"],
        *(
            f"{name}: {a.get('turns')} turns {a.get('turns_by_quarter')}, longest gap {a.get('max_gap_s')} s "
            f"(limit {report['gap_limit_s']} s), {a.get('memories')} memories, boundary {a.get('boundary')}, "
            f"{a.get('compactions')} compactions, {a.get('failures')} failures, last error: {a.get('last_error')}"
            for name, a in report["agents"].items()
        ),
        f"RSS: {report['rss']}",
    ]
    print_verdict("soak", report["problems"], lines)
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
