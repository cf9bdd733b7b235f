"""``mudsim export``, in-process through ``engine.cli.main``: every kind in every format
read back, the run picked, training's filters, and one-line errors."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from recorded_run import PROMPT_ADA, record_run

from engine.cli import main
from engine.lab import export, verbs
from engine.vault.files import file_mode
from engine.vault.run_store import EVENTS, RunFolder, read_tape, runs

ROWS = {"events": 20, "turns": 4, "calls": 6, "training": 2}


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str) -> str:
    assert err.startswith("mudsim: "), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def read_back(path: Path, form: str) -> list[dict[str, object]]:
    if form == "jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[:-1]]
    if form == "csv":
        with path.open(encoding="utf-8", newline="") as file:
            return list(csv.DictReader(file))
    parquet = pytest.importorskip("pyarrow.parquet")
    rows: list[dict[str, object]] = parquet.read_table(path).to_pylist()
    return rows


def test_the_verbs_choices_are_the_exports() -> None:
    assert verbs.WHATS == export.WHATS
    assert verbs.FORMATS == export.FORMATS


@pytest.mark.parametrize("form", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("what", sorted(ROWS))
def test_each_kind_reads_back_in_each_format(
    run: RunFolder, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    what: str, form: str,
) -> None:  # fmt: skip
    if form == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"out.{form}"
    code, said, err = cli(capsys, "export", "--vault", vault, "--what", what, "--out", out)
    assert code == 0, err
    noun = "training pairs" if what == "training" else what  # never "wrote 2 training of"
    assert said == f"wrote {ROWS[what]} {noun} of {run.id} to {out}\n"
    rows = read_back(out, form)
    assert len(rows) == ROWS[what]
    assert all(list(row) == list(export.COLUMNS[what]) for row in rows)
    assert out.stat().st_mode & 0o777 == file_mode(), "an export is an ordinary file (0644)"
    if what == "turns":
        assert [row["command"] for row in rows][1] == "go west"
        assert rows[0]["ok"] in (True, "True")
        assert rows[0]["prompt_tokens"] in (241, "241")


def test_csv_has_its_header_even_with_no_rows(
    run: RunFolder, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pairs.csv"
    code, _, err = cli(capsys, "export", "--vault", vault, "--what", "training",
                       "--agent", "nobody", "--out", out)  # fmt: skip
    assert code == 0, err
    assert (
        out.read_bytes()
        == b"prompt,completion,agent,verb,ok,replayed,mudsim_version,git_commit,git_dirty\r\n"
    )


def test_markdown_has_the_rooms_and_the_agents(
    run: RunFolder, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for what, headings in (("events", ["## hall", "## yard", "## The run"]),
                           ("turns", ["## Ada", "## Bo"]), ("calls", ["## Ada", "## Bo"]),
                           ("training", ["## Ada", "## Bo"])):  # fmt: skip
        out = tmp_path / f"{what}.md"
        code, _, err = cli(capsys, "export", "--vault", vault, "--what", what, "--out", out)
        assert code == 0, err
        page = out.read_text(encoding="utf-8")
        assert page.startswith(f"# {what.capitalize()} of {run.id}\n")
        lines = page.splitlines()
        assert all(heading in lines for heading in headings), (what, page)
    events = (tmp_path / "events.md").read_text(encoding="utf-8")
    assert '- 2026-01-01T08:00 ada > `say hello, "friend"`' in events
    assert "  - (failed) There is no exit west." in events


def test_training_as_chat_and_filtered(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "export", "--vault", vault, "--what", "training", "--chat",
                         "--format", "jsonl", "--out", "-")  # fmt: skip
    assert code == 0, err
    chats = [json.loads(line) for line in out.splitlines()]
    assert chats[0] == {"messages": [{"role": "user", "content": PROMPT_ADA},
                                     {"role": "assistant", "content": 'say hello, "friend"'}]}  # fmt: skip
    assert len(chats) == 2
    for flags, agents in ((["--successful-only"], ["Ada"]), (["--agent", "bo"], ["Bo"]),
                          (["--verb", "say"], ["Ada"]), (["--min-reply-chars", "8"], ["Ada"]),
                          (["--agent", "Bo", "--successful-only"], [])):  # fmt: skip
        code, out, err = cli(capsys, "export", "--vault", vault, "--what", "training",
                             "--format", "jsonl", "--out", "-", *flags)  # fmt: skip
        assert code == 0, err
        assert [json.loads(line)["agent"] for line in out.splitlines()] == agents, flags


def test_the_latest_run_by_default_and_another_by_id_or_its_beginning(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    later = record_run(vault, end=False)
    assert later.id > run.id
    args = ["export", "--vault", vault, "--what", "turns", "--format", "csv", "--out", "-"]
    assert cli(capsys, *args)[0] == 0
    (tmp := vault / "runs" / later.id / EVENTS).write_text("", encoding="utf-8")
    assert tmp.stat().st_size == 0
    code, out, _ = cli(capsys, *args)
    assert (code, out.count("\n")) == (0, 1), "the latest (emptied): only the header"
    code, out, _ = cli(capsys, *args, "--run", run.id)
    assert (code, out.count("\r\n")) == (0, 5)
    code, out, err = cli(capsys, *args, "--run", run.id[:4])
    assert code == 2
    assert one_line_error(err) == (
        f"mudsim: --run {run.id[:4]} could be {later.id}, {run.id}; give more of the id\n"
    )


def test_an_unknown_run_lists_some_ids(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "export", "--vault", vault, "--run", "20990101-nope",
                       "--what", "events", "--out", "-", "--format", "jsonl")  # fmt: skip
    assert code == 2
    assert one_line_error(err) == (
        f"mudsim: no run '20990101-nope' in {vault / 'runs'}; the latest: {run.id}\n"
    )


def test_a_vault_without_runs_or_without_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--what", "events", "--out", tmp_path / "e.jsonl"]
    code, _, err = cli(capsys, "export", "--vault", tmp_path / "absent", *args)
    assert code == 2
    assert "is not a vault" in one_line_error(err)
    (tmp_path / "empty" / "runs").mkdir(parents=True)
    code, _, err = cli(capsys, "export", "--vault", tmp_path / "empty", *args)
    assert code == 2
    assert "holds no recorded run" in one_line_error(err)
    assert not (tmp_path / "e.jsonl").exists()


def test_a_torn_last_line_is_left_out(
    run: RunFolder, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (run.folder / EVENTS).open("a", encoding="utf-8") as tape:
        tape.write('{"n": 21, "kind": "ev')
    code, out, err = cli(capsys, "export", "--vault", vault, "--what", "events",
                         "--format", "jsonl", "--out", "-")  # fmt: skip
    assert (code, err) == (0, "")
    assert len(out.splitlines()) == ROWS["events"]


def test_a_corrupt_line_in_the_middle_is_one_clear_error(
    run: RunFolder, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run.folder / EVENTS
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[3] = lines[3][:-5]
    path.write_text("\n".join(lines), encoding="utf-8")
    code, _, err = cli(capsys, "export", "--vault", vault, "--what", "turns",
                       "--out", tmp_path / "t.csv")  # fmt: skip
    assert code == 2
    assert one_line_error(err).startswith(f"mudsim: {path}, line 4, does not read")
    assert not (tmp_path / "t.csv").exists()


def test_parquet_without_pyarrow_says_how_to_get_it(
    run: RunFolder, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    out = tmp_path / "t.parquet"
    code, said, err = cli(capsys, "export", "--vault", vault, "--what", "turns", "--out", out)
    assert (code, said) == (2, "")
    assert one_line_error(err) == "mudsim: parquet needs pyarrow: pip install 'mudsim[analysis]'\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--what", "events", "--out", "e.txt"], "say --format"),
        (["--what", "turns", "--chat", "--out", "t.jsonl"], "only apply to --what training"),
        (["--what", "calls", "--verb", "go", "--out", "c.csv"], "only apply to --what training"),
        (["--what", "events", "--agent", "Ada", "--out", "e.csv"], "--agent does not apply"),
        (["--what", "training", "--chat", "--out", "t.csv"], "--chat writes JSONL"),
        (["--what", "turns", "--format", "parquet", "--out", "-"], "standard output"),
        (["--what", "turns", "--min-reply-chars", "-1", "--out", "t.csv"], "whole number"),
        (["--what", "bones", "--out", "t.csv"], "invalid choice"),
    ],
    ids=["no format", "chat", "verb", "agent", "chat csv", "parquet stdout", "chars", "what"],
)
def test_bad_arguments(
    run: RunFolder, vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    args: list[str], says: str,
) -> None:  # fmt: skip
    code, _, err = cli(capsys, "export", "--vault", vault, *args)
    assert code == 2
    assert says in one_line_error(err)
    assert list(tmp_path.glob("*.*")) == []


def test_memories_of_every_run_or_of_one(
    world_file: Path, vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = record_run(vault)
    killed = record_run(vault, end=False)  # no end: it would hold what follows, but
    code, _, err = cli(capsys, "do", world_file, "--vault", vault, "look", 'say "hi, all"')
    assert code == 0, err
    during = runs(vault)[-1]  # the do's own record is the last to hold them
    assert during.id != killed.id
    args = ["export", "--vault", vault, "--what", "memories", "--format", "jsonl", "--out", "-"]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    unsaid = ["export", "--vault", vault, "--what", "memories", "--out", "-"]
    assert cli(capsys, *unsaid) == (0, out, "")  # standard output: JSONL unless said (issue 46)
    rows = [json.loads(line) for line in out.splitlines()]
    assert {row["agent"] for row in rows} >= {"Pat", "Ada", "Pip"}
    assert {row["run"] for row in rows} == {during.id}
    pat = [row for row in rows if row["agent"] == "Pat"]
    assert [row["seq"] for row in pat] == list(range(len(pat)))
    assert any('"hi, all"' in row["text"] for row in pat)
    code, out, _ = cli(capsys, *args, "--run", before.id)
    assert (code, out) == (0, "")
    code, out, _ = cli(capsys, *args, "--run", during.id, "--agent", "ada", "--format", "md")
    assert code == 0
    assert out.startswith(f"# Memories of {during.id}\n\n## Ada\n\n- 0 · ")
    assert read_tape(vault / "runs" / during.id / EVENTS), "the run's tapes untouched"
