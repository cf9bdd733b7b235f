"""``mudsim knowledge``: one agent's knowledge bank and its last pass, read from a vault
without its lock (as ``mudsim status`` reads it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.commands.knowledge import entry_lines
from engine.errors import VaultError
from engine.memory.knowledge import KnowledgeType
from engine.vault.knowledge_store import KnowledgeStore
from engine.vault.vault import Vault


def knowledge_report(
    vault_dir: Path, agent: str, kind: KnowledgeType | None = None, *, as_json: bool = False
) -> str:
    """The bank's entries (of ``kind``), oldest first, and what its last pass did; as
    text, or as a JSON document. An unknown agent or a corrupt bank is an error."""
    vault = Vault(vault_dir)
    if not vault.is_seeded:
        raise VaultError(f"{vault_dir} holds no world yet, so no knowledge bank")
    (character,) = vault.load_world().characters_named(agent)
    store = KnowledgeStore(vault.agent_dir(character.folder) / "knowledge")
    entries = [e for e in store.load() if kind is None or e.type == kind]
    last = store.last_pass(completed_only=False)
    if as_json:
        import json

        shape: dict[str, Any] = {
            "agent": character.name,
            "entries": [e.model_dump(mode="json") for e in entries],
            "last_pass": last.model_dump(mode="json", by_alias=True) if last else None,
            "bank": str(store.bank_path),
        }
        return json.dumps(shape, indent=2, ensure_ascii=False)
    what = f"{kind} entries" if kind else "knowledge bank"
    count = f"{len(entries)} entr{'ies' if len(entries) != 1 else 'y'}"
    lines = [f"{character.name}'s {what}: {count} ({store.bank_path})", *entry_lines(entries)]
    if last is None:
        lines.append("No knowledge pass yet: one runs at the end of a run, or on @consolidate.")
    else:
        done = ", ".join(f"{n} {op}" for op, n in last.operations.items()) or "no changes"
        line = f"Last pass {last.pass_id} ({last.status}, ended {last.finished.sim} world time)"
        noun = "candidate" if last.candidates == 1 else "candidates"
        line += f": {last.candidates} {noun}, {done}"
        if last.fallback:
            line += f"; {last.fallback}"
        if last.error:
            line += f"; error: {last.error}"
        lines.append(line)
    return "\n".join(lines)
