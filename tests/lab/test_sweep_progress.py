"""What a sweep shows while it runs, on stderr: a bar on a terminal, else one line per
finished run; the time left goes at the pace of this start's runs."""

from __future__ import annotations

import os
import pty
import select
from pathlib import Path

from engine.lab.sweep.progress import SweepProgress, shown, time_left
from engine.lab.sweep.store import Outcome


def test_time_left_goes_at_the_pace_of_this_starts_runs() -> None:
    assert time_left(0, 10.0, 5) is None
    assert time_left(2, 10.0, 6) == 30.0
    assert shown(None) == "?"
    assert shown(3725.4) == "1:02:05"


def test_without_a_terminal_each_finished_run_is_one_line(tmp_path: Path) -> None:
    ticks = iter([0.0, 10.0, 20.0])
    with (tmp_path / "err.txt").open("w+", encoding="utf-8") as log:
        progress = SweepProgress(4, 1, log, clock=lambda: next(ticks))
        progress.started()
        progress.started()
        progress.finished("k1", Outcome("k1", "finished", {}, seconds=9.96))
        progress.finished("k2", Outcome("k2", "failed", {}, "model 'x' is not on it"))
        progress.close()
        log.seek(0)
        assert log.read().splitlines() == [
            "sweep: 2/4 done, 1 running, 0 failed, about 0:00:20 left: finished k1 (10.0 s)",
            "sweep: 3/4 done, 0 running, 1 failed, about 0:00:10 left: FAILED k2: model 'x' is "
            "not on it",
        ]


def test_on_a_terminal_it_is_a_bar_with_runs_running_failed_and_time_left() -> None:
    leader, follower = pty.openpty()
    with os.fdopen(follower, "w", encoding="utf-8") as terminal:
        progress = SweepProgress(4, 1, terminal, clock=iter([0.0, 10.0, 20.0, 20.0]).__next__)
        assert progress.bar is not None
        progress.started()
        progress.finished("k1", Outcome("k1", "failed", {}, "boom"))
        progress.say("mudsim: stopping: letting 0 runs in progress finish")
        progress.close()
    shown_text = b""
    while chunk := _read_some(leader):
        shown_text += chunk
    os.close(leader)
    text = shown_text.decode("utf-8", "replace")
    assert "2/4" in text
    assert "0 running, 1 failed" in text
    assert "0:00:40 left" in text
    assert "mudsim: stopping: letting 0 runs in progress finish" in text


def _read_some(fd: int) -> bytes:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if not ready:
        return b""
    try:
        return os.read(fd, 65536)
    except OSError:  # the terminal's other end closed
        return b""
