"""What a knowledge pass's replies may look like, for models that decode under a
constraint (pure).

Both replies are JSON: extraction writes an array of candidates, ``[{"type", "content",
"tags"}]``; consolidation writes ``{"operations": [...]}`` where an operation names an
entry by the small number the prompt showed (``{"action": "KEEP", "id": 3}``) or a
candidate by its index (``{"action": "SKIP", "candidate": 0}``). Each comes in two
forms built from the same bounds: a JSON schema for Ollama's ``format`` and a
llama.cpp GBNF for the embedded model, which decodes under it without a token limit.
So everything is bounded (items, string lengths, digits, whitespace) and decoding
always ends; strings hold no raw line breaks or control characters.

The GBNF is a little stricter than the schema: its strings have no escapes but ``\\"``,
``\\\\`` and ``\\/`` and do not begin with a space, and its keys come in one order.
``engine.memory.knowledge_prompts`` re-exports all of this.
"""

from __future__ import annotations

import json
from typing import Any, Final

from engine.memory.constraint import Constraint
from engine.memory.knowledge import CONTENT_MAX as CONTENT_MAX
from engine.memory.knowledge import KNOWLEDGE_TYPES

CANDIDATES_MAX: Final = 12
TAGS_MAX: Final = 6
TAG_MAX: Final = 30
OPERATIONS_MAX: Final = 40
ENTRY_DIGITS: Final = 4
"""Entry numbers run from 1 to 9999."""
INDEX_DIGITS: Final = 2
"""Candidate indexes run from 0 to 99 (an unconstrained extraction may give more than
``CANDIDATES_MAX``; those it does not name are added anyway)."""


# --- JSON schemas --------------------------------------------------------------------


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_CONTENT: Final = {"type": "string", "minLength": 1, "maxLength": CONTENT_MAX}
_TAGS: Final = {
    "type": "array",
    "maxItems": TAGS_MAX,
    "items": {"type": "string", "minLength": 1, "maxLength": TAG_MAX},
}
_TYPE: Final = {"type": "string", "enum": list(KNOWLEDGE_TYPES)}
_ENTRY: Final = {"type": "integer", "minimum": 1, "maximum": 10**ENTRY_DIGITS - 1}
_INDEX: Final = {"type": "integer", "minimum": 0, "maximum": 10**INDEX_DIGITS - 1}


def _action(name: str) -> dict[str, Any]:
    return {"type": "string", "enum": [name]}


EXTRACTION_SCHEMA: Final = {
    "type": "array",
    "maxItems": CANDIDATES_MAX,
    "items": _object({"type": _TYPE, "content": _CONTENT, "tags": _TAGS}),
}

CONSOLIDATION_SCHEMA: Final = _object(
    {
        "operations": {
            "type": "array",
            "maxItems": OPERATIONS_MAX,
            "items": {
                "anyOf": [
                    _object({"action": _action("KEEP"), "id": _ENTRY}),
                    _object(
                        {
                            "action": _action("UPDATE"),
                            "id": _ENTRY,
                            "content": _CONTENT,
                            "tags": _TAGS,
                        }
                    ),
                    _object({"action": _action("DELETE"), "id": _ENTRY}),
                    _object({"action": _action("ADD"), "candidate": _INDEX}),
                    _object(
                        {
                            "action": _action("ADD"),
                            "candidate": _INDEX,
                            "type": _TYPE,
                            "content": _CONTENT,
                            "tags": _TAGS,
                        }
                    ),
                    _object({"action": _action("SKIP"), "candidate": _INDEX}),
                ]
            },
        }
    }
)


# --- GBNF ----------------------------------------------------------------------------


def _literal(text: str) -> str:
    """A GBNF literal for ``text`` written as JSON (GBNF escapes like JSON)."""
    return json.dumps(json.dumps(text))


def _list(item: str, most: int) -> str:
    """A JSON array of at most ``most`` ``item``s."""
    return f'"[" ws ( {item} ( ws "," ws {item} ){{0,{most - 1}}} ws )? "]"'


def _members(pairs: tuple[tuple[str, str], ...]) -> str:
    return ' ws "," ws '.join(f'{_literal(key)} ws ":" ws {value}' for key, value in pairs)


def _gbnf_object(*pairs: tuple[str, str], more: tuple[tuple[str, str], ...] = ()) -> str:
    """An object of ``pairs`` in order, then optionally all of ``more``."""
    tail = f' ( ws "," ws {_members(more)} )?' if more else ""
    return f'"{{" ws {_members(pairs)}{tail} ws "}}"'


_NEW: Final = (("type", "kind"), ("content", "content"), ("tags", "tags"))
"""A candidate's members, in the order written."""
_COMMON: Final = [
    f'content ::= "\\"" first char{{0,{CONTENT_MAX - 1}}} "\\""',
    f"tags ::= {_list('tag', TAGS_MAX)}",
    f'tag ::= "\\"" first plain{{0,{TAG_MAX - 1}}} "\\""',
    "kind ::= " + " | ".join(_literal(kind) for kind in KNOWLEDGE_TYPES),
    'char ::= plain | "\\\\" ["\\\\/]',
    'plain ::= [^"\\\\\\x00-\\x1F\\x7F]',
    'first ::= [^"\\\\\\x00-\\x20\\x7F]',
    'ws ::= ( " " | "\\n" " "{0,8} )?',
]

EXTRACTION_GBNF: Final = "\n".join(
    [
        f"root ::= {_list('item', CANDIDATES_MAX)}",
        "item ::= " + _gbnf_object(*_NEW),
        *_COMMON,
    ]
)


def _op(action: str, *pairs: tuple[str, str], more: tuple[tuple[str, str], ...] = ()) -> str:
    return _gbnf_object(("action", _literal(action)), *pairs, more=more)


CONSOLIDATION_GBNF: Final = "\n".join(
    [
        'root ::= "{" ws ' + _literal("operations") + ' ws ":" ws ops ws "}"',
        f"ops ::= {_list('op', OPERATIONS_MAX)}",
        "op ::= keep | update | delete | add | skip",
        f"keep ::= {_op('KEEP', ('id', 'entry'))}",
        "update ::= " + _op("UPDATE", ("id", "entry"), ("content", "content"), ("tags", "tags")),
        f"delete ::= {_op('DELETE', ('id', 'entry'))}",
        f"add ::= {_op('ADD', ('candidate', 'index'), more=_NEW)}",
        f"skip ::= {_op('SKIP', ('candidate', 'index'))}",
        f"entry ::= [1-9] [0-9]{{0,{ENTRY_DIGITS - 1}}}",
        f"index ::= [0-9] | [1-9] [0-9]{{1,{INDEX_DIGITS - 1}}}",
        *_COMMON,
    ]
)

EXTRACTION_CONSTRAINT: Final = Constraint(
    gbnf=EXTRACTION_GBNF + "\n", json_schema=EXTRACTION_SCHEMA
)
CONSOLIDATION_CONSTRAINT: Final = Constraint(
    gbnf=CONSOLIDATION_GBNF + "\n", json_schema=CONSOLIDATION_SCHEMA
)


def extraction_constraint() -> Constraint:
    return EXTRACTION_CONSTRAINT


def consolidation_constraint() -> Constraint:
    return CONSOLIDATION_CONSTRAINT
