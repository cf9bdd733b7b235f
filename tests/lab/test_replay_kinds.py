"""Every kind of recorded run replays byte for byte: ``do`` (with the compaction its
commands made due), ``play`` (a player's lines among thinking agents) and a frozen
``play``; and what a replay or fork refuses, it refuses in one line."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from helpers import mudsim

from engine.cli import main
from engine.vault.run_store import manifest, runs

pytestmark = [
    pytest.mark.slow,
    pytest.mark.replay,
]  # subprocesses and whole runs: CI runs it (-m slow), not the default


def _replays(run_dir: Path, new: Path) -> None:
    done = mudsim("replay", run_dir, "--vault", new)
    assert done.returncode == 0, done.stderr
    assert "byte-identical" in done.stdout
    assert manifest(new) == json.loads((run_dir / "end.json").read_text())


def test_a_do_run_with_its_compaction_replays(
    world_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    vault = tmp_path / "vault"
    monkeypatch.setenv("MUDSIM_LLM_URL", "fake:")
    thoughts = [f"think Thought {n}." for n in range(9)]  # Bo's windows 4/4: a compaction
    code = main(["do", str(world_file), "--vault", str(vault), "--as", "Bo", *thoughts])
    assert code == 0, capsys.readouterr().err
    (record,) = runs(vault)
    assert json.loads((record.folder / "run.json").read_text())["kind"] == "do"
    assert "covers_to: 4" in (vault / "agents" / "Bo" / "summaries" / "recent.md").read_text()
    _replays(record.folder, tmp_path / "replayed")


def test_a_play_run_with_thinking_agents_replays(world_file: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    lines = "look\nsay Hello, all\ngo north\nsay Anyone here?\nquit\n"
    done = mudsim("play", world_file, "--vault", vault, "--as", "Pat", "--turns", "3",
                  "--llm", "fake:say Morning;look;go north;think Hm.", stdin=lines)  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = runs(vault)
    events = [
        json.loads(line) for line in (record.folder / "events.jsonl").read_text().splitlines()
    ]
    assert [e["line"] for e in events if e["kind"] == "input"] == [
        "look", "say Hello, all", "go north", "say Anyone here?"]  # fmt: skip
    _replays(record.folder, tmp_path / "replayed")


def test_a_frozen_play_replays(world_file: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    done = mudsim("play", world_file, "--vault", vault, "--as", "Pat", "--frozen",
                  stdin="say Alone\n@dig The Pantry\nquit\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (record,) = runs(vault)
    _replays(record.folder, tmp_path / "replayed")


@pytest.fixture
def a_run(world_file: Path, tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    done = mudsim("run", world_file, "--vault", vault, "--headless", "--turns", "3",
                  "--llm", "fake:say Morning;look")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return runs(vault)[0].folder


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["fork", "{run}", "--at", "99", "--vault", "{new}", "--headless"],
            "the run has 6 committed turns: --at must be between 1 and 6",
        ),
        (
            ["fork", "{run}", "--at", "2", "--vault", "{new}", "--headless", "--set", "nope=1"],
            "--set 'nope=1': expected section.key=value",
        ),
        (
            [
                "fork",
                "{run}",
                "--at",
                "2",
                "--vault",
                "{new}",
                "--headless",
                "--set",
                "memory_compaction.recent_window=0",
            ],
            "--set memory_compaction.recent_window: ",
        ),
        (["replay", "{run}", "--vault", "{full}"], "is not empty: a replay needs a new vault"),
        (["replay", "{missing}", "--vault", "{new}"], "missing"),
    ],
    ids=["at too far", "bad key", "bad value", "vault not empty", "no such run"],
)
def test_what_replay_and_fork_refuse_is_one_line(
    a_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "something").write_text("here")
    names = {"run": a_run, "new": tmp_path / "new", "full": full,
             "missing": tmp_path / "missing"}  # fmt: skip
    code = main([part.format(**names) for part in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert says in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_a_moved_record_still_replays(a_run: Path, tmp_path: Path) -> None:
    """The record and its vault moved together (a copy of the whole vault): the run is
    found relative to its own folder, not to where it was recorded."""
    copy = tmp_path / "elsewhere"
    shutil.copytree(a_run.parent.parent, copy)
    _replays(copy / "runs" / a_run.name, tmp_path / "replayed")


def test_a_ban_made_in_a_run_replays_until_the_same_moment(
    tmp_path: Path, world_file: Path
) -> None:
    """``@ban ... 2h`` bans until two hours after the run's (recorded) clock, so a
    replay made later writes the same ``config/bans.md`` and lists the same bans."""
    vault = tmp_path / "vault"
    done = mudsim("do", world_file, "--vault", vault, "--as", "Pat",
                  "@ban Mallory 2h spamming --force", "@ban")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Banned: Mallory, until " in done.stdout
    time.sleep(1.1)  # the file keeps whole seconds: the replay's own clock is another
    (run,) = runs(vault)
    replayed = mudsim("replay", run.folder, "--vault", tmp_path / "replayed")
    assert replayed.returncode == 0, replayed.stderr
    assert "byte-identical" in replayed.stdout


def test_commands_that_read_what_no_record_holds_replay_as_the_run_showed(
    world_file: Path, tmp_path: Path
) -> None:
    """``@llm-status`` reads the live queue (a replay's LLM is the tape) and ``@account``
    the accounts file (never recorded): a replay shows the recorded result."""
    vault = tmp_path / "vault"
    done = mudsim("play", world_file, "--vault", vault, "--as", "Pat", "--turns", "2",
                  "--llm", "fake:say Morning;look", stdin="@llm-status\nlook\nquit\n")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "fake:" in done.stdout
    added = mudsim("account", "add", "Pip", "--vault", vault, "--password", "pip-password-1")
    assert added.returncode == 0, added.stderr
    done = mudsim(
        "do", world_file, "--vault", vault, "--as", "Pat", "@account", "@account remove Nobody"
    )  # a failure with a hint, remembered whole
    assert done.returncode == 0, done.stderr
    assert "Pip" in done.stdout
    assert "Type @account to list them." in done.stdout
    for record in runs(vault):
        _replays(record.folder, tmp_path / f"replayed-{record.id}")
