"""The world file and the vault agree, or you are told: a vault seeded with the demo
world and run with the pocket world's file says in one line that the file is another
world, runs the vault's world, and gives no ``world apply`` hint (that would merge two
unrelated worlds); the same world whose file grew keeps its hint. Typed input is taken
in NFKC end to end (``mudsim do ... "ｌｏｏｋ"`` looks). Through ``engine.cli.main``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import engine
from engine.cli import main

WORLDS = Path(engine.__file__).resolve().parent.parent / "worlds"


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def demo_vault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    vault = tmp_path / "my-vault"
    code, _out, err = cli(capsys, "do", WORLDS / "demo.yaml", "--vault", vault, "look")
    assert code == 0, err
    return vault


def notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("mudsim: note: ")]


def test_do_with_another_worlds_file_says_so_and_the_same_world_keeps_its_hint(
    demo_vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pocket = WORLDS / "pocket.yaml"
    code, out, err = cli(capsys, "do", pocket, "--vault", demo_vault, "look")
    assert code == 0, err
    assert notes(err) == [
        f"mudsim: note: {pocket} is the world Pocket, but {demo_vault} holds the world Demo: "
        f"running Demo as saved (a vault holds one world; give Pocket a --vault of its own)"
    ]
    assert "world apply" not in err
    assert out.startswith("The Lobby\n")  # Demo's start, not Pocket's kitchen
    # the demo world's own file, grown by an object (its name in other letter case)
    grown = tmp_path / "demo.yaml"
    shutil.copy(WORLDS / "demo.yaml", grown)
    text = grown.read_text(encoding="utf-8").replace(
        "objects:\n", "objects:\n  - {id: cup, name: a tin cup, location: lobby}\n", 1
    )
    grown.write_text(text.replace("name: Demo\n", "name: DEMO\n", 1), encoding="utf-8")
    code, _out, err = cli(capsys, "do", grown, "--vault", demo_vault, "look")
    assert code == 0, err
    (note,) = notes(err)
    assert "declares 1 object that the vault lacks" in note
    assert f"mudsim world apply {grown} --vault {demo_vault}" in note


def test_run_with_another_worlds_file_says_so_and_runs_the_vaults_world(
    demo_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pocket = WORLDS / "pocket.yaml"
    argv = ("run", pocket, "--vault", demo_vault, "--headless", "--turns", "1", "--llm", "fake:")
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    (note,) = notes(err)
    assert note.startswith(f"mudsim: note: {pocket} is the world Pocket, but {demo_vault} holds")
    assert "world apply" not in err
    assert out.startswith("Demo: 2 agents")


def test_do_takes_a_full_width_command_as_people_type_it(
    demo_vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = WORLDS / "demo.yaml"
    code, out, err = cli(capsys, "do", demo, "--vault", demo_vault, "ｌｏｏｋ", "go ｇａｒｄｎ")
    assert code == 0, err
    assert "There is no command" not in out
    looked, went = out.split("\n\n", 1)
    assert "The Lobby\n" in looked
    assert "(Taking 'gardn' as 'garden'.)\nYou go to The Garden." in went
