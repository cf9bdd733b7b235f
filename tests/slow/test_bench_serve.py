"""The serve bench (``scripts/bench_serve.py``) at a tiny size: the real ``mudsim serve``
in its own process, 4 telnet and 2 web clients logging in as new names, chatting, then
the SIGTERM. What it reports holds together; no timing is asserted (``bench.py serve``
measures, at full size)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
from bench_serve import bench_serve, table


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_serve_bench_logs_everyone_in_counts_every_arrival_and_stops_the_server() -> None:
    figures = bench_serve(telnet=4, web=2, seconds=8.0, unloaded=3.0, repeats=1)
    assert figures["logged_in"] == 6
    assert figures["login_errors"] == 0
    assert figures["says_in_window"] > 0
    assert figures["arrivals"] > 0  # the senders' own echoes among them
    assert figures["arrivals"] + figures["missed"] == figures["expected_arrivals"]
    assert figures["turns_per_s_unloaded"] > 0  # the agents think on the fake: model
    assert figures["players_extractive"] == 1
    assert figures["player_summary_calls"] == 0
    assert figures["player_calls"] == 0
    assert figures["server_rss_mb_loaded"] > 0
    assert figures["exit_code"] == 0  # SIGTERM: a clean stop
    assert figures["saved"] == 1
    assert figures["players_saved"] == 6
    assert len(figures["runs"]) == 1
    assert "delivery p50 / p95 / p99 ms" in table(figures)
