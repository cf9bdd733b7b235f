"""A finished run's figures, read from its vault and its run record (read only).

- ``turns`` (committed agent turns, from ``events.jsonl``), ``turns_skipped``;
- ``calls`` and ``calls_<kind>`` (turn, summary, merge, extraction, consolidation,
  handbook, dream, warm, probe ...), ``call_failures``, ``retries``, ``tokens_in`` and
  ``tokens_out`` as the server reported them, ``llm_seconds`` (from ``calls.jsonl``,
  as ``mudsim cost`` counts them; the probe's own calls are in its folder, not here);
- ``seconds``: the run's wall time (measured by the worker);
- ``memories`` (every agent's journal), ``compactions`` (chunks summarized),
  ``knowledge_entries`` (every agent's bank);
- ``compaction_lag_max`` / ``compaction_lag_mean``: how far the memories not yet summarized
  went beyond I + 2R (the most the waterfall lets wait: I verbatim, R waiting to be
  compacted, R in flight), sampled for each agent just before each of its compactions
  committed (``memory_count - covers_from`` of each history file) and at the end
  (M - b); the largest excess, and the mean excess over every sample (0: memory kept up);
- with the probe: ``probe_<config>`` (overall accuracy) and ``probe_<config>_<category>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine.errors import VaultError
from engine.lab.cost import total
from engine.sim.recorder import costs_of, prices_of
from engine.sim.status import read_status
from engine.vault.run_store import CALLS, EVENTS, RunFolder, runs
from engine.vault.vault import Vault


def lag_figures(samples: Iterable[tuple[int, int]]) -> tuple[int, float]:
    """(most, mean) excess of each ``(unsummarized, limit)`` sample over its limit."""
    excess = [max(0, unsummarized - limit) for unsummarized, limit in samples]
    if not excess:
        return 0, 0.0
    return max(excess), sum(excess) / len(excess)


def unsummarized_samples(commits: Sequence[tuple[int, int]], memories: int,
                         boundary: int) -> list[int]:  # fmt: skip
    """Memories not yet summarized just before each commit (``(covers_from,
    memory_count)`` of each history file) and at the end."""
    return [count - start for start, count in commits] + [memories - boundary]


def probe_figures(report: Mapping[str, Any]) -> dict[str, float | None]:
    """``probe_<config>`` and ``probe_<config>_<category>`` accuracies from a probe report."""
    found: dict[str, float | None] = {}
    for config, value in report.get("configs", {}).items():
        found[f"probe_{config}"] = value["overall"]["accuracy"]
        for category, score in value.get("categories", {}).items():
            found[f"probe_{config}_{category.replace('-', '_')}"] = score["accuracy"]
    return found


def the_run(vault: Path) -> RunFolder:
    """The record of the vault's one ``run``."""
    recorded = [run for run in runs(vault) if run.meta().get("kind") == "run"]
    if not recorded:
        raise VaultError(f"{vault} holds no run record (the sweep needs record: true)")
    return recorded[-1]


def run_metrics(vault: Path, seconds: float,
                probe_report: Mapping[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    run = the_run(vault)
    cost = total(costs_of(run.read(CALLS), prices_of(run.meta())).values())
    turns = [e for e in run.read(EVENTS) if e.get("kind") == "turn"]
    figures: dict[str, Any] = {
        "turns": len(turns),
        "turns_skipped": sum(1 for e in turns if e.get("error")),
        "calls": sum(cost.calls.values()),
        **{f"calls_{kind}": n for kind, n in sorted(cost.calls.items())},
        "call_failures": cost.failures,
        "retries": cost.retries,
        "tokens_in": cost.tokens_in,
        "tokens_out": cost.tokens_out,
        "llm_seconds": round(cost.llm_s, 3),
        "seconds": round(seconds, 3),
        "model_digest": digest_cell(run.meta().get("model_digests")),
    }
    figures |= memory_metrics(vault)
    if probe_report is not None:
        figures |= probe_figures(probe_report)
    return figures


def digest_cell(digests: Any) -> str | None:
    """A run's ``model_digests`` as one cell: the digest of its one model, else
    ``model=digest`` for each, sorted; None when the record names none."""
    if not isinstance(digests, dict) or not digests:
        return None
    if len(digests) == 1:
        return str(next(iter(digests.values())))
    return ", ".join(f"{model}={digest}" for model, digest in sorted(digests.items()))


def memory_metrics(vault_dir: Path) -> dict[str, Any]:
    vault = Vault(vault_dir)
    folders = {c.name: c.folder for c in vault.load_world().characters.values()
               if c.type == "agent"}  # fmt: skip
    agents = [s for s in read_status(vault_dir) if s.name in folders]
    samples: list[tuple[int, int]] = []
    compactions = 0
    for status in agents:
        history = vault.summaries(folders[status.name]).history()
        compactions += len(history)
        commits = [(summary.covers_from, summary.memory_count) for _, summary in history]
        limit = status.windows.immediate + 2 * status.windows.recent
        samples += [(u, limit) for u in unsummarized_samples(commits, status.memories,
                                                             status.boundary)]  # fmt: skip
    most, mean = lag_figures(samples)
    return {
        "memories": sum(s.memories for s in agents),
        "compactions": compactions,
        "compaction_lag_max": most,
        "compaction_lag_mean": round(mean, 3),
        "knowledge_entries": sum(s.knowledge.entries for s in agents if s.knowledge),
    }
