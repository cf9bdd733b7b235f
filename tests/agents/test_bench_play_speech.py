"""The play bench's speech figures (scripts/bench_play.py), on the scripted backend."""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPTS = Path(__file__).parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))

from bench_play import play  # noqa: E402


async def test_the_play_bench_reports_speech_with_company_and_speech_that_passes() -> None:
    script = "fake:say Good morning to you.;look;emote waves.;go east"
    out = await play(script, turns=9)
    assert out["turns"] == 9
    # the trio starts in three rooms: whoever is alone has no company to count
    assert 0 <= out["say_with_others_pct"] <= 100
    assert out["speech_lines"] >= 1
    assert out["speech_pass_pct"] == 100.0  # the script's speech is plain words
    assert out["speech_fallbacks"] == 0
