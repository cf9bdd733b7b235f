"""The ``mudsim`` command line, in-process through ``engine.cli.main`` and once through
the real entry point: output, saved state, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import mudsim

import engine
from engine.cli import main

REPO = Path(engine.__file__).resolve().parent.parent
EVERYONE = ["Ada", "Bo", "Pat", "Pip", "Bea"]
STATUS_KEYS = {
    "name",
    "type",
    "memories",
    "boundary",
    "verbatim",
    "immediate_window",
    "recent_window",
    "next_compaction_at",
    "in_flight",
    "failures",
    "short_term",
    "long_term",
}


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    """Run ``mudsim argv`` in this process: (exit code, stdout, stderr)."""
    try:
        code = main([str(arg) for arg in argv])
    except SystemExit as exc:  # argparse's --help
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(err: str) -> None:
    assert err.startswith("mudsim: "), err
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


def journal(vault_dir: Path, folder: str) -> list[dict[str, Any]]:
    path = vault_dir / "agents" / folder / "memories.jsonl"
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines()]


def status_json(
    capsys: pytest.CaptureFixture[str], vault_dir: Path, *extra: str
) -> list[dict[str, Any]]:
    code, out, err = cli(capsys, "status", "--vault", vault_dir, "--json", *extra)
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"clock", "agents", "last_run"}
    agents: list[dict[str, Any]] = data["agents"]
    return agents


# -- do -----------------------------------------------------------------------------


def test_do_prints_the_look_result(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 0, err
    assert err == ""
    assert out.startswith("The Hall\n")
    assert "A long hall with a stone floor." in out
    assert "Exits: north (The Yard), stair (The Tower)" in out
    assert "brass lamp" in out
    assert "Also here: Ada and Pip." in out
    assert "> look" not in out, "one command: no echo"
    assert (vault_dir / "world" / "world.yaml").exists(), "the first call seeds the vault"


def test_do_with_several_commands_echoes_each(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look", "go north")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "> look"
    assert lines[1] == "The Hall"
    second = lines.index("> go north")
    assert second > 1
    assert lines[second - 1] == "", "a blank line between results"
    assert "The Yard" in "\n".join(lines[second:])
    assert out.count("> ") == 2


def test_moving_persists_between_calls_and_agents_remember_it(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "go north")
    assert code == 0, err
    assert "You go north to The Yard." in out

    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 0, err
    assert out.startswith("The Yard\n")
    assert "Also here: Bo and Bea." in out

    arrivals = [m for m in journal(vault_dir, "Bo") if m["text"] == "Pat arrives from The Hall."]
    assert len(arrivals) == 1
    assert arrivals[0]["kind"] == "observation"
    assert arrivals[0]["location"] == "yard"
    assert "Pat" in arrivals[0]["occupants"]


def test_do_waits_for_the_compaction_it_started(
    world_file: Path,
    vault_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MUDSIM_LLM_URL", "fake:")
    thoughts = [f"think Thought {n}." for n in range(9)]  # Bo's windows are 4/4: M = 9 fires
    code, _, err = cli(capsys, "do", world_file, "--vault", vault_dir, "--as", "Bo", *thoughts)
    assert code == 0, err
    assert err == ""
    recent = vault_dir / "agents" / "Bo" / "summaries" / "recent.md"
    assert "covers_to: 4" in recent.read_text()
    (bo,) = status_json(capsys, vault_dir, "--agent", "Bo")
    assert (bo["memories"], bo["boundary"], bo["in_flight"]) == (9, 4, False)
    assert bo["short_term"]["covers_from"] == 0


def test_do_leaves_compaction_pending_when_the_llm_is_out_of_reach(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    thoughts = [f"think Thought {n}." for n in range(9)]
    code, _, err = cli(capsys, "do", world_file, "--vault", vault_dir, "--as", "Bo", *thoughts)
    assert code == 0
    assert err.startswith(
        "mudsim: memory compaction pending for Bo (cannot reach http://127.0.0.1:9"
    )
    assert err.endswith("it continues next run\n")
    (bo,) = status_json(capsys, vault_dir, "--agent", "Bo")
    assert (bo["memories"], bo["boundary"], bo["failures"]) == (9, 0, 1)
    assert bo["next_compaction_at"] == 9  # a backlog: due now


def test_do_acts_as_another_character_with_as(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "--as", "Bo", "look")
    assert code == 0, err
    assert out.startswith("The Yard\n")
    assert "Also here: Bea." in out
    assert [m["command"] for m in journal(vault_dir, "Bo")] == ["look"]


def test_as_defaults_to_the_first_player(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look", "go north")
    assert code == 0, err
    assert "Also here: Ada and Pip." in out, "the viewer is Pat, the first player"
    assert [m["command"] for m in journal(vault_dir, "Pat")] == ["look", "go north"]
    assert all(m["command"] is None for m in journal(vault_dir, "Pip"))
    assert all(m["command"] is None for m in journal(vault_dir, "Ada")), (
        "Ada is listed first, but she is an agent, not a player"
    )


def test_an_in_world_failure_exits_zero(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "go nowhere")
    assert code == 0, err
    assert err == ""
    assert "nowhere" in out
    last = journal(vault_dir, "Pat")[-1]
    assert last["failed"] is True
    assert last["command"] == "go nowhere"


# -- errors -------------------------------------------------------------------------


def test_an_unknown_character_is_a_one_line_error(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "--as", "Nobody", "look")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "Nobody" in err
    assert "Pat" in err, "the error lists who there is"


@pytest.mark.parametrize(
    "argv",
    [
        ["do", "{world}", "--vault", "{vault}", "--bogus", "look"],
        ["do", "{world}", "--vault", "{vault}"],
        ["frobnicate"],
        [],
        ["status", "--vault", "{vault}", "--jason"],
    ],
    ids=["unknown flag", "no command", "unknown verb", "nothing", "status flag"],
)
def test_a_bad_command_line_is_a_one_line_error(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    args = [a.format(world=world_file, vault=vault_dir) for a in argv]
    code, out, err = cli(capsys, *args)
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "--help" in err
    assert not (vault_dir / "world").exists()


def test_a_missing_world_file_is_a_one_line_error(
    tmp_path: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-world.yaml"
    code, out, err = cli(capsys, "do", missing, "--vault", vault_dir, "look")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert str(missing) in err
    assert not (vault_dir / "world" / "world.yaml").exists()


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("name: X\nrooms:\n  - id: a\n    name: [unclosed\n", "line 5"),
        ("name: X\nrooms:\n  - id: a\n    nme: A\ncharacters: []\n", "line 3"),
    ],
    ids=["YAML syntax", "missing field"],
)
def test_a_bad_world_file_is_a_one_line_error_naming_file_and_line(
    tmp_path: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str], text: str, line: str
) -> None:
    bad = tmp_path / "bad-world.yaml"
    bad.write_text(text, encoding="utf-8")
    code, out, err = cli(capsys, "do", bad, "--vault", vault_dir, "look")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert str(bad) in err
    assert line in err
    assert not (vault_dir / "world" / "world.yaml").exists()


def test_a_corrupt_vault_is_a_one_line_error(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "look")[0] == 0
    state = vault_dir / "agents" / "Ada" / "memory-state.json"
    state.write_text("{oops", encoding="utf-8")
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert str(state) in err
    assert state.read_text(encoding="utf-8") == "{oops"


def test_a_vault_that_is_a_file_is_a_one_line_error(
    world_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_folder = tmp_path / "vault-file"
    not_a_folder.write_text("hello", encoding="utf-8")
    code, out, err = cli(capsys, "do", world_file, "--vault", not_a_folder, "look")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert str(not_a_folder) in err
    assert not_a_folder.read_text(encoding="utf-8") == "hello"


def test_a_torn_journal_tail_is_repaired_with_a_warning(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "go north", "say hi")[0] == 0
    path = vault_dir / "agents" / "Bo" / "memories.jsonl"
    clean = path.read_bytes()
    path.write_bytes(clean + b'{"seq": 2, "at": "2025-')

    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")

    assert code == 0, err
    assert out.startswith("The Yard\n")
    assert err.startswith("mudsim: warning: ")
    assert err.count("\n") == 1, err
    assert str(path) in err
    assert path.read_bytes().startswith(clean)
    records = journal(vault_dir, "Bo")
    assert [m["seq"] for m in records] == list(range(len(records)))
    agents = status_json(capsys, vault_dir, "--agent", "Bo")
    assert agents[0]["memories"] == len(records)


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    assert "usage: mudsim" in out
    for verb in ("do", "play", "status", "export", "cost"):
        assert verb in out
    code, out, _ = cli(capsys, "do", "--help")
    assert code == 0
    assert "--as" in out
    assert "--vault" in out


# -- status -------------------------------------------------------------------------


def test_status_json_lists_every_character(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "do", world_file, "--vault", vault_dir, "go north", "say hello")
    assert code == 0, err
    agents = status_json(capsys, vault_dir)
    assert [a["name"] for a in agents] == EVERYONE
    types = {a["name"]: a["type"] for a in agents}
    assert types == {
        "Ada": "agent",
        "Bo": "agent",
        "Pat": "player",
        "Pip": "player",
        "Bea": "player",
    }
    for entry in agents:
        assert set(entry) >= STATUS_KEYS, entry["name"]
        path = vault_dir / "agents" / entry["name"] / "memories.jsonl"
        lines = len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0
        assert entry["memories"] == lines, entry["name"]
        assert entry["boundary"] == 0
        assert entry["verbatim"] == lines
        assert entry["in_flight"] is False
        assert entry["failures"] == 0
        assert entry["short_term"] is None
        assert entry["long_term"] is None
        window = (4, 4) if entry["name"] == "Bo" else (64, 64)
        assert (entry["immediate_window"], entry["recent_window"]) == window
        assert entry["next_compaction_at"] == sum(window) + 1
    by_name = {a["name"]: a for a in agents}
    assert by_name["Pat"]["memories"] == 2
    assert by_name["Bo"]["memories"] >= 2, "Bo saw Pat arrive and heard him"


def test_status_json_for_one_agent(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "go north")[0] == 0
    agents = status_json(capsys, vault_dir, "--agent", "Bo")
    assert [a["name"] for a in agents] == ["Bo"]
    assert agents[0]["memories"] == len(journal(vault_dir, "Bo")) == 1


def test_status_for_an_unknown_agent_is_a_one_line_error(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "look")[0] == 0
    code, out, err = cli(capsys, "status", "--vault", vault_dir, "--agent", "Nobody")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)


def test_status_text_names_every_character(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "look")[0] == 0
    code, out, err = cli(capsys, "status", "--vault", vault_dir)
    assert code == 0, err
    for name in EVERYONE:
        assert f"Memory of {name} (" in out
    code, out, err = cli(capsys, "status", "--vault", vault_dir, "--agent", "Pip")
    assert code == 0, err
    assert "Memory of Pip (player)" in out
    assert "Memory of Pat" not in out


@pytest.mark.parametrize("make", [True, False], ids=["empty folder", "no folder"])
def test_status_on_an_unseeded_vault_says_how_to_seed_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: bool
) -> None:
    folder = tmp_path / "empty"
    if make:
        folder.mkdir()
    code, out, err = cli(capsys, "status", "--vault", folder)
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert str(folder) in err
    assert "mudsim do" in err, "a hint how to seed it"


# -- the real entry point -----------------------------------------------------------


def test_the_real_entry_point_end_to_end(world_file: Path, vault_dir: Path) -> None:
    done = mudsim("do", world_file, "--vault", vault_dir, "go north", "look")
    assert done.returncode == 0, done.stderr
    assert "> go north" in done.stdout
    assert "The Yard" in done.stdout
    assert done.stderr == ""

    done = mudsim("status", "--vault", vault_dir, "--json")
    assert done.returncode == 0, done.stderr
    names = [a["name"] for a in json.loads(done.stdout)["agents"]]
    assert names == EVERYONE

    done = mudsim("do", world_file, "--vault", vault_dir, "--as", "Nobody", "look")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("mudsim: ")
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr

    done = mudsim("do", world_file, "--vault", vault_dir, "--bogus")
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("port", ["0", "65536", "http", "-1"])
def test_serve_llm_refuses_a_bad_port(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-llm", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "expected a port from 1 to 65535" in err


# -- repair ---------------------------------------------------------------------------


def _summarized_then_cut(vault_dir: Path, world_file: Path, keep: int) -> None:
    """Ada's memories 0-29, summarized up to 24 ([0, 16) long-term, [16, 24) short-term),
    then her journal cut to ``keep`` lines as by a disk fault."""
    from engine.memory.record import MemoryKind
    from engine.sim.simulation import Simulation
    from engine.vault.summaries import Summary

    sim = Simulation.open(vault_dir, world_file)
    try:
        mind = sim.minds[sim.character("Ada").id]
        for i in range(30):
            mind.record(MemoryKind.THOUGHT, f"thought {i}", location="hall", occupants=[])
        at = "2026-03-01T12:00:00.000000Z"
        mind.commit(None, Summary("early days", 0, 16, 30, at))
        mind.commit(Summary("early days", 0, 16, 30, at), Summary("later days", 16, 24, 30, at))
        sim.save()
    finally:
        sim.close()
    path = vault_dir / "agents" / "Ada" / "memories.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:keep]), encoding="utf-8")


def test_a_journal_shorter_than_its_summaries_exits_2_then_repair_fixes_it(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _summarized_then_cut(vault_dir, world_file, 20)
    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "memories.jsonl holds 20 memories" in err
    assert "recent.md says memories up to 24" in err
    assert "mudsim repair" in err
    code, out, err = cli(capsys, "status", "--vault", vault_dir)  # read-only: the same refusal
    assert code == 2
    assert_one_line_error(err)
    assert "memories.jsonl holds 20 memories" in err

    code, out, err = cli(capsys, "repair", "--vault", vault_dir, "--agent", "Ada")
    assert code == 0, err
    assert out.startswith("Ada: the journal holds 20 memories; the summaries covered up to 24")
    assert "recent.md: now memories 0-15 (copied from recent-" in out
    assert "longterm.md: kept (memories 0-15)" in out
    assert "boundary 16" in out
    assert "summaries/recent.md" in out
    repaired = [p for p in (vault_dir / "agents" / "Ada").iterdir() if p.name.startswith("repair-")]
    assert len(repaired) == 1
    assert (repaired[0] / "summaries" / "recent.md").exists()

    code, out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 0, err
    ada = next(a for a in status_json(capsys, vault_dir) if a["name"] == "Ada")
    assert ada["boundary"] == 16
    assert ada["memories"] >= 20  # (and she saw Pat look about)

    code, out, err = cli(capsys, "repair", "--vault", vault_dir)
    assert code == 0, err
    assert out.count("nothing to repair") == len(EVERYONE)


def test_a_repair_that_cannot_move_a_file_aside_is_one_line_and_exit_2(
    world_file: Path,
    vault_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    _summarized_then_cut(vault_dir, world_file, 20)
    recent = vault_dir / "agents" / "Ada" / "summaries" / "recent.md"
    kept = recent.read_bytes()

    def denied(source: object, target: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "replace", denied)
    code, out, err = cli(capsys, "repair", "--vault", vault_dir, "--agent", "Ada")
    monkeypatch.undo()
    assert code == 2
    assert_one_line_error(err)
    assert "cannot move" in err
    assert "Permission denied" in err
    assert recent.read_bytes() == kept  # nothing half-done to the commit point
    code, out, err = cli(capsys, "repair", "--vault", vault_dir, "--agent", "Ada")
    assert code == 0, err  # a later repair finishes the job
    assert "boundary 16" in out


def test_a_refused_journal_keeps_even_its_torn_last_line(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _summarized_then_cut(vault_dir, world_file, 20)
    journal = vault_dir / "agents" / "Ada" / "memories.jsonl"
    with journal.open("ab") as handle:
        handle.write(b'{"seq": 20, "te')  # torn, as by a kill mid-line
    kept = journal.read_bytes()
    code, _out, err = cli(capsys, "do", world_file, "--vault", vault_dir, "look")
    assert code == 2
    assert "memories.jsonl holds 20 memories" in err
    assert journal.read_bytes() == kept  # refused: nothing cut, nothing written


def test_repair_of_an_unknown_agent_is_a_one_line_error(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "look")[0] == 0
    code, out, err = cli(capsys, "repair", "--vault", vault_dir, "--agent", "Nobody")
    assert code == 2
    assert out == ""
    assert_one_line_error(err)


# -- the first hour: bad --llm, unknown --as, --version ----------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:99999", "a port that is not 1-65535"),
        ("http://host:abc", "a port that is not 1-65535"),
        ("http://:8080", "no host"),
        ("nonsense", "is not an LLM URL"),
    ],
)
def test_a_bad_llm_url_is_one_line_and_exit_2(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str], url: str, why: str
) -> None:
    code, out, err = cli(
        capsys, "run", world_file, "--vault", vault_dir, "--headless", "--turns", "1", "--llm", url
    )
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert why in err


def test_run_with_an_unknown_as_is_exit_2_like_do(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(
        capsys, "run", world_file, "--vault", vault_dir, "--headless", "--turns", "1",
        "--llm", "fake:look", "--as", "Nobody",
    )  # fmt: skip
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert "no character called 'Nobody'" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "--version")
    assert code == 0
    assert out.strip().startswith("mudsim 0.")
    assert err == ""


def test_status_into_a_closed_pipe_ends_quietly(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mudsim status --json | head``: the reader leaves; no traceback, no message."""
    assert cli(capsys, "do", world_file, "--vault", vault_dir, "--as", "Ada", "look")[0] == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has already gone
    try:
        done = subprocess.run(
            [sys.executable, "-m", "engine.cli", "status", "--vault", str(vault_dir), "--json"],
            stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 141


def test_status_names_a_corrupt_journal_line(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        cli(capsys, "do", world_file, "--vault", vault_dir, "--as", "Ada", "look", "look")[0] == 0
    )
    journal = vault_dir / "agents" / "Ada" / "memories.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(lines[0] + b'{"seq": 1, "oops": true}\n' + b"".join(lines[2:]))
    code, out, err = cli(capsys, "status", "--vault", vault_dir)
    assert code == 2
    assert out == ""
    assert_one_line_error(err)
    assert f"{journal}, line 2" in err
