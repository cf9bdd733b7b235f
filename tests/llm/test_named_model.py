"""The model you asked for, or a clear no (issue 32): a model named anywhere (``--model``,
``MUDSIM_MODEL``, a profile's ``model``, a character's) is never swapped for the
embedded model when no server answers; the run exits 3 naming it and saying how to use
the embedded model on purpose. Only when nothing was named does mudsim fall back."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from helpers import REPO, mudsim

from engine.config import LLMConfig, RoleProfile
from engine.errors import LLMUnavailableError
from engine.llm.connect import EndpointChoice, LLMChoice, named_model, settle_default

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

CLOSED = LLMChoice((EndpointChoice("http://127.0.0.1:9"),), "default")
"""The default choice at a port where nothing listens: a missing Ollama."""


def _default_url_is_free() -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", 11434)) != 0


def test_a_model_named_anywhere_is_named() -> None:
    config = LLMConfig()
    assert named_model(None, {}, config) is None
    assert named_model("qwen3:4b", {}, config) == "qwen3:4b"
    assert named_model(None, {"MUDSIM_MODEL": "gemma3:4b"}, config) == "gemma3:4b"
    assert named_model(None, {}, config, [None, "llama3.2"]) == "llama3.2"
    profiled = LLMConfig(profiles={"summarizer": RoleProfile(model="phi4")})
    assert named_model(None, {}, profiled) == "phi4"
    embedder = LLMConfig(profiles={"embedder": RoleProfile(model="nomic-embed-text")})
    assert named_model(None, {}, embedder) is None  # an embedder is optional: not a choice


async def test_a_named_model_with_nothing_answering_is_a_clear_no() -> None:
    lines: list[str] = []
    with pytest.raises(LLMUnavailableError) as raised:
        await settle_default(CLOSED, lines.append, named="qwen3:4b")
    message = str(raised.value)
    assert "'qwen3:4b'" in message
    assert "--llm local" in message
    assert lines == []


@pytest.mark.skipif(not _default_url_is_free(), reason="a server listens at localhost:11434")
def test_run_with_a_named_model_and_no_server_exits_3_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUDSIM_LLM_URL")
    done = mudsim("run", REPO / "worlds" / "demo.yaml", "--vault", tmp_path / "v", "--headless",
                  "--turns", "1", "--model", "qwen3:4b")  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "'qwen3:4b'" in done.stderr
    assert "--llm local" in done.stderr
    assert done.stderr.count("\n") == 1
    assert not (tmp_path / "v" / "runs").exists() or not any((tmp_path / "v" / "runs").iterdir())


@pytest.mark.skipif(not _default_url_is_free(), reason="a server listens at localhost:11434")
def test_a_sweep_over_two_models_with_no_server_is_one_line_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a silent switch to the embedded model; and (issue 46) one line before any
    run, not one FAILED line a run."""
    monkeypatch.delenv("MUDSIM_LLM_URL")
    sweep = tmp_path / "two.yaml"
    sweep.write_text(
        f"world: {REPO / 'worlds' / 'pocket.yaml'}\nturns: 1\ngrid:\n  model: [qwen3:4b, gemma3:4b]\n",
        encoding="utf-8",
    )
    done = mudsim("sweep", sweep, "--out", tmp_path / "out")
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1
    assert "model 'qwen3:4b' was asked for, but no LLM answers" in done.stderr
    assert "--llm local" in done.stderr
    assert list((tmp_path / "out").rglob("result.json")) == []


def test_a_sweep_row_naming_a_model_the_embedded_backend_lacks_fails_naming_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MUDSIM_LLM_URL")
    sweep = tmp_path / "local.yaml"
    sweep.write_text(
        f"world: {REPO / 'worlds' / 'pocket.yaml'}\nturns: 1\nllm: local\n"
        "grid:\n  model: [qwen3:4b]\n",
        encoding="utf-8",
    )
    done = mudsim("sweep", sweep, "--out", tmp_path / "out")
    (row,) = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("result.json")]
    assert row["status"] == "failed", done.stderr
    assert "--model qwen3:4b is not the embedded model (smollm2:135m)" in row["error"]


def test_a_run_through_serve_llm_is_treated_as_the_embedded_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server whose /api/version says it is ``mudsim serve-llm`` runs the embedded model:
    the run keeps its prompts small and writes handbooks by the rules, as in-process."""
    from engine.cli import main
    from engine.llm.connect import SERVED_EMBEDDED
    from engine.llm.stub_server import StubOllama
    from engine.vault.run_store import runs

    for version, embedded in (("0.0.0-stub", False), (SERVED_EMBEDDED, True)):
        with StubOllama(["look"], models=["smollm2:135m"]) as server:
            server.version = version
            vault = tmp_path / version
            code = main(["run", str(REPO / "worlds" / "demo.yaml"), "--vault", str(vault),
                         "--headless", "--turns", "1", "--llm", server.url,
                         "--model", "smollm2:135m"])  # fmt: skip
            assert code == 0, capsys.readouterr().err
        (run,) = runs(vault)
        assert run.meta()["embedded"] is embedded
        assert run.meta()["local"] is False
