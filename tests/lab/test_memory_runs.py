"""Exported memories know their run by the record's journal ranges, not by the wall
clock (issue 31, item 13): a replayed vault's memories carry the recorded run's times,
yet belong to the replay that made them; two runs in one vault each get their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.vault.run_store import runs

WORLD = """\
name: Hall
rooms:
  - {id: hall, name: The Hall, description: A long hall.}
characters:
  - {name: Ada, type: agent, location: hall, profile: A gardener.}
  - {name: Bo, type: agent, location: hall, profile: A smith.}
"""

pytestmark = pytest.mark.replay  # .ci/run runs these again under two hash seeds


def _run(world: Path, vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "2",
                 "--seed", "1", "--llm", "fake:say Good morning;look"])  # fmt: skip
    assert code == 0, capsys.readouterr().err


def _memories(vault: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    code = main(["export", "--vault", str(vault), "--what", "memories", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_replayed_vaults_memories_belong_to_the_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world, vault = tmp_path / "hall.yaml", tmp_path / "vault"
    world.write_text(WORLD, encoding="utf-8")
    _run(world, vault, capsys)
    _run(world, vault, capsys)
    first, second = (run.folder for run in runs(vault))
    rows = _memories(vault, tmp_path / "m.jsonl", capsys)
    assert {row["run"] for row in rows} == {first.name, second.name}
    for agent in ("Ada", "Bo"):
        mine = sorted((row["seq"], row["run"]) for row in rows if row["agent"] == agent)
        owners = [run for _, run in mine]
        split = owners.index(second.name)  # the first run's, then the second's
        assert set(owners[:split]) == {first.name}
        assert set(owners[split:]) == {second.name}

    again = tmp_path / "replayed"
    assert main(["replay", str(second), "--vault", str(again)]) == 0, capsys.readouterr().err
    (replay,) = runs(again)
    replayed = _memories(again, tmp_path / "r.jsonl", capsys)
    by_seq = {(row["agent"], row["seq"]): row["run"] for row in rows}
    for row in replayed:  # the replay made what the second run made; the rest came before
        expected = replay.id if by_seq[row["agent"], row["seq"]] == second.name else None
        assert row["run"] == expected, row
    assert any(row["run"] == replay.id for row in replayed)
    meta = json.loads((replay.folder / "run.json").read_text())
    assert set(meta["journals_start"]) == set(meta["journals_end"]) == {"Ada", "Bo"}
