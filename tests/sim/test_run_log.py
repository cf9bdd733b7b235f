"""The run log and what a run shows of background failures: an unexpected error goes to
``logs/mudsim.log`` with its traceback and to the user as one line; a failed fsync is
counted in the run summary; closing a vault whose journal cannot be synced still lets
the vault go."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
from pathlib import Path

import pytest
from helpers import run

from engine.errors import VaultError
from engine.llm.request import Generation, LLMRequest
from engine.sim.scheduler import Scheduler
from engine.sim.simulation import Simulation
from engine.vault.journal import EVERY_100_MS
from engine.vault.run_log import run_log_path
from engine.vault.vault import Vault


class BuggySummarizer:
    """A backend with a bug: every call raises something no backend should."""

    async def generate(self, request: LLMRequest) -> Generation:
        await asyncio.sleep(0)
        raise ValueError("an unexpected bug in the summarizer")

    async def aclose(self) -> None:
        return None


async def test_an_unexpected_background_error_goes_to_the_run_log_with_its_traceback(
    vault_dir: Path, world_file: Path
) -> None:
    shown: list[str] = []
    sim = Simulation.open(vault_dir, world_file, warn=shown.append)
    try:
        sim.compactor.first_delay = sim.compactor.max_delay = 0.001
        sim.start_compaction(
            BuggySummarizer(), {c.id: "tiny" for c in sim.world.characters.values()}
        )
        for index in range(9):  # Bo's windows are 4/4: a chunk is due at 9
            run(sim, "Bo", f"think Thought number {index}.")
        for _ in range(200):
            if shown:
                break
            await asyncio.sleep(0.01)
        await sim.compactor.drain(1.0)
        await sim.supervisor.aclose()
    finally:
        sim.close()
    assert shown, "the user is shown the error"
    assert all("\n" not in line for line in shown)
    assert "an unexpected bug in the summarizer" in shown[0]
    log = run_log_path(vault_dir).read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log
    assert "ValueError: an unexpected bug in the summarizer" in log


def test_the_run_log_is_let_go_with_the_vault(vault_dir: Path, world_file: Path) -> None:
    import logging

    before = list(logging.getLogger("mudsim").handlers)
    Simulation.open(vault_dir, world_file).close()
    assert logging.getLogger("mudsim").handlers == before


def test_closing_with_a_failing_fsync_raises_but_lets_the_vault_go(
    vault_dir: Path, world_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim = Simulation.open(vault_dir, world_file)
    run(sim, "Bo", "think Something worth keeping.")
    journal = vault_dir / "agents" / "Bo" / "memories.jsonl"
    kept = journal.read_bytes()

    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(VaultError, match=r"memories\.jsonl"):
        sim.close()
    monkeypatch.undo()
    Vault(vault_dir).lock().release()  # the lock was given back all the same
    assert journal.read_bytes() == kept  # and nothing written was lost


async def test_the_run_summary_counts_fsync_failures_of_this_run(
    sim: Simulation, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.llm.dispatcher import Dispatcher, Endpoint
    from engine.llm.fake import ScriptedBackend
    from engine.sim.run import make_thinkers, summary

    dispatcher = Dispatcher([Endpoint("fake:", ScriptedBackend(["look"]))])
    scheduler = Scheduler(sim, dispatcher, make_thinkers(sim, {}))
    assert "fsync" not in summary(scheduler, dispatcher, 1.0)

    monkeypatch.setattr(sim, "fsync_failures_before", EVERY_100_MS.failures - 2)
    monkeypatch.setattr(type(EVERY_100_MS), "error", property(lambda _self: "fsync of x failed"))
    line = summary(scheduler, dispatcher, 1.0)
    assert "journal fsync FAILED 2 times (last: fsync of x failed)" in line
    await dispatcher.aclose()


@pytest.mark.parametrize("value", [".inf", "0", "-5", ".nan"])
def test_a_timeout_that_is_not_a_positive_number_is_refused(
    vault_dir: Path, world_file: Path, value: str
) -> None:
    Simulation.open(vault_dir, world_file).close()
    llm_md = vault_dir / "config" / "llm.md"
    text = llm_md.read_text(encoding="utf-8").replace("timeout: 300.0", f"timeout: {value}")
    llm_md.write_text(text, encoding="utf-8")
    with pytest.raises(VaultError, match=r"llm\.md"):
        Simulation.open(vault_dir, world_file)
    assert llm_md.read_text(encoding="utf-8") == text


def test_a_run_log_that_cannot_be_opened_is_one_error_and_lets_the_vault_go(
    vault_dir: Path, world_file: Path
) -> None:
    Simulation.open(vault_dir, world_file).close()
    shutil.rmtree(vault_dir / "logs", ignore_errors=True)
    (vault_dir / "logs").write_text("not a folder", encoding="utf-8")
    with pytest.raises(VaultError, match=r"cannot open the run log .*mudsim\.log"):
        Simulation.open(vault_dir, world_file)
    Vault(vault_dir).lock().release()  # the lock was given back
