"""What a summary may look like, for models that decode under a constraint (pure).

A small model asked for a summary often writes nothing (a blank first line meets the
"\\n\\n" stop), copies its memories line by line until the token limit, or loops on one
sentence. Under this constraint it can only write one paragraph of two to five plain
sentences of four words or more in the first person: it begins with "I", has no line
breaks, no digits and no markup, and ends by itself well within ``num_predict``. Loops are left to the
repetition penalty and the quality gate.

The same language comes in two forms: ``gbnf`` for the embedded model, and a JSON
schema (``{"summary": "..."}``) for Ollama's ``format``; ``unwrap_summary`` takes the
text out of such a reply.
"""

from __future__ import annotations

import json
from typing import Any, Final

from engine.memory.constraint import Constraint

SENTENCES_MAX: Final = 5
WORDS_PER_SENTENCE: Final = 20

_LETTERS = "A-Za-zÀ-ÖØ-öø-ɏͰ-ϿЀ-ӿ"
_BARE = f"[{_LETTERS}][{_LETTERS}'’]{{0,15}}"
_MIDDLE = WORDS_PER_SENTENCE - 3
"""Words between a sentence's first and last (which carries no comma): at least two, so
that two sentences make the quality gate's eight words (``summary_quality.MIN_WORDS``)."""

_GBNF = "\n".join(
    [
        f'root ::= "I" words end ( " " sentence ){{1,{SENTENCES_MAX - 1}}}',
        "sentence ::= word words end",
        f'words ::= ( " " word ){{2,{_MIDDLE}}} " " bare',
        "word ::= bare [,;]?",
        f"bare ::= [{_LETTERS}] [{_LETTERS}'’]{{0,15}}",
        "end ::= [.!]",
    ]
)
_REGEX_WORD = f"{_BARE}[,;]?"
_REGEX_WORDS = f"( {_REGEX_WORD}){{2,{_MIDDLE}}} {_BARE}"
_REGEX = f"I{_REGEX_WORDS}[.!]( {_REGEX_WORD}{_REGEX_WORDS}[.!]){{1,{SENTENCES_MAX - 1}}}"

SUMMARY_CONSTRAINT: Final = Constraint(
    gbnf=_GBNF + "\n",
    json_schema={
        "type": "object",
        "properties": {"summary": {"type": "string", "pattern": f"^{_REGEX}$"}},
        "required": ["summary"],
    },
)


def summary_constraint() -> Constraint:
    return SUMMARY_CONSTRAINT


def unwrap_summary(reply: str) -> str:
    """The ``summary`` string of a JSON reply (what a model writes under the schema);
    any other reply as it is."""
    text = reply.strip()
    if not text.startswith("{"):
        return reply
    try:
        data: Any = json.loads(text)
    except ValueError:
        return reply
    summary = data.get("summary") if isinstance(data, dict) else None
    return summary if isinstance(summary, str) else reply
