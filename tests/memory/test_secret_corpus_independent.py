"""Redaction measured on secrets its authors did not write (issue 44): the independent
corpora (``independent_secrets``), the first's held-out third apart.

The issue's targets on the held-out part are >= 95% of secrets redacted and <= 3% of
harmless sentences touched. Measured (2026-12-07): 94.6% (70 of 74) and 4.9% (2 of 41),
short of both; on a fifth corpus written after the rules (``fresh``, read once), 89.3%
and 13.6%; the tests hold those measured levels (``HELD_OUT_*``), so a change that
does worse fails, and name the targets (``TARGET_*``) the work is not done until it
meets. Through a real knowledge pass over loopback HTTP, where a model repeats every
held-out secret and harmless sentence as a candidate, what survives in any prompt sent
or any file under ``knowledge/`` and ``handbook/`` is measured the same way, and the
harmless sentences in the bank word for word, no worse than ``redact`` alone. The rates
are printed (``-s``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run
from independent_secrets import TUNE_CORPORA, Rates, Sample, leaks, rates, samples

from engine.llm.dispatcher import Dispatcher, Endpoint
from engine.llm.ollama import OllamaBackend
from engine.llm.stub_server import StubOllama
from engine.memory.knowledge_grammar import CANDIDATES_MAX
from engine.memory.secrets import redact
from engine.sim.simulation import Simulation

TARGET_REDACTED = 0.95
TARGET_TOUCHED = 0.03
"""The issue's targets on the held-out part (not met yet: see the module)."""
HELD_OUT_REDACTED = 70 / 74
HELD_OUT_TOUCHED = 2 / 41
"""The held-out part's measured rates, which no change may make worse."""
FRESH_REDACTED = 175 / 196
FRESH_TOUCHED = 17 / 125
"""A fifth corpus, written after the rules were and read once, never tuned on: 89.3% and
13.6% (the rules before issue 44: 44.9% and 8.8%)."""
TUNE_REDACTED = 0.93
"""The least each tune corpus is redacted (measured: 100%, 93.4%, 94.7%, 98.1%)."""


def test_the_corpus_is_as_the_issue_asks() -> None:
    secrets, harmless = samples("secrets"), samples("harmless")
    assert len(secrets) >= 150
    assert len({s.form for s in secrets}) >= 40
    assert len(harmless) >= 100
    held = samples("secrets", "heldout")
    assert len(held) * 3 >= len(secrets) - 2


def _print(name: str, found: Rates) -> None:
    print(f"{name}: {found.redacted}/{found.secrets} secrets redacted "
          f"({found.redacted_share:.1%}), {found.touched}/{found.harmless} harmless "
          f"touched ({found.touched_share:.1%})")  # fmt: skip


def test_redact_on_the_held_out_part_does_no_worse_than_measured() -> None:
    held = rates(samples("secrets", "heldout"), samples("harmless", "heldout"),
                 lambda s: redact(s.text))  # fmt: skip
    _print("held out", held)
    assert held.redacted_share >= HELD_OUT_REDACTED - 1e-9
    assert held.touched_share <= HELD_OUT_TOUCHED + 1e-9


def test_redact_on_the_fresh_corpus_does_no_worse_than_measured() -> None:
    fresh = rates(samples("secrets", None, "fresh"), samples("harmless", None, "fresh"),
                  lambda s: redact(s.text))  # fmt: skip
    _print("fresh", fresh)
    assert fresh.redacted_share >= FRESH_REDACTED - 1e-9
    assert fresh.touched_share <= FRESH_TOUCHED + 1e-9


@pytest.mark.parametrize("corpus", ["independent", *TUNE_CORPORA])
def test_redact_on_the_tune_corpora(corpus: str) -> None:
    split = "tune"
    found = rates(samples("secrets", split, corpus), samples("harmless", split, corpus),
                  lambda s: redact(s.text))  # fmt: skip
    _print(corpus, found)
    assert found.redacted_share >= TUNE_REDACTED, found.leaked
    assert found.touched == 0, found.changed


def _candidates(chunk: list[Sample]) -> list[str]:
    listed = [{"type": "fact", "content": s.text, "tags": ["heard"]} for s in chunk]
    adds = [{"action": "ADD", "candidate": k} for k in range(len(chunk))]
    return [json.dumps(listed), json.dumps({"operations": adds})]


def _everything_kept(vault_dir: Path) -> str:
    agent = vault_dir / "agents" / "Ada"
    files = [p for folder in ("knowledge", "handbook") for p in (agent / folder).rglob("*")]
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(files) if p.is_file())


async def test_through_a_real_pass_no_secret_survives_anywhere(
    sim: Simulation, vault_dir: Path
) -> None:
    secrets, harmless = samples("secrets", "heldout"), samples("harmless", "heldout")
    every = [*secrets, *harmless]
    chunks = [every[k : k + CANDIDATES_MAX] for k in range(0, len(every), CANDIDATES_MAX)]
    with StubOllama(models=["tiny"]) as stub:
        sim.knowledge.first_delay = sim.knowledge.max_delay = 0.001
        dispatcher = Dispatcher([Endpoint(stub.url, OllamaBackend(stub.url), slots=2)])
        sim.start_compaction(dispatcher, {c.id: "tiny" for c in sim.world.characters.values()})
        for chunk in chunks:
            stub.knowledge = _candidates(chunk)
            for sample in chunk:
                line = " ".join(sample.text.split())
                run(sim, "Ada", f"say {line}")
            run(sim, "Ada", "@consolidate")
            await sim.settle_memory(10)
        await dispatcher.aclose()
    sent = "\n".join(str(body.get("prompt", "")) + json.dumps(body) for body in stub.requests)
    kept = _everything_kept(vault_dir)
    leaked = [s.id for s in secrets if leaks(s, sent) or leaks(s, kept)]
    share = 1 - len(leaked) / len(secrets)
    bank = json.loads((vault_dir / "agents/Ada/knowledge/long-term-memory.json").read_text())
    contents = {entry["content"] for entry in bank}
    touched = [s.id for s in harmless if s.text not in contents]
    print(f"through a pass: {len(secrets) - len(leaked)}/{len(secrets)} redacted ({share:.1%}), "
          f"{len(touched)}/{len(harmless)} harmless touched")  # fmt: skip
    assert share >= HELD_OUT_REDACTED - 1e-9
    assert len(touched) / len(harmless) <= HELD_OUT_TOUCHED + 1e-9
