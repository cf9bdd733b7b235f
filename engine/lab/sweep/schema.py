"""The JSON Schema of a sweep file (``mudsim schema sweep``), from ``SweepSpec``.

``SweepSpec``'s "before" validators take in more than its field types say (``probe:
true``), and its "after" validator asks for one of ``world`` / ``worlds``: both are
written here into the schema, beside what pydantic makes of the fields. A field without
a docstring of its own gets its description from ``NOTES``.
"""

from __future__ import annotations

from typing import Any

from engine.world.json_schema import document

NOTES = {
    "world": "One world file, relative to this file (or `worlds`, a list).",
    "worlds": "World files, relative to this file; each run is made in each of them.",
    "grid": "Setting -> list of values, crossed: every combination is a configuration "
    "(e.g. `model: [qwen3:4b, gemma3:4b]`).",
    "runs": "Settings, one mapping a run entry, each crossed with the grid (e.g. "
    "`[{}, {knowledge: off}]`).",
    "seeds": "A count of at least 1 (seeds 0, 1, 2, ...) or a list of distinct whole "
    "numbers (`[1, 7, 42]`).",
    "turns": "Each agent's turns in every run.",
    "llm": "One LLM server URL for every run (or `endpoints`; neither: the LLM `mudsim run` "
    "would use).",
    "endpoints": "Inference servers, as `llm.md` holds them (or `llm`, one URL).",
    "resources": "What each run asks of Ray: `{cpus: 1, gpus: 0}`.",
}
"""The sweep file's keys that ``SweepSpec`` leaves without a docstring."""


def sweep_schema() -> dict[str, Any]:
    """The JSON Schema of a sweep file (``engine.lab.sweep.file.SweepSpec``)."""
    from engine.lab.sweep.file import SweepSpec

    schema = document(
        SweepSpec,
        kind="sweep",
        title="mudsim sweep file",
        description="A mudsim sweep (`mudsim sweep SWEEP.yaml`): worlds x runs entries x "
        "grid values x seeds, each run a headless run of `turns` turns. Setting names and "
        "values are checked when the sweep is read: `mudsim sweep SWEEP.yaml --dry-run`.",
    )
    fields = schema["properties"]
    for name, note in NOTES.items():
        fields[name].setdefault("description", note)
    _replace(fields, "seeds", {"anyOf": [
        {"type": "integer", "minimum": 1},
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "uniqueItems": True},
    ]})  # fmt: skip
    _replace(fields, "probe", {"anyOf": [
        {"type": "boolean"}, {"$ref": "#/$defs/ProbeSpec"}, {"type": "null"},
    ]})  # fmt: skip
    schema["oneOf"] = [
        {"required": ["world"], "properties": {"world": {"type": "string"}}},
        {"required": ["worlds"], "properties": {"worlds": {"type": "array"}}},
    ]
    schema["not"] = {
        "required": ["llm", "endpoints"],
        "properties": {"llm": {"type": "string"}, "endpoints": {"type": "array"}},
    }
    return schema


def _replace(fields: dict[str, Any], name: str, shape: dict[str, Any]) -> None:
    """Give field ``name`` the value ``shape``, keeping its title, default and description."""
    kept = {key: fields[name][key] for key in ("default", "description", "title")
            if key in fields[name]}  # fmt: skip
    fields[name] = {**shape, **kept}
