"""The fault soak at small scale (``scripts/soak.py``), and the stub's fault schedule
that drives it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.llm.stub_server import GARBAGE, FaultSchedule, StubOllama

SCRIPTS = Path(__file__).parents[2] / "scripts"


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(1, 2000))
def test_the_schedule_hangs_then_fails_then_garbles_by_call_number(
    fail: int, hang: int, garbage: int, calls: int
) -> None:
    schedule = FaultSchedule(fail, hang, garbage)
    faults = [schedule.fault_for(n) for n in range(1, calls + 1)]

    def every(k: int, *unless: int) -> int:
        return sum(
            1
            for n in range(1, calls + 1)
            if k and n % k == 0 and not any(u and n % u == 0 for u in unless)
        )

    assert faults.count("hang") == every(hang)
    assert faults.count("fail") == every(fail, hang)
    assert faults.count("garbage") == every(garbage, hang, fail)


def test_the_stub_answers_500_and_garbage_on_schedule_and_summaries_apart() -> None:
    schedule = FaultSchedule(fail_every=3, garbage_every=2)
    with StubOllama(["look"], models=["tiny"], faults=schedule, summary="I rested.") as stub:
        answers = []
        for prompt in ("~Ada>", "MEMORIES:\nx\n\nSUMMARY:", "~Ada>", "~Ada>"):
            body = {"model": "tiny", "prompt": prompt, "stream": False}
            reply = httpx.post(f"{stub.url}/api/generate", json=body, timeout=5)
            answers.append((reply.status_code, reply.json().get("response")))
    assert answers == [(200, "look"), (200, GARBAGE[0][0]), (500, None), (200, GARBAGE[1][0])]
    assert stub.injected == {"garbage": 2, "garbage:summary": 1, "fail": 1}
    with StubOllama(["look"], models=["tiny"], summary="I rested.") as stub:
        body = {
            "model": "tiny",
            "prompt": "RECENT SUMMARY:\nx\n\nCOMBINED SUMMARY:",
            "stream": False,
        }
        assert httpx.post(f"{stub.url}/api/generate", json=body, timeout=5).json()["response"] == (
            "I rested."
        )


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_one_minute_soak_keeps_every_agent_going_and_shows_its_failures(
    tmp_path: Path,
) -> None:
    report_path = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "soak.py"), "--minutes", "1", "--report", str(report_path)],
        capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["injected"]["hang"] > 0
    assert report["injected"]["fail"] > 0
    assert report["injected"]["garbage"] > 0
    assert report["injected"]["garbage:summary"] > 0
    assert report["garbage_stored"] == 0  # the gate kept every garbage summary out
    for name, agent in report["agents"].items():
        assert min(agent["turns_by_quarter"]) > 0, (name, agent)
        assert agent["compactions"] > 0, (name, agent)
        assert agent["failures"] == 0 or agent["last_error"] is not None, (name, agent)
    assert report["problems"] == []
    assert report["passed"]
    assert done.returncode == 0, done.stdout[-2000:]
