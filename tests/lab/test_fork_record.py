"""A fork's record tells the truth (issue 31, items 9-12): its live calls name the
endpoint and model they went to and are priced there, and ``cost`` counts only them;
its ``run.json`` holds the settings in force after ``--set``; a ``--set`` of a window
that characters set themselves says so, or, with ``--override-characters``, applies to
them too; and a fork's record replays byte for byte like any run's.

Two loopback servers: the parent ran on A, the fork goes on with B; both are priced in
the vault's ``config/llm.md``."""

from __future__ import annotations

import hashlib
import json
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.llm.stub_server import StubOllama
from engine.vault.run_store import CALLS, manifest, read_tape, runs

WORLD = """\
name: Two
rooms:
  - {id: hall, name: The Hall, description: A long hall., exits: {north: yard}}
  - {id: yard, name: The Yard, description: A muddy yard., exits: {south: hall}}
characters:
  - {name: Ada, type: agent, location: hall, profile: A gardener., immediate_window: 4,
     recent_window: 4}
  - {name: Bo, type: agent, location: hall, profile: A smith.}
"""
REPLIES = ["say Good morning", "look", "go north", "say The bread is warm", "go south"]
TALKED = "They talked in the hall about the bread and the morning, and I listened."
PRICE_A = (1.0, 2.0)
PRICE_B = (3.0, 5.0)

pytestmark = pytest.mark.replay  # .ci/run runs these again under two hash seeds


@dataclass
class Parent:
    run_dir: Path
    a: StubOllama
    b: StubOllama


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Parent]:
    """A run of two agents, 4 turns each, on server A (its calls priced at A's price)."""
    tmp = tmp_path_factory.mktemp("parent")
    with (
        pytest.MonkeyPatch.context() as patch,
        StubOllama(REPLIES, models=["tiny"], summary=TALKED) as a,
        StubOllama(REPLIES[::-1], models=["tiny", "tiny2"], summary=TALKED) as b,
    ):
        patch.delenv("MUDSIM_LLM_URL", raising=False)
        world, vault = tmp / "two.yaml", tmp / "vault"
        world.write_text(WORLD, encoding="utf-8")
        config = vault / "config"
        config.mkdir(parents=True)
        (config / "memory_compaction.md").write_text("---\nknowledge: false\n---\n")
        endpoints = ", ".join(
            f"{{url: '{s.url}', kind: ollama, model: tiny, slots: 2, price_in: {p[0]}, "
            f"price_out: {p[1]}}}"
            for s, p in ((a, PRICE_A), (b, PRICE_B))
        )
        (config / "llm.md").write_text(f"---\nendpoints: [{endpoints}]\n---\n")
        code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "4",
                     "--seed", "1", "--llm", a.url])  # fmt: skip
        assert code == 0
        (run,) = runs(vault)
        yield Parent(run.folder, a, b)


def _fork(parent: Parent, new: Path, *extra: str) -> int:
    return main(["fork", str(parent.run_dir), "--at", "3", "--vault", str(new), "--headless",
                 "--turns", "2", "--llm", parent.b.url, "--model", "tiny2",
                 "--set", "memory_compaction.immediate_window=6", *extra])  # fmt: skip


def _only_run(vault: Path) -> Path:
    (run,) = runs(vault)
    return run.folder


