"""``mudsim handbook``: where an agent's handbook files are and how big, read from a
vault without its lock (as ``mudsim status`` reads it)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.errors import VaultError
from engine.vault.vault import Vault


def handbook_report(vault_dir: Path, agent: str, *, as_json: bool = False) -> str:
    """Each file's path and size (memory_summary.md, MEMORY.md, every skill) and how
    the last write was made; an unknown agent or an unreadable record is an error."""
    vault = Vault(vault_dir)
    if not vault.is_seeded:
        raise VaultError(f"{vault_dir} holds no world yet, so no handbook")
    (character,) = vault.load_world().characters_named(agent)
    store = vault.handbook(character.folder)
    files, state = store.files(), store.state()
    if as_json:
        shape = {
            "agent": character.name,
            "folder": str(store.folder),
            "files": [{"path": str(path), "bytes": size} for path, size in files],
            "last_write": state.model_dump(mode="json") if state else None,
        }
        return json.dumps(shape, indent=2, ensure_ascii=False)
    if not files:
        return (
            f"{character.name} has no handbook yet ({store.folder}): it is written after a "
            "knowledge pass, at the end of a run or on @consolidate."
        )
    width = max(len(f"{size:,}") for _, size in files)
    lines = [f"{character.name}'s handbook ({store.folder}):"]
    lines += [f"  {size:>{width},} bytes  {path}" for path, size in files]
    if state is not None:
        by = "the model" if state.method == "llm" else "the rules"
        line = f"Written by {by} at {state.updated.sim} world time"
        if state.through_pass:
            line += f", through knowledge pass {state.through_pass}"
        if state.fallback:
            line += f"; {state.fallback}"
        lines.append(line + ".")
    return "\n".join(lines)
