"""What a sweep's setting changes in a run: the values made canonical, the vault's
settings, the derived world, and the files a run starts from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_sweep_support import WORLD

from engine.config import Settings
from engine.lab.sweep.run import RunTask, prepare
from engine.lab.sweep.settings import SettingError, canonical, derive_world, kind_of, vault_settings
from engine.vault.config_files import load_settings
from engine.world.loader import parse_world


@pytest.mark.parametrize(
    ("name", "given", "made"),
    [
        ("knowledge", True, "on"), ("knowledge", "on", "on"), ("retrieval", False, "off"),
        ("handbook", "off", "off"), ("think_interval", 2, 2.0), ("recent_window", 16, 16),
        ("role", "builder", "builder"), ("tags", ["well", "rope"], ["well", "rope"]),
        ("model", " qwen3:4b ", "qwen3:4b"), ("llm", "fake:look", "fake:look"),
        ("memory_compaction.consolidate_every", 8, 8),
    ],
)  # fmt: skip
def test_values_are_made_canonical(name: str, given: Any, made: Any) -> None:
    assert canonical(name, given) == made


@pytest.mark.parametrize(
    ("name", "given", "words"),
    [
        ("knowledge", "maybe", "knowledge is on or off"),
        ("recent_window", -1, "recent_window cannot be -1"),
        ("think_interval", "soon", "think_interval cannot be 'soon'"),
        ("model", "", "model is a non-empty text"),
        ("llm", "gpu:1", "is not an LLM URL"),
        ("memory_compaction.recent_window", 0, "Input should be greater than or equal to 1"),
        ("llm.profiles.actor.options.num_ctx", "big", "options.num_ctx cannot be 'big'"),
        ("record.record", False, "record.record cannot be false"),
        ("nam", "x", "unknown setting 'nam'"),
        ("location", "yard", "unknown setting 'location'"),  # who and where: not swept
    ],
)
def test_bad_settings_say_why(name: str, given: Any, words: str) -> None:
    with pytest.raises(SettingError) as caught:
        canonical(name, given)
    assert words in str(caught.value)


def test_the_kinds() -> None:
    assert [kind_of(n) for n in ("recent_window", "model", "llm", "retrieval",
                                 "memory_compaction.knowledge")] == [
        "character", "run", "run", "switch", "vault"]  # fmt: skip


def test_switches_and_vault_settings_reach_the_settings() -> None:
    plain = vault_settings({})
    assert plain == Settings()
    off = vault_settings({"knowledge": "off", "retrieval": "off", "handbook": "off"})
    actor = off.llm.profiles["actor"]
    assert off.memory_compaction.knowledge is False
    assert actor.knowledge_tokens == 0
    assert actor.handbook_tokens == 0
    assert off.memory_compaction.handbook == "rules"  # no model call for an unread handbook
    on = vault_settings({"knowledge": "on", "retrieval": "on", "handbook": "on"})
    assert on == Settings()
    dotted = vault_settings({"retrieval": "off", "llm.profiles.actor.knowledge_tokens": 50,
                             "memory_compaction.consolidate_every": 8,
                             "llm.profiles.embedder.model": "nomic-embed-text"})  # fmt: skip
    assert dotted.llm.profiles["actor"].knowledge_tokens == 50  # written after the switch: wins
    assert dotted.memory_compaction.consolidate_every == 8
    assert dotted.llm.profiles["embedder"].model == "nomic-embed-text"
    served = vault_settings({}, [{"url": "http://gpu1:11434", "slots": 4}])
    assert served.llm.endpoints[0].url == "http://gpu1:11434"
    assert served.llm.endpoints[0].slots == 4


def test_character_settings_go_to_every_agent_and_no_player() -> None:
    text = derive_world(WORLD, {"recent_window": 8, "goal": "find the well", "model": "tiny"},
                        source="w.yaml")  # fmt: skip
    world = parse_world(text, source="w.yaml")
    agents = [c for c in world.characters.values() if c.type == "agent"]
    assert len(agents) == 3
    assert all(c.recent_window == 8 and c.goal == "find the well" for c in agents)
    assert all(c.model is None for c in agents)  # model is the run's --model, not the world's
    pat = world.characters["pat"]
    assert pat.recent_window is None
    assert pat.goal == ""
    assert derive_world(WORLD, {"knowledge": "off"}, source="w.yaml") == WORLD  # nothing to give


def test_a_player_sharing_an_agents_yaml_anchor_keeps_its_own() -> None:
    shared = WORLD.replace("  - name: Pat\n    type: player\n    location: hall\n",
                           "  - &common {name: Pat, type: player, location: hall}\n"
                           "  - {<<: *common, name: Dee, type: agent, profile: A dancer.}\n")  # fmt: skip
    world = parse_world(derive_world(shared, {"recent_window": 4}, source="w.yaml"), source="w")
    assert world.characters["dee"].recent_window == 4
    assert world.characters["pat"].recent_window is None


def test_a_run_starts_from_its_world_and_settings(tmp_path: Path) -> None:
    settings = {"recent_window": 8, "knowledge": "off", "memory_compaction.consolidate_every": 8}
    task = RunTask("k", tmp_path / "run", WORLD, settings, seed=1, turns=2,
                   endpoints=[{"url": "http://gpu1:11434"}])  # fmt: skip
    (tmp_path / "run").mkdir()
    partial = prepare(task)
    assert partial == tmp_path / "run" / "vault.partial"
    written = load_settings(partial / "config")
    assert written == vault_settings(settings, [{"url": "http://gpu1:11434"}])
    assert written.memory_compaction.knowledge is False
    world = parse_world((tmp_path / "run" / "world.yaml").read_text(), source="w")
    assert world.characters["ada"].recent_window == 8
