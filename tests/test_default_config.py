"""The tracked vault/config/*.md files are exactly what a new vault gets."""

from __future__ import annotations

from pathlib import Path

from engine.config import Settings
from engine.vault.config_files import FILES, load_settings, write_missing_defaults

REPO = Path(__file__).resolve().parent.parent


def test_tracked_config_matches_what_a_new_vault_gets(tmp_path: Path) -> None:
    write_missing_defaults(tmp_path)
    for name in FILES:
        assert (REPO / "vault" / "config" / name).read_text() == (tmp_path / name).read_text(), name


def test_tracked_config_loads_as_the_defaults() -> None:
    assert load_settings(REPO / "vault" / "config") == Settings()


def test_stop_sequences_read_as_escapes(tmp_path: Path) -> None:
    write_missing_defaults(tmp_path)
    assert '- "\\n"' in (tmp_path / "llm.md").read_text()
    assert load_settings(tmp_path).llm.profiles["summarizer"].options["stop"] == ["\n\n"]
