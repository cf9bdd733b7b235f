"""``mudsim cost``: recomputed from ``calls.jsonl``, its sums are the calls' tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recorded_run import GPU, PRICES, record_run

from engine.cli import main
from engine.vault.run_store import CALLS, RunFolder


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cost_json(capsys: pytest.CaptureFixture[str], vault: Path, *args: str) -> dict[str, Any]:
    code, out, err = cli(capsys, "cost", "--vault", vault, "--json", *args)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_sums_are_the_calls_tokens(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = run.read(CALLS)
    data = cost_json(capsys, vault)
    [found] = data["runs"]
    assert found["id"] == run.id
    for name in ("Ada", "Bo"):
        mine = [c for c in calls if c["agent"] == name]
        cost = found["agents"][name]
        assert cost["tokens_in"] == sum(c["prompt_tokens"] for c in mine)
        assert cost["tokens_out"] == sum(c["completion_tokens"] for c in mine)
        assert cost["calls_total"] == len(mine)
        assert cost["failures"] == sum(1 for c in mine if c["error"])
        assert cost["retries"] == sum(c["retries"] for c in mine)
        assert cost["llm_s"] == pytest.approx(sum(c["latency_s"] for c in mine))
        assert cost["queue_s"] == pytest.approx(sum(c["queue_s"] for c in mine))
    total = found["total"]
    assert total == data["total"]
    assert (total["tokens_in"], total["tokens_out"]) == (442, 19)
    assert total["tokens_in"] == sum(c["prompt_tokens"] for c in calls)
    assert total["tokens_out"] == sum(c["completion_tokens"] for c in calls)
    assert total["calls"] == {"turn": 5, "summary": 1}
    price_in, price_out = PRICES[GPU]
    assert total["money"] == pytest.approx((442 * price_in + 19 * price_out) / 1e6)
    assert found["priced"] is True


def test_the_same_as_the_recorder_kept_at_the_end(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cost_json(capsys, vault)["runs"][0]["agents"] == run.meta()["costs"]


def test_a_killed_run_still_has_its_costs(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record_run(vault, end=False, priced=False)
    code, out, err = cli(capsys, "cost", "--vault", vault)
    assert code == 0, err
    lines = out.splitlines()
    assert "no end recorded (still running, or killed)" in lines[0]
    assert lines[1].split() == ["agent", "calls", "by", "kind", "tokens", "in", "tokens", "out",
                                "LLM", "s", "queue", "s", "retries", "failures"]  # fmt: skip
    assert lines[-1].split()[:2] == ["total", "6"]
    assert "442" in lines[-1].split()
    assert "money" not in out, "no prices: no money"


def test_every_run_and_their_sum(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = record_run(vault, priced=False)
    data = cost_json(capsys, vault, "--all")
    assert [r["id"] for r in data["runs"]] == [run.id, other.id]
    assert data["total"]["tokens_in"] == 2 * 442
    assert data["total"]["calls_total"] == 12
    code, out, err = cli(capsys, "cost", "--vault", vault, "--all")
    assert code == 0, err
    assert out.count("\nAll 2 runs\n") == 1
    assert out.splitlines()[-1].split()[:2] == ["total", "12"]
    assert cost_json(capsys, vault, "--run", run.id)["runs"][0]["id"] == run.id


def test_errors_are_one_line(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "cost", "--vault", vault)
    assert code == 2
    assert err == f"mudsim: {vault} is not a vault (no such folder)\n"
    run = record_run(vault)
    code, _, err = cli(capsys, "cost", "--vault", vault, "--all", "--run", run.id)
    assert (code, err) == (2, "mudsim: give --run or --all, not both\n")
    code, _, err = cli(capsys, "cost", "--vault", vault, "--run", "nope")
    assert (code, err) == (2, f"mudsim: no run 'nope' in {vault / 'runs'}; the latest: {run.id}\n")
