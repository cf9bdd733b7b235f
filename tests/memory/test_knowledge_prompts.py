"""The knowledge pass's prompts, and the constraints on their replies."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.llm.local import local_available, model_file
from engine.llm.local_model import _without_extra_buffers
from engine.memory.json_reply import parse_json_reply
from engine.memory.knowledge import Entry, Stamp
from engine.memory.knowledge_candidates import PROMPT_EXAMPLES
from engine.memory.knowledge_ops import (
    Candidate,
    Capacity,
    capacity,
    parse_candidates,
    parse_operations,
)
from engine.memory.knowledge_prompts import (
    CONSOLIDATION_CONSTRAINT,
    EXTRACTION_CONSTRAINT,
    consolidation_constraint,
    consolidation_prompt,
    extraction_constraint,
    extraction_prompt,
)

THEN = Stamp(sim="2026-01-01T08:00", at="2026-01-01T08:00:00Z")


def entry(n: int, content: str, **fields: Any) -> Entry:
    return Entry(
        id=f"ltm-{n}-xyz", type="fact", content=content, created=THEN, updated=THEN, **fields
    )


def extraction(**given: Any) -> str:
    args: dict[str, Any] = {"notes": [], "summaries": [], "memories": [], "conversations": {}}
    return extraction_prompt("Mara", "2026-01-03T14:20", **(args | given))


# --- the extraction prompt -------------------------------------------------------------


def test_the_extraction_prompt_shows_everything_given_in_its_sections() -> None:
    body = "Librarian; knows the ledger.\n\n" + "The ledger is upstairs. " * 60
    prompt = extraction(
        notes=[("Moss", body), ("The Mill", "Closed since spring.")],
        summaries=["I baked bread and\nsold it.", "I met Ash."],
        memories=["Ash said: the mill is haunted.", "I went east."],
        conversations={"Ash": ["Ash: hello", "Mara: hi"]},
    )
    assert "It is now 2026-01-03 14:20 in the world." in prompt
    assert f"### Moss\n{body.strip()}\n" in prompt  # the whole note, never cut
    assert "### The Mill\nClosed since spring." in prompt
    order = [
        "## Notes written or changed since the last pass",
        "## Working memory since the last pass",
        "- I baked bread and sold it.",
        "- I met Ash.",
        "- Ash said: the mill is haunted.",
        "## Conversations",
        "### with Ash\nAsh: hello\nMara: hi",
    ]
    places = [prompt.index(part) for part in order]
    assert places == sorted(places)
    assert prompt.endswith("\nJSON array:\n")


def test_empty_sections_say_there_is_nothing_of_that_kind() -> None:
    prompt = extraction(conversations={"Ash": ["", "  "]})
    assert "(No notes were written or changed since the last pass.)" in prompt
    assert "(Nothing in working memory since the last pass.)" in prompt
    assert "(No conversations since the last pass.)" in prompt
    assert "## Notes" not in prompt
    assert "## Working memory" not in prompt
    assert "## Conversations" not in prompt
    assert prompt.endswith("\nJSON array:\n")


def test_conversations_keep_the_last_20_lines_each_cut_to_500_characters() -> None:
    lines = [f"Ash: message {n:03d}|" for n in range(30)]
    lines[-1] = "Ash: " + "very long " * 100
    prompt = extraction(conversations={"Ash": lines, "Bo": ["Bo: one line"]})
    assert "message 009|" not in prompt
    assert all(f"message {n:03d}|" in prompt for n in range(10, 29))
    shown = prompt.split("### with Ash\n")[1].split("\n\n")[0].splitlines()
    assert len(shown) == 20
    assert len(shown[-1]) == 500
    assert shown[-1].endswith("…")
    assert "### with Bo\nBo: one line" in prompt


def test_the_instructions_carry_the_seeds_rules() -> None:
    prompt = extraction()
    kinds = ["mistake", "skill", "procedure", "fact", "observation", "preference"]
    places = [prompt.index(f"- {kind}: ") for kind in kinds]
    assert places == sorted(places)  # mistakes first
    for rule in ("FROM the notes", "advice", "lowercase", "trivial", "(2026-01-03)", "@dig"):
        assert rule in prompt
    assert all(f"Example: {text}\n" in prompt for text in PROMPT_EXAMPLES.values())
    assert "It is now day 3 at noon in the world." in extraction_prompt(
        "Mara", "day 3 at noon", [], [], [], {}
    )


_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60).filter(
    str.strip
)


@given(
    st.lists(st.tuples(_TEXT, _TEXT), max_size=4),
    st.lists(_TEXT, max_size=4),
    st.lists(_TEXT, max_size=4),
    st.dictionaries(_TEXT, st.lists(_TEXT, max_size=25), max_size=3),
)
def test_what_goes_in_comes_out(
    notes: list[tuple[str, str]],
    summaries: list[str],
    memories: list[str],
    talk: Mapping[str, list[str]],
) -> None:
    prompt = extraction(notes=notes, summaries=summaries, memories=memories, conversations=talk)

    def one_line(text: str) -> str:
        return " ".join(text.split())

    for title, body in notes:
        assert f"### {one_line(title)}\n{body.strip()}\n" in prompt
    for said in [*summaries, *memories]:
        assert f"- {one_line(said)}\n" in prompt
    for lines in talk.values():
        for line in lines[-20:]:
            assert one_line(line)[:499] in prompt
    assert prompt.endswith("\nJSON array:\n")


# --- the consolidation prompt ----------------------------------------------------------

MOSS = entry(1, "Moss is the librarian.", tags=["moss"], access_count=2)
HALL = entry(2, "The Hall has three exits.")
LEDGER = Candidate(type="fact", content="Moss keeps the ledger.", tags=["moss", "ledger"])


def test_the_consolidation_prompt_shows_capacity_entries_and_candidates() -> None:
    cap = capacity("x" * 6000, 4000)
    prompt = consolidation_prompt("Mara", cap, [(1, MOSS), (2, HALL)], 3, [LEDGER])
    status = prompt.split("## Capacity Status\n")[1]
    assert status.startswith(
        "The bank holds 5 entries, about 1500 tokens: 37.5% of its capacity of 4000 tokens.\n"
        "Tier: SELECTIVE."
    )
    assert "Merge related entries: UPDATE one, DELETE the others." in prompt
    assert "ADD new knowledge freely" not in prompt
    assert "Prefer UPDATE to ADD" not in prompt
    assert (
        "## Existing entries\n"
        "- [1] (fact, 2 accesses) Moss is the librarian. [tags: moss]\n"
        "- [2] (fact, 0 accesses) The Hall has three exits.\n"
        "(3 more entries not shown are kept as they are)\n"
    ) in prompt
    assert (
        "## Candidates\n- [candidate 0] (fact) Moss keeps the ledger. [tags: moss, ledger]\n"
        in prompt
    )
    assert "ltm-" not in prompt  # entries go by number, never by id
    assert prompt.endswith("\nJSON object:\n")


@pytest.mark.parametrize(
    ("cap", "says"),
    [
        (Capacity(tokens=10, percent=None, tier="GENEROUS"), "its capacity is not known"),
        (capacity("x" * 40, 1000), "SKIP only exact repeats"),
        (capacity("x" * 4000, 1000), "Bring the 2 entries down by 10-20%, to about 2."),
    ],
)
def test_each_tier_gets_its_own_instructions(cap: Capacity, says: str) -> None:
    prompt = consolidation_prompt("Mara", cap, [(1, MOSS), (2, HALL)], 0, [LEDGER])
    assert says in prompt
    assert f"Tier: {cap.tier}." in prompt
    assert "more entries not shown" not in prompt


def test_an_empty_bank_and_no_candidates_are_said_so() -> None:
    prompt = consolidation_prompt("Mara", capacity("[]", 1000), [], 0, [])
    assert "## Existing entries\n(none yet)\n" in prompt
    assert "## Candidates\n(none)\n" in prompt


def test_the_prompts_example_reply_is_a_valid_reply() -> None:
    prompt = consolidation_prompt("Mara", capacity("[]", None), [], 0, [])
    example = next(line for line in prompt.splitlines() if line.startswith('{"operations"'))
    assert re.fullmatch(CONSOLIDATION_REGEX, example)
    value = parse_json_reply(example)
    assert schema_valid(value, CONSOLIDATION_CONSTRAINT.json_schema)
    assert {op["id"] for op in value["operations"] if "id" in op} == {1, 2, 3}
    parsed = parse_operations(value, {1: "ltm-1-a", 2: "ltm-2-b", 3: "ltm-3-c"}, 3)
    assert parsed.ignored == []
    # what a model copies from the example does not write placeholders into the bank
    assert all("<" not in str(op) for op in parsed.operations)


# --- the constraints -------------------------------------------------------------------

_TOKEN = re.compile(
    r'\s*("(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[a-z][a-z0-9-]*|[()|?]|\{\d+,\d+\}|\{\d+\})'
)


def gbnf_regex(gbnf: str) -> str:
    """The language of a GBNF without recursion, as a Python regex. Only bounded
    repetition (``?``, ``{m,n}``) is understood: a ``*`` or ``+`` fails to read."""
    rules = dict(line.split(" ::= ", 1) for line in gbnf.strip().splitlines())
    done: dict[str, str] = {}

    def tokens(body: str) -> list[str]:
        found, at = [], 0
        while body[at:].strip():
            match = _TOKEN.match(body, at)
            assert match, f"cannot read {body[at:]!r}"
            found.append(match.group(1))
            at = match.end()
        return found

    def rule(name: str) -> str:
        if name not in done:
            done[name] = "(?:" + alternatives(tokens(rules[name]), [0]) + ")"
        return done[name]

    def alternatives(items: list[str], at: list[int]) -> str:
        choices = [sequence(items, at)]
        while at[0] < len(items) and items[at[0]] == "|":
            at[0] += 1
            choices.append(sequence(items, at))
        return "|".join(choices)

    def sequence(items: list[str], at: list[int]) -> str:
        out = ""
        while at[0] < len(items) and items[at[0]] not in ("|", ")"):
            item = items[at[0]]
            at[0] += 1
            if item == "(":
                atom = "(?:" + alternatives(items, at) + ")"
                assert items[at[0]] == ")"
                at[0] += 1
            elif item.startswith('"'):
                atom = "(?:" + re.escape(json.loads(item)) + ")"
            elif item.startswith("["):
                atom = item
            else:
                atom = rule(item)
            while at[0] < len(items) and (items[at[0]] == "?" or items[at[0]].startswith("{")):
                atom = "(?:" + atom + ")" + items[at[0]]
                at[0] += 1
            out += atom
        return out

    return rule("root")


EXTRACTION_REGEX = gbnf_regex(EXTRACTION_CONSTRAINT.gbnf)
CONSOLIDATION_REGEX = gbnf_regex(CONSOLIDATION_CONSTRAINT.gbnf)
_KNOWN = {"type", "properties", "required", "additionalProperties", "items", "maxItems",
          "minLength", "maxLength", "enum", "minimum", "maximum", "anyOf"}  # fmt: skip


def schema_valid(instance: Any, schema: Mapping[str, Any]) -> bool:
    """JSON Schema validation, for the keywords these schemas use (no others)."""
    assert set(schema) <= _KNOWN, set(schema) - _KNOWN
    if "anyOf" in schema:
        return any(schema_valid(instance, option) for option in schema["anyOf"])
    if "enum" in schema and instance not in schema["enum"]:
        return False
    kind = schema["type"]
    if kind == "object":
        properties = schema["properties"]
        return (
            isinstance(instance, dict)
            and set(schema["required"]) <= set(instance)
            and (schema.get("additionalProperties", True) or set(instance) <= set(properties))
            and all(schema_valid(v, properties[k]) for k, v in instance.items() if k in properties)
        )
    if kind == "array":
        return (
            isinstance(instance, list)
            and len(instance) <= schema.get("maxItems", math.inf)
            and all(schema_valid(item, schema["items"]) for item in instance)
        )
    if kind == "string":
        return isinstance(instance, str) and (
            schema.get("minLength", 0) <= len(instance) <= schema.get("maxLength", math.inf)
        )
    assert kind == "integer"
    return (
        isinstance(instance, int)
        and not isinstance(instance, bool)
        and schema.get("minimum", -math.inf) <= instance <= schema.get("maximum", math.inf)
    )


def _item(n: int = 0, content: str = "Moss keeps the ledger.", **more: Any) -> dict[str, Any]:
    return {"type": "fact", "content": content, "tags": ["moss", f"t{n}"]} | more


GOOD_CANDIDATES: list[Any] = [
    [],
    [_item()],
    [{"type": "mistake", "content": "Ne va pas à l'ouest — «pas de sortie».", "tags": []}],
    [_item(n, "x" * 400, tags=["y" * 30] * 6) for n in range(12)],
    [_item(content='She said "go \\\\ up" / then left.')],
]
BAD_CANDIDATES: list[Any] = [
    [_item(n) for n in range(13)],
    [_item(content="x" * 401)],
    [_item(content="")],
    [_item(tags=["a"] * 7)],
    [_item(tags=["y" * 31])],
    [_item(type="rumour")],
    [_item(extra=1)],
    [{"type": "fact", "content": "No tags."}],
    {"memories": [_item()]},
]
GOOD_OPERATIONS: list[Any] = [
    {"operations": []},
    {
        "operations": [
            {"action": "KEEP", "id": 1},
            {"action": "UPDATE", "id": 9999, "content": "New text.", "tags": ["moss"]},
            {"action": "DELETE", "id": 12},
            {"action": "ADD", "candidate": 0},
            {"action": "ADD", "candidate": 11, "type": "skill", "content": "x", "tags": []},
            {"action": "SKIP", "candidate": 99},
        ]
    },
    {"operations": [{"action": "KEEP", "id": n} for n in range(1, 41)]},
]
BAD_OPERATIONS: list[Any] = [
    {"operations": [{"action": "KEEP", "id": n} for n in range(1, 42)]},
    {"operations": [{"action": "KEEP", "id": 0}]},
    {"operations": [{"action": "KEEP", "id": 10_000}]},
    {"operations": [{"action": "SKIP", "candidate": 100}]},
    {"operations": [{"action": "KEEP", "id": 1, "content": "x"}]},
    {"operations": [{"action": "UPDATE", "id": 1, "content": "x"}]},
    {"operations": [{"action": "ADD", "candidate": 0, "type": "fact"}]},
    {"operations": [{"action": "ADD", "type": "fact", "content": "x", "tags": []}]},
    {"operations": [{"action": "MERGE", "id": 1}]},
    {"operations": [{"action": "keep", "id": 1}]},
    [{"action": "KEEP", "id": 1}],
]


@pytest.mark.parametrize("value", GOOD_CANDIDATES)
def test_good_candidates_meet_the_schema_and_the_grammar(value: Any) -> None:
    _accepted(value, EXTRACTION_CONSTRAINT.json_schema, EXTRACTION_REGEX)
    assert len(parse_candidates(value)) == len(value)


@pytest.mark.parametrize("value", GOOD_OPERATIONS)
def test_good_operations_meet_the_schema_and_the_grammar(value: Any) -> None:
    _accepted(value, CONSOLIDATION_CONSTRAINT.json_schema, CONSOLIDATION_REGEX)
    parsed = parse_operations(value, {n: f"ltm-{n}-a" for n in range(1, 10_000)}, 100)
    assert parsed.ignored == []


def _accepted(value: Any, schema: Mapping[str, Any], regex: str) -> None:
    assert schema_valid(value, schema)
    for text in (
        json.dumps(value, ensure_ascii=False),
        json.dumps(value, ensure_ascii=False, indent=2),
    ):
        assert re.fullmatch(regex, text), text[:200]
        assert parse_json_reply(text) == value


@pytest.mark.parametrize(
    ("value", "schema", "regex"),
    [(v, EXTRACTION_CONSTRAINT.json_schema, EXTRACTION_REGEX) for v in BAD_CANDIDATES]
    + [(v, CONSOLIDATION_CONSTRAINT.json_schema, CONSOLIDATION_REGEX) for v in BAD_OPERATIONS],
)
def test_bad_replies_meet_neither(value: Any, schema: Mapping[str, Any], regex: str) -> None:
    assert not schema_valid(value, schema)
    assert not re.fullmatch(regex, json.dumps(value, ensure_ascii=False))


def test_the_grammar_keeps_line_breaks_and_control_characters_out_of_strings() -> None:
    for content in ("two\nlines", "a\ttab", "bell\x07", " leading space"):
        text = json.dumps([_item(content=content)], ensure_ascii=False)
        raw = text.replace("\\n", "\n").replace("\\t", "\t").replace("\\u0007", "\x07")
        assert not re.fullmatch(EXTRACTION_REGEX, raw), raw
        assert not re.fullmatch(EXTRACTION_REGEX, text), text  # escaped, too
    assert not re.fullmatch(EXTRACTION_REGEX, "[" + "\n" * 20 + "]")  # whitespace is bounded


def test_the_constraints_are_what_their_functions_return() -> None:
    assert extraction_constraint() is EXTRACTION_CONSTRAINT
    assert consolidation_constraint() is CONSOLIDATION_CONSTRAINT
    assert EXTRACTION_CONSTRAINT.gbnf.endswith("\n")


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.from_regex(EXTRACTION_REGEX, fullmatch=True))
def test_every_extraction_the_grammar_allows_parses_and_meets_the_schema(text: str) -> None:
    value = parse_json_reply(text)
    assert schema_valid(value, EXTRACTION_CONSTRAINT.json_schema)
    assert len(parse_candidates(value)) <= len(value)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.from_regex(CONSOLIDATION_REGEX, fullmatch=True))
def test_every_consolidation_the_grammar_allows_parses_and_meets_the_schema(text: str) -> None:
    value = parse_json_reply(text)
    assert schema_valid(value, CONSOLIDATION_CONSTRAINT.json_schema)
    parsed = parse_operations(value, {n: f"ltm-{n}-a" for n in range(1, 10_000)}, 100)
    assert len(parsed.operations) + len(parsed.ignored) == len(value["operations"])


# --- with llama.cpp (the `local` extra) -------------------------------------------------


@pytest.mark.realmodel
@pytest.mark.skipif(not local_available(), reason="the embedded model needs the 'local' extra")
def test_llama_cpp_compiles_both_grammars_and_the_schemas_grammars() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    vocab_only = llama_cpp.Llama(str(model_file()), vocab_only=True, verbose=False)
    grammars = [EXTRACTION_CONSTRAINT.gbnf, CONSOLIDATION_CONSTRAINT.gbnf] + [
        json_schema_to_gbnf(json.dumps(c.json_schema))
        for c in (EXTRACTION_CONSTRAINT, CONSOLIDATION_CONSTRAINT)
    ]
    for grammar in [*grammars, 'root ::= "unclosed']:
        sampler = llama_cpp.llama_sampler_init_grammar(
            vocab_only._model.vocab, grammar.encode(), b"root"
        )
        assert bool(sampler) == (grammar != 'root ::= "unclosed'), grammar[:80]
        if sampler:
            llama_cpp.llama_sampler_free(sampler)


@pytest.mark.realmodel
@pytest.mark.skipif(not local_available(), reason="the embedded model needs the 'local' extra")
@pytest.mark.timeout(180)
def test_the_embedded_model_under_the_grammar_ends_and_writes_a_parseable_reply() -> None:
    """One extraction, greedy (some 130 tokens, ~20 s on two cores): the grammar ends it
    with no token limit. A consolidation decodes the same way but takes longer; its
    grammar is checked above and by the property tests."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar

    with _without_extra_buffers(llama_cpp.llama_cpp):  # as the product loads it: no AMX
        model = llama_cpp.Llama(str(model_file()), n_ctx=2048, verbose=False, seed=7)
    prompt = extraction(notes=[("Moss", "Librarian; keeps the ledger upstairs.")])
    grammar = LlamaGrammar.from_string(EXTRACTION_CONSTRAINT.gbnf, verbose=False)
    out = model.create_completion(prompt, grammar=grammar, max_tokens=-1, temperature=0.0)
    choice = out["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert re.fullmatch(EXTRACTION_REGEX, choice["text"])
    value = parse_json_reply(choice["text"])
    assert schema_valid(value, EXTRACTION_CONSTRAINT.json_schema)
