"""A run is reused only when it was made as the sweep file now says: another LLM, model,
probe or mudsim version refuses the start in one line naming the runs (exit 2, nothing
written), and ``--rerun-changed`` runs them again; and every row says what made it (the
LLM's URL without its secrets, the model, the mudsim version, the git commit)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import REPO
from test_sweep_support import finished_results, prompt_stub, results, sweep_text, write_sweep

import engine
from engine.cli import main
from engine.lab.sweep.file import load_sweep_file
from engine.lab.sweep.identity import differences, redact_url, run_fingerprints
from engine.llm.fake import DEFAULT_SUMMARY
from engine.provenance import code_identity, identity_of

ONE = "  model: [tiny]\n"


def sweep(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str]:
    code = main(["sweep", *(str(a) for a in argv)])
    return code, capsys.readouterr().err


def test_a_run_made_with_another_llm_is_refused_then_rerun_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text("fake:look", turns=1, seeds="2", grid=ONE))
    out = tmp_path / "out"
    code, err = sweep(capsys, path, "--out", out, "--workers", "1")
    assert code == 0, err
    before = finished_results(out)
    given = (out / "sweep.yaml").read_text()
    table = (out / "results.csv").read_text()
    path.write_text(sweep_text("fake:say Hi", turns=1, seeds="2", grid=ONE), encoding="utf-8")
    code, err = sweep(capsys, path, "--out", out)
    assert code == 2
    keys = sorted(before)
    look, hi = (
        hashlib.sha256(f"{script}\n{DEFAULT_SUMMARY}".encode()).hexdigest()
        for script in ("look", "say Hi")
    )  # a script's digest: its text's
    assert err == (f"mudsim: 2 finished runs in {out} were made otherwise than the sweep file "
                   f"now says (llm fake:look -> fake:say Hi; model digest fake sha256:{look} -> "
                   f"fake sha256:{hi}): {keys[0]}, {keys[1]}. Give --rerun-changed to run them "
                   "again as the file says, or another --out\n")  # fmt: skip
    assert finished_results(out) == before  # nothing was removed, run or rewritten
    assert (out / "sweep.yaml").read_text() == given  # OUT still says what made its runs
    assert (out / "results.csv").read_text() == table
    code, err = sweep(capsys, path, "--out", out, "--dry-run")
    assert code == 0
    assert err.endswith("0 finished, 0 failed, 2 finished otherwise, 0 to run (dry run: "
                        "nothing was run)\n")  # fmt: skip
    code, err = sweep(capsys, path, "--out", out, "--workers", "1", "--rerun-changed")
    assert code == 0, err
    assert "Sweep: 2 runs: 2 finished (0 before this start)" in err
    assert {r["llm_url"] for r in results(out)} == {"fake:say Hi"}
    assert all(r["attempt"] == 1 for r in results(out))
    code, err = sweep(capsys, path, "--out", out)  # as the file says now: kept
    assert code == 0, err
    assert "2 finished (2 before this start)" in err


def test_a_failure_with_another_llm_runs_again_even_with_skip_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text("fake:look", turns=1, seeds="1", grid=ONE))
    out = tmp_path / "out"
    assert sweep(capsys, path, "--out", out, "--workers", "1")[0] == 0
    [result] = (out / "runs").glob("*/result.json")
    made = json.loads(result.read_text())
    result.write_text(json.dumps({**made, "status": "failed", "error": "boom", "attempt": 3}),
                      encoding="utf-8")  # fmt: skip
    path.write_text(sweep_text("fake:say Hi", turns=1, seeds="1", grid=ONE), encoding="utf-8")
    code, err = sweep(capsys, path, "--out", out, "--workers", "1", "--skip-failed")
    assert code == 0, err  # no refusal: a failure is nothing to reuse; kept, it would mislead
    [row] = results(out)
    assert (row["status"], row["llm_url"], row["attempt"]) == ("finished", "fake:say Hi", 1)
    code, err = sweep(capsys, "report", out, "--rerun-changed")
    assert (code, err) == (2, "mudsim: sweep report takes no --rerun-changed\n")


def test_another_model_from_the_environment_is_a_change_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with prompt_stub() as stub:
        path = write_sweep(tmp_path, f"world: world.yaml\nturns: 1\nllm: {stub.url}\n")
        out = tmp_path / "out"
        monkeypatch.setenv("MUDSIM_MODEL", "tiny")
        assert sweep(capsys, path, "--out", out, "--workers", "1")[0] == 0
        [row] = results(out)
        assert row["llm_model"] == "tiny"
        assert row["model_digest"] == f"sha256:{hashlib.sha256(b'tiny').hexdigest()}"
        monkeypatch.setenv("MUDSIM_MODEL", "small")
        code, err = sweep(capsys, path, "--out", out)
    assert code == 2
    assert "(model tiny -> small; model digest tiny sha256:" in err
    assert err.count("\n") == 1


def test_a_scripted_runs_row_names_no_model_but_fake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_sweep(tmp_path, "world: world.yaml\nturns: 1\nllm: fake:look\n")
    monkeypatch.setenv("MUDSIM_MODEL", "tiny")  # no model runs a script
    assert sweep(capsys, path, "--out", tmp_path / "out", "--workers", "1")[0] == 0
    [row] = results(tmp_path / "out")
    assert row["llm_model"] == "fake"
    assert str(row["model_digest"]).startswith("sha256:")


def test_a_run_of_another_commit_is_refused_naming_both_then_rerun_on_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text("fake:look", turns=1, seeds="1", grid=ONE))
    out = tmp_path / "out"
    assert sweep(capsys, path, "--out", out, "--workers", "1")[0] == 0
    [result] = (out / "runs").glob("*/result.json")
    made = json.loads(result.read_text())
    old = "0123456789abcdef0123456789abcdef01234567"
    made["fingerprint"]["code"] = old  # as a run of another commit records it
    result.write_text(json.dumps(made), encoding="utf-8")
    code, err = sweep(capsys, path, "--out", out)
    assert code == 2
    assert f"commit {old} -> {code_identity().code}" in err
    assert err.count("\n") == 1
    assert sweep(capsys, path, "--out", out, "--rerun-changed")[0] == 0
    assert json.loads(result.read_text())["fingerprint"]["code"] == code_identity().code


def test_a_run_of_an_older_mudsim_is_a_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sweep(tmp_path, sweep_text("fake:look", turns=1, seeds="1", grid=ONE))
    out = tmp_path / "out"
    assert sweep(capsys, path, "--out", out, "--workers", "1")[0] == 0
    [result] = (out / "runs").glob("*/result.json")
    made = json.loads(result.read_text())
    made["fingerprint"]["mudsim"] = "0.0.1"  # as a result.json of an older version says
    result.write_text(json.dumps(made), encoding="utf-8")
    code, err = sweep(capsys, path, "--out", out)
    assert code == 2
    assert f"(mudsim version 0.0.1 -> {engine.version()})" in err
    del made["fingerprint"]  # one made before fingerprints were recorded at all
    result.write_text(json.dumps(made), encoding="utf-8")
    code, err = sweep(capsys, path, "--out", out)
    assert code == 2
    assert "(made before mudsim recorded a run's LLM, probe and version)" in err


def test_a_changed_probe_changes_the_fingerprint(tmp_path: Path) -> None:
    plain = load_sweep_file(write_sweep(tmp_path, sweep_text("fake:look", seeds="1", grid=ONE)))
    probed = load_sweep_file(write_sweep(tmp_path, sweep_text(
        "fake:look", seeds="1", grid=ONE, extra="probe: {compare: [full], per_category: 2}\n")))  # fmt: skip
    [key] = [run.key for run in plain.runs]
    assert [run.key for run in probed.runs] == [key]  # the same run ...
    old = run_fingerprints(plain, {}, "1.0")[key]
    new = run_fingerprints(probed, {}, "1.0")[key]
    assert differences(old, new) == ["probe none -> compare=['full'], per_category=2"]
    assert differences(new, run_fingerprints(probed, {}, "1.1")[key]) == [
        "mudsim version 1.0 -> 1.1"]  # fmt: skip
    assert differences(new, new) == []


def test_every_row_says_what_made_it_and_no_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with prompt_stub() as stub:
        secret = stub.url.replace("http://", "http://ada:hunter2@")
        path = write_sweep(tmp_path, sweep_text(secret, turns=1, seeds="1"))
        out = tmp_path / "out"
        code, err = sweep(capsys, path, "--out", out, "--workers", "2")
    assert code == 0, err
    rows = results(out)
    assert [(r["llm_url"], r["llm_model"]) for r in rows] == [(stub.url, "tiny"),
                                                              (stub.url, "small")]  # fmt: skip
    assert {r["mudsim_version"] for r in rows} == {engine.version()}
    assert {r["git_commit"] for r in rows} == {code_identity().commit}
    assert {r["git_dirty"] for r in rows} == {code_identity().dirty}
    assert list(rows[0])[-9:] == ["llm_url", "llm_model", "model_digest", "mudsim_version",
                                  "git_commit", "git_dirty", "status", "error", "attempt"]  # fmt: skip
    assert "hunter2" not in (out / "results.csv").read_text()
    for result in (out / "runs").glob("*/result.json"):
        assert "hunter2" not in result.read_text()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://ada:hunter2@gpu1:11434", "http://gpu1:11434"),
        ("https://token@api.example.com/v1", "https://api.example.com/v1"),
        ("https://api.example.com/v1?api_key=s3cret&region=eu",
         "https://api.example.com/v1?api_key=REDACTED&region=eu"),
        ("https://h:1/v1?access_token=a&sig=b#frag", "https://h:1/v1?access_token=REDACTED&sig=REDACTED"),
        ("http://gpu1:11434", "http://gpu1:11434"),
        ("fake:say Hi", "fake:say Hi"),
        ("local", "local"),
    ],
)  # fmt: skip
def test_secrets_are_taken_out_of_an_llm_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_the_git_commit_and_dirty_flag_are_read_from_a_checkout_else_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git = shutil.which("git")
    if git is not None and (REPO / ".git").exists():
        head = subprocess.run([git, "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
        assert identity_of(REPO).commit == head
    assert identity_of(tmp_path).commit == "unknown"  # not a checkout (an installed package)
    assert identity_of(tmp_path).dirty is None
    if git is not None:
        checkout = tmp_path / "checkout"
        checkout.mkdir()

        def run(*argv: str) -> None:
            subprocess.run([git, "-C", str(checkout), *argv], check=True, capture_output=True)

        run("init", "-q")
        (checkout / "a.py").write_text("x = 1\n")
        run("add", "a.py")
        run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
        clean = identity_of(checkout)
        assert len(clean.commit) == 40
        assert (clean.dirty, clean.code) == (False, clean.commit)
        (checkout / "new.txt").write_text("untracked\n")  # as git describe --dirty: no change
        assert identity_of(checkout).dirty is False
        (checkout / "a.py").write_text("x = 2\n")
        first = identity_of(checkout)
        (checkout / "a.py").write_text("x = 3\n")
        second = identity_of(checkout)
        assert first.dirty is second.dirty is True
        assert first.commit == second.commit == clean.commit
        assert len({clean.code, first.code, second.code}) == 3  # each tree's code differs
    monkeypatch.setenv("PATH", str(tmp_path))  # no git to be found
    assert identity_of(REPO).commit == "unknown"


def test_a_model_pulled_again_under_its_name_is_a_change_and_a_silent_server_is_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's digest for the run's model is part of what made it: another one (the
    model pulled again) refuses the start; no answer (``unknown``) never does."""
    with prompt_stub() as stub:
        path = write_sweep(tmp_path, f"world: world.yaml\nturns: 1\nllm: {stub.url}\n")
        out = tmp_path / "out"
        monkeypatch.setenv("MUDSIM_MODEL", "tiny")
        assert sweep(capsys, path, "--out", out, "--workers", "1")[0] == 0
        [result] = (out / "runs").glob("*/result.json")
        made = json.loads(result.read_text())
        made["fingerprint"]["digests"] = {"tiny": "sha256:" + "0" * 64}  # then, another model
        result.write_text(json.dumps(made), encoding="utf-8")
        code, err = sweep(capsys, path, "--out", out)
        assert code == 2
        assert f"(model digest tiny sha256:{'0' * 64} -> tiny sha256:" in err
    code, err = sweep(capsys, path, "--out", out, "--dry-run")  # the server is gone
    assert code == 0, err
    assert "1 finished otherwise" not in err
