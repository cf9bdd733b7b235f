"""Reading the JSON a model wrote, however it wrapped it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.memory.json_reply import ReplyUnparseable, parse_json_reply


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"type": "fact"}]', [{"type": "fact"}]),
        ('{"operations": []}', {"operations": []}),
        ("```json\n[1, 2]\n```", [1, 2]),
        ("```\n[1, 2]\n```", [1, 2]),
        ('```JSON\n{"a": 1}```', {"a": 1}),
        ('Here are the memories:\n[{"a": 1}]', [{"a": 1}]),
        ('[{"a": 1}]\nI hope this helps! [1]', [{"a": 1}]),
        ("[1, 2, ]", [1, 2]),
        ('{"a": [1, {"b": 2,},],}', {"a": [1, {"b": 2}]}),
        ('["a,]", "b,}",]', ["a,]", "b,}"]),  # commas inside strings stay
        ('["say \\"hi\\", ]"]', ['say "hi", ]']),
        ("Notes [see below]:\n[3]", [3]),
        ("I wrote [this] and {that}:\n```json\n[4]\n```", [4]),
        ('["a line\nbroken"]', ["a line\nbroken"]),  # a raw line break in a string
        ("Sure!\n```json\n[5]\n```\n```python\nprint(1)\n```", [5]),
    ],
)
def test_what_models_wrap_around_json_is_read_through(text: str, expected: Any) -> None:
    assert parse_json_reply(text) == expected


def test_a_fence_after_the_json_does_not_replace_it() -> None:
    assert parse_json_reply("[1]\nAlso:\n```\n[2]\n```") == [1]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no JSON"),
        ("I cannot help with that.", "no JSON"),
        ('[{"type": "fact", "content": "cut sho', "never closes"),
        ('```json\n{"a": \n```', "never closes"),
        ("[not json at all]", "invalid JSON"),
        ("{'single': 'quotes'}", "invalid JSON"),
    ],
)
def test_what_holds_no_json_raises_with_a_one_line_reason(text: str, why: str) -> None:
    with pytest.raises(ReplyUnparseable) as caught:
        parse_json_reply(text)
    assert why in str(caught.value)
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_reply_of_brackets_stays_cheap() -> None:
    with pytest.raises(ReplyUnparseable):
        parse_json_reply("[x] " * 10_000)


# --- the property ----------------------------------------------------------------------

_LEAF = st.one_of(st.text(max_size=20), st.integers(-(10**6), 10**6))
_VALUES = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_TOP = st.one_of(
    st.lists(_VALUES, max_size=5), st.dictionaries(st.text(max_size=8), _VALUES, max_size=5)
)
_PROSE_BEFORE = st.text(
    st.characters(blacklist_characters="[]{}`", blacklist_categories=["Cs"]), max_size=40
)


def _dump(value: Any, data: st.DataObject) -> str:
    """``value`` as JSON with trailing commas here and there, and varied spacing."""
    ascii_only = data.draw(st.booleans())
    gap = data.draw(st.sampled_from(["", " ", "\n  "]))
    if isinstance(value, list):
        parts = [_dump(item, data) for item in value]
    elif isinstance(value, dict):
        parts = [
            f"{json.dumps(k, ensure_ascii=ascii_only)}:{gap}{_dump(v, data)}"
            for k, v in value.items()
        ]
    else:
        return json.dumps(value, ensure_ascii=ascii_only)
    comma: bool = bool(parts) and data.draw(st.booleans())
    trailing = "," + gap if comma else ""
    body = ("," + gap).join(parts) + trailing
    return (
        ("[" if isinstance(value, list) else "{")
        + gap
        + body
        + ("]" if isinstance(value, list) else "}")
    )


@given(_TOP, _PROSE_BEFORE, st.text(max_size=40), st.sampled_from([None, "", "json"]), st.data())
def test_any_json_wrapped_and_with_trailing_commas_parses_back_equal(
    value: Any, before: str, after: str, fence: str | None, data: st.DataObject
) -> None:
    body = _dump(value, data)
    if fence is not None:
        body = f"```{fence}\n{body}\n```"
    text = f"{before}\n{body}\n{after}" if before or after else body
    assert parse_json_reply(text) == value
