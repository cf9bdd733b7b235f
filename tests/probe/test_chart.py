"""The chart: a PNG of accuracy by evidence age, one line per configuration."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.lab.probe.chart import write_chart
from engine.lab.probe.questions import Question
from engine.lab.probe.report import Answer, build_report

OPTIONS = ("Bo", "Pat", "I don't know", "Pip", "Bea")
QUESTIONS = [Question("q1", "Ada", "single-hop", "Who?", OPTIONS, "Bo", (1,), 3),
             Question("q2", "Ada", "temporal", "When?", OPTIONS, "Pat", (2,), 300)]  # fmt: skip


def test_the_chart_is_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    answers = [Answer("q1", c, "Bo", "correct" if c == "full" else "wrong", 10)
               for c in ("full", "window")]  # fmt: skip
    answers += [Answer("q2", c, None, "unparsed", 10) for c in ("full", "window")]
    path = write_chart(build_report(QUESTIONS, answers), tmp_path / "chart.png")
    assert path == str(tmp_path / "chart.png")
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_report_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    said = write_chart(build_report(QUESTIONS, []), tmp_path / "chart.png")
    assert said == "Chart: needs matplotlib: pip install 'mudsim[analysis]'"
    assert not (tmp_path / "chart.png").exists()
