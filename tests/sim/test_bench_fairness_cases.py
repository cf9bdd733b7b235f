"""The fairness bench's cases of issue 42, each run once and short (``scripts/bench.py
fairness`` runs them longer, ``--repeats`` times): five agents and a player in one room
against the loopback stub server, a player typing beside a 0.5-2 s summarizer, and a
summarizer that answers every call with HTTP 500. The memory bound holds (an agent's
I + 2R + slots = 13, a player's I + 4R = 20), the agents take turns, and the failing
summarizer is said within 10 s."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "scripts"))
from bench_fairness import bench_failing_summarizer, bench_typing_player

TYPING = "crowd_5in1_w4_typing_player"
FAILING = "crowd_5in1_w4_failing_summarizer"


def _within_bounds(figures: dict[str, float], key: str) -> None:
    assert figures[f"{key}_bound_agents"] == 13
    assert figures[f"{key}_bound_players"] == 20
    assert 0 < figures[f"{key}_peak_unsummarized_agents_max"] <= 13
    assert 0 < figures[f"{key}_peak_unsummarized_players_max"] <= 20


def test_a_player_typing_beside_a_crowd_keeps_the_bound_and_the_agents_turning() -> None:
    figures = bench_typing_player(repeats=1, seconds=5.0)
    _within_bounds(figures, TYPING)
    assert figures[f"{TYPING}_lines_typed"] >= 8
    assert figures[f"{TYPING}_min_agent_turns"] >= 1  # every agent took turns
    assert figures[f"{TYPING}_turns_per_s"] > 0
    assert figures[f"{TYPING}_summary_calls"] > 0
    assert 0 < figures[f"{TYPING}_extractive_share_pct"] <= 100


def test_a_failing_summarizer_is_said_within_10_s_and_the_crowd_goes_on() -> None:
    figures = bench_failing_summarizer(repeats=1, turns=12)
    _within_bounds(figures, FAILING)
    assert figures[f"{FAILING}_runs_without_notice"] == 0
    assert 0 <= figures[f"{FAILING}_first_notice_s"] <= 10
    assert figures[f"{FAILING}_min_agent_turns"] == 12  # the world kept running
    assert figures[f"{FAILING}_extractive_share_pct"] == 100  # no summary came from the model
    assert figures[f"{FAILING}_summary_calls"] > 0
