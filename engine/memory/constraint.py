"""A request's decoding constraint: the replies it allows, as a grammar and a JSON
schema (a value type: the pure rules in ``engine.memory`` make them, the backends in
``engine.llm`` apply them, so it lives on the lower of the two floors)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Constraint:
    """The replies a request allows, in the forms backends understand."""

    gbnf: str
    """A llama.cpp grammar (the embedded model)."""
    json_schema: Mapping[str, Any]
    """For Ollama's ``format``: the reply is ``{"command": "..."}``."""
    finite: bool = True
    """Every reply the grammar allows is bounded, so it ends decoding itself (the
    embedded model then ignores ``num_predict``, which could only cut a reply short);
    False keeps ``num_predict`` (long free text, such as a handbook)."""
