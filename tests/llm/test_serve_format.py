"""``serve-llm``'s ``format``: a JSON schema becomes a llama.cpp grammar, but not one
whose bounds the converter would unroll into a grammar that crashes the parser (and the
whole server with it): such a request is refused (HTTP 400), the server goes on."""

from __future__ import annotations

import importlib.util

import pytest

from engine.llm.serve import SCHEMA_BOUND_MAX, format_grammar
from engine.memory.handbook_prompts import HANDBOOK_SCHEMA
from engine.memory.knowledge_grammar import CONSOLIDATION_SCHEMA, EXTRACTION_SCHEMA

needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None, reason="the local extra is not installed"
)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "maxLength": 60_000},
        {"type": "object", "properties": {"a": {"type": "array", "minItems": 10**9}}},
        {"anyOf": [{"type": "string"}, {"type": "string", "minLength": SCHEMA_BOUND_MAX + 1}]},
    ],
)
def test_a_schema_with_huge_bounds_is_refused_before_any_grammar_is_made(
    schema: dict[str, object],
) -> None:
    with pytest.raises(ValueError, match="at most 4096 is served"):
        format_grammar(schema)


def test_a_format_that_is_neither_json_nor_a_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="JSON schema object"):
        format_grammar(["not", "a", "schema"])


@needs_llama
@pytest.mark.parametrize("schema", [HANDBOOK_SCHEMA, EXTRACTION_SCHEMA, CONSOLIDATION_SCHEMA])
def test_mudsims_own_schemas_make_grammars(schema: dict[str, object]) -> None:
    grammar = format_grammar(schema)
    assert grammar is not None
    assert grammar.startswith(("root ::=", "char ::=", "space ::=")) or "root ::=" in grammar
