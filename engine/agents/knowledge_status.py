"""What ``@memory-status`` and ``mudsim status`` say of an agent's knowledge bank, read
from its files (and what this process knows of passes in flight)."""

from __future__ import annotations

from engine.agents.knowledge_pass import AgentKnowledge
from engine.agents.supervisor import one_line
from engine.errors import VaultError
from engine.memory.status import KnowledgeInfo
from engine.vault.knowledge_store import KnowledgeStore


def knowledge_info(
    store: KnowledgeStore, *, memories: int, every: int, known: AgentKnowledge | None = None
) -> KnowledgeInfo:
    """The bank and its passes as ``@memory-status`` and ``mudsim status`` show them
    (read from the files; ``known`` adds what this process knows: in flight, failures)."""
    problem = None
    try:
        entries = store.bank_summary().entries
    except VaultError as exc:
        entries, problem = 0, one_line(exc)
    records = store.passes()
    last = records[-1] if records else None
    done = [r for r in records if r.status != "failed"]
    since = done[-1].memories[1] if done and done[-1].memories else 0
    failures = 0
    for record in reversed(records):
        if record.status != "failed":
            break
        failures += 1
    sized = next((r for r in reversed(done) if r.tier is not None), None)
    error = problem or (last.error if last is not None and last.status == "failed" else None)
    if known is not None and known.last_error and not error:
        error = known.last_error
    return KnowledgeInfo(
        entries=entries,
        tier=sized.tier if sized else None,
        capacity_percent=sized.capacity_percent if sized else None,
        passes=len(records),
        last_pass=last.pass_id if last else None,
        last_status=last.status if last else None,
        last_sim=last.finished.sim if last else None,
        next_at=since + every,
        in_flight=known.in_flight if known else False,
        failures=max(failures, known.failures if known else 0),
        last_error=error,
    )