def _cost(vault: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["cost", "--vault", str(vault), "--json"]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_a_forks_live_calls_name_their_endpoint_and_model_and_its_cost_is_theirs(
    parent: Parent, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "fork"
    parent.b.delay = 0.1  # the live calls take time: the summary must count it
    try:
        code = _fork(parent, new)
    finally:
        parent.b.delay = 0.0  # the server is the module's
    out, err = capsys.readouterr()
    assert code == 0, err
    calls = read_tape(_only_run(new) / CALLS)
    own = [c for c in calls if not c.get("replayed")]
    replayed = [c for c in calls if c.get("replayed")]
    assert own
    assert replayed
    # the fork's summary counts its own calls, its own time, and prices them per agent
    run_summary, cost = out.splitlines()[-2:]
    assert f", {len(own)} LLM calls (" in run_summary
    assert not run_summary.endswith(" 0.0 s in all.")
    assert cost.startswith("Cost per agent: ")
    assert sum(int(n) for n in re.findall(r"(\d+) calls?\b", cost)) == len(own)
    assert {c["endpoint"] for c in own} == {parent.b.url}  # not "tape:"
    assert {c["endpoint"] for c in replayed} == {"tape:"}
    assert {c["model"] for c in own} == {"tiny2"}  # in flight at the branch too: asked again
    expected = sum(c["prompt_tokens"] * PRICE_B[0] + c["completion_tokens"] * PRICE_B[1]
                   for c in own) / 1e6  # fmt: skip
    assert expected > 0
    (report,) = _cost(new, capsys)["runs"]
    assert report["total"]["money"] == pytest.approx(expected, abs=1e-6)
    assert report["total"]["calls_total"] == len(own)
    assert report["total"]["tokens_in"] == sum(c["prompt_tokens"] for c in own)
    assert report["replayed_calls"] == len(replayed)
    capsys.readouterr()
    assert main(["cost", "--vault", str(new)]) == 0
    table = capsys.readouterr().out
    assert f"{len(replayed)} calls were replayed from the record of {parent.run_dir.name}" in table


def test_a_forks_run_json_holds_the_settings_after_set(
    parent: Parent, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "fork"
    code = _fork(parent, new, "--set", "memory_compaction.consolidate_every=5")
    assert code == 0, capsys.readouterr().err
    meta = json.loads((_only_run(new) / "run.json").read_text())
    memory = meta["settings"]["memory_compaction"]
    assert memory["immediate_window"] == 6
    assert memory["consolidate_every"] == 5
    assert meta["sets"] == ["memory_compaction.immediate_window=6",
                            "memory_compaction.consolidate_every=5"]  # fmt: skip
    assert meta["model"] == "tiny2"
    assert meta["endpoints"] == [parent.b.url]
    # per character, the model each kind of call used after the branch point
    for role in ("models", "summarizers", "consolidators"):
        assert set(meta[role].values()) == {"tiny2"}, role
    assert set(meta["models"]) == {"ada", "bo"}
    assert meta["model_digests"] == {"tiny2": f"sha256:{hashlib.sha256(b'tiny2').hexdigest()}"}
    assert meta["kept_own_settings"] == {"immediate_window": ["Ada"]}  # hers stayed 4
    parents = json.loads((parent.run_dir / "run.json").read_text())
    assert parents["settings"]["memory_compaction"]["immediate_window"] == 64


def test_a_set_window_says_which_characters_keep_their_own(
    parent: Parent, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "fork"
    code = _fork(parent, new)
    err = capsys.readouterr().err
    assert code == 0, err
    assert "immediate_window=6 does not apply to Ada (4)" in err
    assert "--override-characters" in err
    assert "Bo (" not in err
    assert "immediate_window: 4" in (new / "agents" / "Ada" / "agent.md").read_text()


def test_override_characters_applies_the_window_to_them_and_the_fork_replays(
    parent: Parent, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "fork"
    code = _fork(parent, new, "--override-characters")
    err = capsys.readouterr().err
    assert code == 0, err
    assert "does not apply to" not in err
    assert "immediate_window: 6" in (new / "agents" / "Ada" / "agent.md").read_text()
    assert json.loads((_only_run(new) / "run.json").read_text())["override_characters"]
    fork_dir = _only_run(new)
    again = tmp_path / "replayed"
    code = main(["replay", str(fork_dir), "--vault", str(again)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "byte-identical" in out
    assert manifest(again) == json.loads((fork_dir / "end.json").read_text())
    (replay,) = runs(again)
    assert all(c["replayed"] for c in read_tape(replay.folder / CALLS))
    assert _cost(again, capsys)["runs"][0]["total"]["calls_total"] == 0


@pytest.mark.parametrize("what", ["turns", "calls", "training"])
def test_a_forks_exports_tell_replayed_rows_from_live_ones(
    parent: Parent, tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    new = tmp_path / "fork"
    assert _fork(parent, new) == 0, capsys.readouterr().err
    capsys.readouterr()
    out = tmp_path / f"{what}.jsonl"
    code = main(["export", "--vault", str(new), "--what", what, "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {row["replayed"] for row in rows} == {True, False}
    if what == "calls":
        assert {r["model"] for r in rows if not r["replayed"]} == {"tiny2"}
        assert {r["model"] for r in rows if r["replayed"]} == {"tiny"}


def test_a_fork_whose_model_nothing_serves_is_exit_3_naming_it(
    parent: Parent, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    code = main(["fork", str(parent.run_dir), "--at", "3", "--vault", str(tmp_path / "fork"),
                 "--headless", "--turns", "1", "--llm", closed, "--model", "qwen3:4b"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3
    assert err.count("\n") == 1
    assert "for model 'qwen3:4b'" in err
    assert "embedded model" not in err.split("(")[0]  # never swapped for another
    assert not (tmp_path / "fork").exists() or not any((tmp_path / "fork").iterdir())
