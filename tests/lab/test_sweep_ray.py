"""``mudsim sweep --ray``: a local Ray with two CPUs (one for the module: it takes seconds
to start), the same keys and results as the process pool, runs shipped back as archives
when OUT is not shared, a failing run recorded; and one line when Ray is not installed."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_sweep_support import (
    PromptStub,
    prompt_stub,
    results,
    sweep_text,
    without_timings,
    write_sweep,
)

from engine.cli import main
from engine.lab.sweep.file import load_sweep_file
from engine.lab.sweep.ray import MARKER, RayExecutor
from engine.lab.sweep.sweep import SweepOptions, run_sweep

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

ENVIRON = {"MUDSIM_LLM_URL": "http://127.0.0.1:9"}


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray = pytest.importorskip(
        "ray", reason="Ray (the sweep extra) is not installed: pip install 'mudsim[sweep]'"
    )
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)  # fmt: skip
    yield
    ray.shutdown()


@pytest.fixture
def stub() -> Iterator[PromptStub]:
    with prompt_stub() as server:
        yield server


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_a_four_run_sweep_on_ray_matches_the_pool(
    stub: PromptStub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_sweep(tmp_path, sweep_text(stub.url, turns=2, seeds="2"))
    monkeypatch.chdir(tmp_path)  # OUT given relative: Ray's workers work in other folders
    with open(os.devnull, "w") as quiet:
        on_ray = run_sweep(SweepOptions(path, Path("ray"), ray=""), ENVIRON, err=quiet)
        on_pool = run_sweep(SweepOptions(path, tmp_path / "pool", workers=2), ENVIRON, err=quiet)
    planned = [run.key for run in load_sweep_file(path).runs]
    assert [r.run.key for r in on_ray] == [r.run.key for r in on_pool] == planned
    rows = results(tmp_path / "ray")
    assert all(r["status"] == "finished" for r in rows)
    assert without_timings(rows) == without_timings(results(tmp_path / "pool"))
    for row in rows:
        assert (tmp_path / "ray" / "runs" / row["run_key"] / "vault" / "world").is_dir()
    assert not (tmp_path / "ray" / MARKER).exists()


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_when_out_is_not_shared_each_run_comes_back_as_an_archive(
    stub: PromptStub, tmp_path: Path
) -> None:
    path = write_sweep(tmp_path, sweep_text(stub.url, turns=1, seeds="1",
                                            grid="  model: [tiny, missing]\n"))  # fmt: skip
    out = tmp_path / "out"
    executor = RayExecutor(None, out.resolve(), sharing="never")
    with open(os.devnull, "w") as quiet:
        found = run_sweep(SweepOptions(path, out, ray=""), ENVIRON, err=quiet, executor=executor)
    by_model = {r.run.settings["model"]: r.outcome for r in found}
    assert by_model["tiny"].status == "finished"
    assert by_model["missing"].status == "failed"
    assert "model 'missing' is not on" in str(by_model["missing"].error)
    for result in found:  # unpacked under OUT, the failed run's folder too (its log)
        folder = out / "runs" / result.run.key
        assert (folder / "log.txt").is_file()
        assert (folder / "result.json").is_file()
        assert not folder.with_name(folder.name + ".unpacking").exists()
    finished = out / "runs" / next(r.run.key for r in found if r.outcome.status == "finished")
    assert (finished / "vault" / "agents" / "Ada" / "memories.jsonl").stat().st_size > 0
    assert [r["status"] for r in results(out)] == ["finished", "failed"]


def test_without_ray_it_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="1", grid="  model: [tiny]\n"))
    code = main(["sweep", str(path), "--out", str(tmp_path / "out"), "--ray"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines()[0] == "mudsim: --ray needs Ray: pip install 'mudsim[sweep]'"
    assert not list((tmp_path / "out" / "runs").iterdir())


def test_the_sweep_extra_brings_ray_client() -> None:
    import tomllib

    from helpers import REPO

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]  # fmt: skip
    [ray] = [r for r in extras["sweep"] if re.match(r"ray\b", r)]
    assert re.fullmatch(r"ray\[([a-z,]+)\]>=(\S+)", ray.replace(" ", "")), ray
    assert "client" in ray.split("[")[1].split("]")[0].split(",")  # ray:// needs Ray Client


def test_without_ray_client_a_ray_address_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray", reason="Ray (the sweep extra) is not installed")
    monkeypatch.setitem(sys.modules, "grpc", None)  # Ray without its client extra
    path = write_sweep(tmp_path, sweep_text("fake:look", seeds="1", grid="  model: [tiny]\n"))
    code = main(["sweep", str(path), "--out", str(tmp_path / "out"), "--ray", "ray://127.0.0.1:9"])
    assert code == 2
    assert capsys.readouterr().err == (
        "mudsim: --ray ray://127.0.0.1:9 needs Ray Client, which this Ray was installed "
        "without: pip install 'mudsim[sweep]' (or pip install 'ray[client]')\n")  # fmt: skip
    assert not list((tmp_path / "out" / "runs").iterdir())
