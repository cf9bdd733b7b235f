"""Asking (pure): the configurations show memory as they say, the question ends the
prompt with lettered options, the constraint allows only a letter, and a reply is read
back as an option or as nothing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.agents.prompt import PromptParts, render_prompt
from engine.lab.probe.asking import (
    CONFIGS,
    DONT_KNOW,
    answer_constraint,
    configured,
    question_prompt,
    read_answer,
)

PARTS = PromptParts(
    name="Ada", profile="A gardener.", room_name="The Hall", room_description="Long.",
    exits=["north"], also_here=["Bo"], memories=["m5", "m6", "m7", "m8"],
    recent_summary="Recent things.", longterm_summary="Old things.",
    knowledge=["## Prior Knowledge Summary", "- wells are deep"], handbook="Be kind.",
    examples=["look"],
)  # fmt: skip
JOURNAL = [f"m{n}" for n in range(9)]
OPTIONS = ("The Hall", "The Yard", "The Tower", "The Cellar", DONT_KNOW)


def _shown(config: str) -> str:
    return render_prompt(configured(PARTS, config, immediate=2, journal=JOURNAL))


def test_each_configuration_shows_memory_its_way() -> None:
    full, waterfall, gapped = _shown("full"), _shown("waterfall"), _shown("gapped")
    window, none = _shown("window"), _shown("none")
    assert "wells are deep" in full
    assert "Be kind." in full
    for shown in (full, waterfall, gapped, window, none):  # a turn's examples: no memory
        assert "~Ada> look" not in shown
    assert "~Ada> look" in render_prompt(PARTS)
    assert "wells are deep" not in waterfall
    assert "Be kind." not in waterfall
    assert "Old things." in waterfall
    assert "m5" in waterfall
    assert "m5" not in gapped  # the gap: summarized nowhere, not shown
    assert "m7" in gapped
    assert "Old things." in gapped
    assert "m0" in window
    assert "Old things." not in window
    for text in ("m8", "Old things.", "Recent things."):
        assert text not in none
    assert "The Hall" in none
    with pytest.raises(ValueError, match="no configuration called"):
        configured(PARTS, "bogus", immediate=2, journal=JOURNAL)
    assert CONFIGS[:5] == ("full", "waterfall", "gapped", "window", "none")
    assert set(CONFIGS[5:]) == {"full+query", "evidence"}


def test_the_question_ends_the_prompt_with_lettered_options() -> None:
    prompt = question_prompt(render_prompt(PARTS), "Ada", "Where\\nwere you?", OPTIONS)
    tail = prompt.splitlines()[-7:]
    assert tail[0] == "Question for Ada: Where\\nwere you?"
    assert tail[1:6] == ["A) The Hall", "B) The Yard", "C) The Tower", "D) The Cellar",
                         "E) I don't know"]  # fmt: skip
    assert tail[6] == "Ada's answer (one letter):"
    assert "~Ada>" not in prompt.splitlines()[-8]


def test_the_constraint_allows_one_letter() -> None:
    constraint = answer_constraint(OPTIONS)
    assert constraint.gbnf == 'root ::= "A" | "B" | "C" | "D" | "E"'
    schema = constraint.json_schema
    assert schema["properties"]["answer"]["enum"] == ["A", "B", "C", "D", "E"]
    assert schema["required"] == ["answer"]


@pytest.mark.parametrize(
    ("reply", "chosen"),
    [('{"answer": "B"}', "The Yard"), ("C", "The Tower"), ("D) The Cellar", "The Cellar"),
     ("the yard", "The Yard"), ("E", DONT_KNOW), ("", None), ("Z", None),
     ("I think so", None), ('{"answer": 3}', None), ("B)", "The Yard"), ("B.", "The Yard"),
     ("(B)", "The Yard"), (" c\n", "The Tower"), ('{"answer": " the tower "}', "The Tower"),
     ('{"answer": "b"}', "The Yard"), ('{"answer": "F"}', None), ("i don't know", DONT_KNOW)],
)  # fmt: skip
def test_a_reply_is_read_as_an_option_or_nothing(reply: str, chosen: str | None) -> None:
    assert read_answer(reply, OPTIONS) == chosen


@pytest.mark.parametrize(
    "reply",
    ["A good guess would be C", "C is my guess", "The answer is B.", "B) The Tower", "B, C",
     "(B", "B)) ", "The Yard, I think", '{"answer": "B", "x": 1} more', '{"answer": "B or C"}',
     '{"answer": "A good guess would be C"}', '{"choice": "B"}', '"B"', "AB", "B) The Yard!"],
)  # fmt: skip
def test_anything_else_is_unparsed(reply: str) -> None:
    """Issue 43 (7): a letter read out of free text was an answer ("A good guess would be
    C" read as option A); only the JSON reply or an exact option is."""
    assert read_answer(reply, OPTIONS) is None


def _exact_forms() -> set[str]:
    forms = {o.casefold() for o in OPTIONS}
    for letter, option in zip("abcde", OPTIONS, strict=True):
        forms |= {letter, f"{letter})", f"{letter}.", f"({letter})", f"{letter}) {option}".casefold(),
                  f"{letter}. {option}".casefold()}  # fmt: skip
    return forms


@given(st.text(max_size=40))
def test_any_reply_is_an_option_or_nothing(reply: str) -> None:
    chosen = read_answer(reply, OPTIONS)
    assert chosen in (*OPTIONS, None)
    if chosen is not None and not reply.strip().startswith("{"):
        assert reply.strip().casefold() in _exact_forms()
    assert read_answer(json.dumps({"answer": reply}), OPTIONS) == read_answer(reply, OPTIONS) or (
        reply.strip().startswith("{")
    )


@given(st.sampled_from(sorted(_exact_forms())), st.sampled_from(["", " ", "\n"]))
def test_every_exact_form_names_its_option(form: str, blank: str) -> None:
    chosen = read_answer(blank + form.upper() + blank, OPTIONS)
    assert chosen is not None
    assert read_answer(json.dumps({"answer": form}), OPTIONS) == chosen
