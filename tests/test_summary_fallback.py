"""A summarizer that never writes a summary (it refuses, echoes, writes garbage, or
refuses the request itself) never leaves its reply in ``summaries/``: whatever sequence
of processes runs (``do`` after ``do``, ``run``, ``play``), the extractive summary
arrives after three rejections of one step, marked ``method: extractive``. The LLM is
the loopback stub; the rejections live in ``memory-state.json`` between processes."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from helpers import REPO, mudsim_command, mudsim_env

from engine.cli import main
from engine.llm.stub_server import GARBAGE, StubOllama, is_summary_prompt
from engine.vault.files import read_front_matter

pytestmark = pytest.mark.slow  # subprocesses and whole runs: CI runs it (-m slow), not the default

REFUSALS = ["I cannot.", "There are no memories to summarize.", "I'm an AI and I have no memories.",
            "\x1b[2J", "Summarize these memories of Bo in first person (I, me, my), in 2-4 "
            "sentences.", "What would you like me to do with these memories?",
            "<|im_start|>assistant"]  # fmt: skip


def _summaries(vault: Path, folder: str) -> dict[str, tuple[dict[str, object], str]]:
    found = {}
    for path in sorted((vault / "agents" / folder / "summaries").glob("*.md")):
        found[path.name] = read_front_matter(path)
    return found


def _state(vault: Path, folder: str) -> dict[str, object]:
    state = json.loads((vault / "agents" / folder / "memory-state.json").read_text())
    assert isinstance(state, dict)
    return state


def _no_reply_kept(vault: Path, folder: str, replies: list[str]) -> None:
    for _, (_, body) in _summaries(vault, folder).items():
        for reply in replies:
            assert reply.strip() not in body


@pytest.mark.parametrize("refusal", REFUSALS)
def test_three_do_calls_against_a_refusing_summarizer_reach_the_extractive_summary(
    world_file: Path, vault_dir: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, refusal: str,
) -> None:  # fmt: skip
    with StubOllama(["look"], summary=refusal) as stub:
        monkeypatch.setenv("MUDSIM_LLM_URL", stub.url)
        thoughts = [f"think Thought {n} about the forge." for n in range(9)]  # M = 9: due
        assert main(["do", str(world_file), "--vault", str(vault_dir), "--as", "Bo",
                     *thoughts]) == 0  # fmt: skip
        assert _state(vault_dir, "Bo")["rejections"] == {"chunk@0": 1}
        assert not (vault_dir / "agents" / "Bo" / "summaries" / "recent.md").exists()
        assert main(["do", str(world_file), "--vault", str(vault_dir), "--as", "Bo", "look"]) == 0
        assert _state(vault_dir, "Bo")["rejections"] == {"chunk@0": 2}
        assert main(["do", str(world_file), "--vault", str(vault_dir), "--as", "Bo", "look"]) == 0
        asked = [r for r in stub.requests if is_summary_prompt(r)]
    capsys.readouterr()
    assert len(asked) == 3  # one a process, then no more: the third rejection ends it
    state = _state(vault_dir, "Bo")
    assert state["rejections"] == {}
    assert state["failures"] == 3
    assert state["boundary"] == 4
    meta, body = _summaries(vault_dir, "Bo")["recent.md"]
    assert meta["method"] == "extractive"
    assert "Thought 0 about the forge" in body
    _no_reply_kept(vault_dir, "Bo", [refusal])


def test_a_headless_run_against_the_soaks_garbage_keeps_none_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every garbage reply the soak injects, as every summary: the run's summaries are all
    extractive, and none holds the garbage."""
    world = tmp_path / "crowd.yaml"
    world.write_text(
        "name: Crowd\nrooms:\n  - {id: hall, name: The Hall, description: A long hall.}\n"
        "characters:\n" + "".join(
            f"  - {{name: Ag{n}, type: agent, location: hall, profile: A talker., "
            "immediate_window: 4, recent_window: 4}\n" for n in range(3)
        ),
        encoding="utf-8",
    )  # fmt: skip
    garbage = [text for text, _ in GARBAGE if text.strip()]
    for reply in garbage:
        vault = tmp_path / f"vault-{garbage.index(reply)}"
        with StubOllama(["say The hall is long and cold today."], models=["tiny"],
                        summary=reply) as stub:  # fmt: skip
            code = main(["run", str(world), "--vault", str(vault), "--headless", "--turns", "8",
                         "--llm", stub.url, "--model", "tiny", "--seed", "1"])  # fmt: skip
        _, err = capsys.readouterr()
        assert code == 0, err
        for n in range(3):
            found = _summaries(vault, f"Ag{n}")
            assert found, f"{reply!r}: Ag{n} has no summary"
            assert all(meta["method"] == "extractive" for meta, _ in found.values()), reply
            _no_reply_kept(vault, f"Ag{n}", [reply])


def test_play_reaches_the_extractive_summary_too(tmp_path: Path) -> None:
    world = tmp_path / "alone.yaml"
    world.write_text(
        "name: Alone\nrooms:\n  - {id: well, name: The Well, description: Deep and cold.}\n"
        "characters:\n  - {name: Wren, type: player, location: well, immediate_window: 4, "
        "recent_window: 4}\n",
        encoding="utf-8",
    )
    vault = tmp_path / "vault"
    with StubOllama(["look"], models=["tiny"], summary="I cannot do that.") as stub:
        env = {**mudsim_env(), "MUDSIM_LLM_URL": stub.url}
        player = subprocess.Popen(
            mudsim_command("play", world, "--vault", vault, "--model", "tiny"), text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO,
            env=env,
        )  # fmt: skip
        assert player.stdin is not None
        for n in range(9):
            player.stdin.write(f"think Thought {n} about the well.\n")
        player.stdin.flush()
        deadline = time.monotonic() + 30
        while len([r for r in stub.requests if is_summary_prompt(r)]) < 3:
            assert time.monotonic() < deadline, "the summarizer was not asked three times"
            time.sleep(0.05)
        _, err = player.communicate("quit\n", timeout=60)
        asked = [r for r in stub.requests if is_summary_prompt(r)]
    assert player.returncode == 0, err
    assert len(asked) == 3
    meta, body = _summaries(vault, "Wren")["recent.md"]
    assert meta["method"] == "extractive"
    assert "about the well" in body
    _no_reply_kept(vault, "Wren", ["I cannot do that."])
