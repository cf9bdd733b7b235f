"""JSON Schema documents (draft 2020-12) of mudsim's YAML files, generated from the
pydantic models that validate them, so an editor (VS Code's YAML extension, via a
``# yaml-language-server: $schema=...`` first line) completes and checks their keys.

A schema describes what the loader accepts before it builds anything: the shapes a
model's "before" validators take in (``north: library`` as well as ``north: {to:
library}``) come from ``json_schema_input_type``. What only the loader can check (ids
unique, exits pointing at rooms of the file) is beyond it. The forms are YAML 1.2's,
as editors read them: pydantic's lax conversions (a number written as ``"5"``) load,
but an editor marks them.

    print(render(world_schema()))     # what `mudsim schema world` prints
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
import textwrap
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FOLDER = "docs/schemas"
"""Where the generated schemas are committed, relative to the repository root."""


def regenerate_hint(kind: str) -> str:
    """How to bring the committed schema of ``kind`` up to date."""
    return f"mudsim schema {kind} > {SCHEMA_FOLDER}/{kind}.schema.json"


class _Generator(GenerateJsonSchema):
    """Pydantic's generator, with descriptions from attribute docstrings and a dict's keys
    checked as ``propertyNames`` (pydantic's ``patternProperties`` lets a key that fails
    the pattern through unchecked)."""

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        notes = attribute_docstrings(schema["cls"])
        for name, field in json_schema.get("properties", {}).items():
            if "description" not in field and name in notes:
                field["description"] = notes[name]
        return json_schema

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        json_schema = super().dict_schema(schema)
        patterns = json_schema.pop("patternProperties", None)
        if patterns:
            ((pattern, values),) = patterns.items()
            json_schema["additionalProperties"] = values
            json_schema["propertyNames"] = {**json_schema.get("propertyNames", {}),
                                            "pattern": pattern}  # fmt: skip
        return json_schema


def attribute_docstrings(cls: type[Any]) -> dict[str, str]:
    """Each field's docstring (the string right under ``name: type = ...``) in ``cls`` and
    its bases, the nearest winning; {} where the source cannot be read."""
    notes: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if klass is BaseModel or not issubclass(klass, BaseModel):
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for field, after in itertools.pairwise(body):
            if (
                isinstance(field, ast.AnnAssign)
                and isinstance(field.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                notes[field.target.id] = inspect.cleandoc(after.value.value)
    return notes


def document(model: type[BaseModel], *, kind: str, title: str, description: str) -> dict[str, Any]:
    """The JSON Schema of ``model`` as a standalone document: ``$schema``, ``$id``,
    ``title`` and ``description`` first, then what pydantic makes (validation mode)."""
    generated = model.model_json_schema(mode="validation", schema_generator=_Generator)
    generated.pop("title", None)
    generated.pop("description", None)
    head = {"$schema": DIALECT, "$id": f"urn:mudsim:schema:{kind}", "title": title,
            "description": description}  # fmt: skip
    schema: dict[str, Any] = _markdown({**head, **generated})
    return schema


def _markdown(value: Any) -> Any:
    """Every description as Markdown: a docstring's ``code`` as `code`, its lines joined
    into paragraphs."""
    if isinstance(value, dict):
        return {
            key: _prose(item) if key == "description" and isinstance(item, str)
            else _markdown(item)
            for key, item in value.items()
        }  # fmt: skip
    if isinstance(value, list):
        return [_markdown(item) for item in value]
    return value


def _prose(text: str) -> str:
    paragraphs = inspect.cleandoc(text).replace("``", "`").split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def render(schema: dict[str, Any]) -> str:
    """The schema as committed: JSON indented by 2, keys in a stable order, ASCII only
    (the name pattern's control characters as ``\\u`` escapes)."""
    return json.dumps(schema, indent=2, ensure_ascii=True)


def world_schema() -> dict[str, Any]:
    """The JSON Schema of a world file (``engine.world.schema.WorldSpec``)."""
    from engine.world.schema import WorldSpec

    return document(
        WorldSpec,
        kind="world",
        title="mudsim world file",
        description="A mudsim world (worlds/*.yaml): rooms, exits, objects and characters. "
        "Unknown keys are errors. Ids must be unique and exits and locations must name "
        "rooms of the file: `mudsim run` checks that too.",
    )
