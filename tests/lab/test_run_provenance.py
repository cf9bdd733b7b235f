"""A run's record names the code and the models that made it: ``run.json`` has the git
commit with a dirty flag and each model's digest (the server's, or the script's hash);
a scripted run names its model ``fake`` everywhere (``run.json``, every call in
``calls.jsonl``, ``status``), never a model that did not run."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from engine.cli import main
from engine.llm.stub_server import StubOllama
from engine.provenance import code_identity
from engine.vault.run_store import CALLS, read_tape, runs


def _meta(vault: Path) -> dict[str, object]:
    (run,) = runs(vault)
    return json.loads((run.folder / "run.json").read_text())


def test_a_scripted_run_names_fake_and_the_scripts_hash_everywhere(
    world_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    code = main(["run", str(world_file), "--vault", str(vault), "--headless", "--turns", "2",
                 "--llm", "fake:say Hi;look", "--model", "gemma3:4b"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    meta = _meta(vault)
    for role in ("models", "summarizers", "consolidators"):
        assert set(meta[role].values()) == {"fake"}, role  # type: ignore[attr-defined]
    [digest] = meta["model_digests"].values()  # type: ignore[attr-defined]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert list(meta["model_digests"]) == ["fake"]  # type: ignore[call-overload]
    (run,) = runs(vault)
    assert {c["model"] for c in read_tape(run.folder / CALLS)} == {"fake"}
    assert (meta["git_commit"], meta["git_dirty"]) == (code_identity().commit,
                                                       code_identity().dirty)  # fmt: skip
    assert meta["git_commit"] == "unknown" or re.fullmatch(r"[0-9a-f]{40}", str(meta["git_commit"]))
    capsys.readouterr()
    for what in ("turns", "calls", "training"):  # each exported row says what made it
        out = tmp_path / f"{what}.jsonl"
        assert main(["export", "--vault", str(vault), "--what", what, "--out", str(out)]) == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert rows, what
        assert {(r["git_commit"], r["git_dirty"], r["mudsim_version"]) for r in rows} == {
            (meta["git_commit"], meta["git_dirty"], meta["mudsim_version"])}  # fmt: skip
    capsys.readouterr()
    assert main(["status", "--vault", str(vault), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["last_run"]["models"] == ["fake"]
    assert main(["status", "--vault", str(vault)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"Last run {run.id}: models fake")


def test_two_scripts_have_two_digests(world_file: Path, tmp_path: Path) -> None:
    digests = []
    for number, script in enumerate(("fake:look", "fake:say Hi")):
        vault = tmp_path / f"vault{number}"
        assert main(["run", str(world_file), "--vault", str(vault), "--headless", "--turns",
                     "1", "--llm", script]) == 0  # fmt: skip
        digests.append(_meta(vault)["model_digests"])
    assert digests[0] != digests[1]


def test_a_served_runs_record_has_the_servers_digest_of_each_model(
    world_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.delenv("MUDSIM_LLM_URL", raising=False)
    with StubOllama(["look"], models=["tiny"]) as stub:
        vault = tmp_path / "vault"
        code = main(["run", str(world_file), "--vault", str(vault), "--headless", "--turns",
                     "1", "--llm", stub.url, "--model", "tiny"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert _meta(vault)["model_digests"] == {
        "tiny": f"sha256:{hashlib.sha256(b'tiny').hexdigest()}"}  # fmt: skip
