"""The summary's constrained language: one first-person paragraph of plain sentences."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.memory.summary_grammar import SUMMARY_CONSTRAINT, unwrap_summary
from engine.memory.summary_quality import MIN_WORDS

PATTERN = SUMMARY_CONSTRAINT.json_schema["properties"]["summary"]["pattern"]


def _ok(text: str) -> bool:
    return re.fullmatch(PATTERN, text) is not None


def test_plain_first_person_sentences_pass() -> None:
    assert _ok("I baked bread in the kitchen. Ash came by, and we talked about books.")


def test_what_a_small_model_writes_instead_does_not() -> None:
    assert not _ok("\nI baked bread.")  # a blank start meets the stop at once
    assert not _ok("You look around. The Kitchen: warm.")  # not first person; markup
    assert not _ok("I baked bread.")  # one sentence is not a summary of a chunk
    assert not _ok("I counted 2111242232 loaves. Then I slept well.")
    assert not _ok("I said hello,. Then we went out.")  # a comma before the stop
    assert not _ok("I went out. " * 6)  # five sentences at most
    assert not _ok("I went out. We slept.")  # under the gate's eight words


def test_a_json_reply_is_unwrapped_and_anything_else_kept() -> None:
    assert unwrap_summary(json.dumps({"summary": "I slept."})) == "I slept."
    assert unwrap_summary("I slept.") == "I slept."
    assert unwrap_summary('{"other": 1}') == '{"other": 1}'
    assert unwrap_summary("{not json") == "{not json"


@settings(max_examples=100)
@given(st.from_regex(re.compile(PATTERN), fullmatch=True))
def test_every_summary_in_the_language_is_short_and_one_paragraph(text: str) -> None:
    assert "\n" not in text
    assert text.startswith("I")
    assert MIN_WORDS <= len(text.split()) <= 5 * 20
