"""`mudsim schema sweep` prints the sweep file's JSON Schema: the shipped sweep files pass
the committed copy, and the schema agrees with ``SweepSpec`` on the file's shape (seeds
a count or a list, probe a bool or a mapping, one of world / worlds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from engine.lab.sweep.file import SweepSpec
from engine.lab.sweep.schema import sweep_schema

SWEEPS = sorted((REPO / "worlds" / "sweeps").glob("*.yaml"))
VALIDATOR = Draft202012Validator(sweep_schema())


def model_accepts(data: dict[str, Any]) -> bool:
    try:
        SweepSpec.model_validate(data)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("path", SWEEPS, ids=[p.name for p in SWEEPS])
def test_a_shipped_sweep_names_and_passes_the_committed_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    first = "# yaml-language-server: $schema=../../docs/schemas/sweep.schema.json"
    assert text.splitlines()[0] == first
    assert (path.parent / first.split("=", 1)[1]).resolve() == (
        REPO / "docs" / "schemas" / "sweep.schema.json"
    )
    schema = json.loads((REPO / "docs" / "schemas" / "sweep.schema.json").read_text("utf-8"))
    data = yaml.safe_load(text)
    assert [e.message for e in Draft202012Validator(schema).iter_errors(data)] == []


BASE: dict[str, Any] = {"world": "w.yaml", "turns": 3}


@pytest.mark.parametrize(
    ("data", "valid"),
    [
        (BASE, True),
        ({"worlds": ["a.yaml", "b.yaml"], "turns": 1}, True),
        ({**BASE, "worlds": None}, True),
        ({**BASE, "seeds": 3}, True),
        ({**BASE, "seeds": [1, 7, 42]}, True),
        ({**BASE, "probe": True}, True),
        ({**BASE, "probe": False}, True),
        ({**BASE, "probe": {"compare": ["full", "none"], "per_category": 3}}, True),
        ({**BASE, "grid": {"model": ["a", "b"]}, "runs": [{}, {"knowledge": "off"}]}, True),
        ({**BASE, "llm": "http://gpu1:11434"}, True),
        ({**BASE, "endpoints": [{"url": "http://gpu1:11434", "slots": 2}]}, True),
        ({**BASE, "timeout": 600, "resources": {"cpus": 0.5, "gpus": 1}}, True),
        ({"turns": 3}, False),
        ({**BASE, "worlds": ["b.yaml"]}, False),
        ({"world": "w.yaml"}, False),
        ({**BASE, "turns": 0}, False),
        ({**BASE, "seeds": 0}, False),
        ({**BASE, "seeds": []}, False),
        ({**BASE, "seeds": [1, 1]}, False),
        ({**BASE, "seeds": True}, False),
        ({**BASE, "probe": "yes"}, False),
        ({**BASE, "probe": {"compare": ["best"]}}, False),
        ({**BASE, "llm": "http://a", "endpoints": [{"url": "http://b"}]}, False),
        ({**BASE, "timeout": True}, False),
        ({**BASE, "grid": {"model": "a"}}, False),
        ({**BASE, "turn": 3}, False),
        ({**BASE, "resources": {"cpus": "2"}}, False),
        ({**BASE, "resources": {"gpus": True}}, False),
    ],
    ids=["minimal", "worlds", "world and null worlds", "seed count", "seed list", "probe on",
         "probe off", "probe options", "grid and runs", "llm", "endpoints", "timeout",
         "no world", "world and worlds", "no turns", "zero turns", "zero seeds", "no seeds",
         "a seed twice", "seeds bool", "probe text", "unknown probe", "llm and endpoints",
         "timeout bool", "grid value not a list", "unknown key", "cpus in quotes",
         "gpus bool"],
)  # fmt: skip
def test_the_schema_agrees_with_the_model(data: dict[str, Any], valid: bool) -> None:
    assert model_accepts(data) is valid
    assert VALIDATOR.is_valid(data) is valid, [e.message for e in VALIDATOR.iter_errors(data)]


def test_every_key_is_described() -> None:
    schema = sweep_schema()
    undescribed = [name for name, field in schema["properties"].items()
                   if not field.get("description")]  # fmt: skip
    assert undescribed == []
