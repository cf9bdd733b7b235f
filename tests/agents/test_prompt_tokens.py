"""The turn prompt fitted in tokens (issue 42, item 6): a 100 KB room description and
memories in Chinese fit ``num_ctx`` less ``num_predict`` as the embedded model's
tokenizer counts them, whether the prompt was fitted by that tokenizer (the embedded
model) or by the estimate (a server); the description is cut to its share instead of
the memories going; what was cut or dropped is said."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.agents.prompt import BASIC_COMMANDS, PromptParts, fit_prompt, memory_lines
from engine.agents.prompt_fit import PART_SHARE
from engine.memory.tokens import ESTIMATE, TokenCounter, estimate_tokens, prompt_room


@pytest.fixture(scope="module")
def smollm2() -> TokenCounter:
    pytest.importorskip("llama_cpp")
    from engine.llm.local import embedded_tokens

    tokens = embedded_tokens()
    if tokens is None:
        pytest.skip("the embedded model is not installed")
    return tokens


HALL = "Copper lanterns hang from the beam; the floor is cold stone and always damp. "
ROOM = 8192 - 64  # num_ctx less num_predict, as the actor's defaults
SAID = "我在花园里散步，和艾达说话，告诉她榅桲还没有成熟。天气很冷，风从北方吹来。"


def parts(**changes: object) -> PromptParts:
    chinese = [f"艾达说：“{SAID * 3}” (第{n}次)" for n in range(120)]
    base = PromptParts(
        name="Bo",
        profile="一个安静的铁匠。A quiet smith.",
        room_name="The Copper Hall",
        room_description=HALL * 1_300,  # 100 KB
        exits=["north", "stair"],
        also_here=["Ada"],
        memories=chinese,
        recent_summary=SAID * 8,
        longterm_summary=SAID * 12,
        notes=[("花园", SAID * 4)],
        knowledge=["## Prior Knowledge Summary", f"- {SAID * 2}"],
        handbook="A quiet smith.\n1. 铁砧在院子里。",
        examples=["look", "say 你好"],
    )
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize("fitted_by", ["tokenizer", "estimate"])
def test_a_huge_room_and_chinese_memories_fit_the_embedded_models_context(
    smollm2: TokenCounter, fitted_by: str
) -> None:
    counter = smollm2 if fitted_by == "tokenizer" else ESTIMATE
    budget = ROOM - 4
    fitted = fit_prompt(parts(), budget, counter)
    assert smollm2.count(fitted.text) <= budget
    assert counter.count(fitted.text) <= budget
    assert estimate_tokens(HALL * 1_300) > 3 * ROOM  # it was far over, whole
    # the description is cut to its share, not kept whole while the memories go
    assert "room description" in fitted.cut
    situation = fitted.text.split("\n")[-3]
    assert situation.startswith("You are Bo in The Copper Hall. Copper lanterns hang")
    assert counter.count(situation) <= budget * PART_SHARE + 12
    kept = [line for line in fitted.text.split("\n") if line.startswith("艾达说")]
    assert kept == memory_lines(parts().memories)[-len(kept) :]
    assert len(kept) >= 3
    assert fitted.hidden == 120 - len(kept)
    # the frame is whole: who, the commands, where, the cue
    assert fitted.text.startswith(f"You are Bo. 一个安静的铁匠。A quiet smith.\n{BASIC_COMMANDS}\n")
    assert fitted.text.endswith("\nExits: north, stair   Also here: Ada\n~Bo>")


def test_the_estimate_leaves_room_the_tokenizer_would_have_used(smollm2: TokenCounter) -> None:
    """Fitted by the estimate, a prompt keeps fewer memories than fitted by the tokenizer
    (the estimate is conservative) but not absurdly fewer."""
    by_tokenizer = fit_prompt(parts(), ROOM, smollm2)
    by_estimate = fit_prompt(parts(), ROOM, ESTIMATE)
    assert by_estimate.hidden >= by_tokenizer.hidden
    assert smollm2.count(by_estimate.text) >= ROOM / 3


def test_a_prompt_that_fits_is_not_touched(smollm2: TokenCounter) -> None:
    small = parts(room_description="A small hall.", memories=["你好。"], recent_summary="",
                  longterm_summary="", notes=[], knowledge=[])  # fmt: skip
    whole = fit_prompt(small)
    for counter in (smollm2, ESTIMATE):
        fitted = fit_prompt(small, ROOM, counter)
        assert fitted == whole
        assert (fitted.hidden, fitted.cut, fitted.dropped) == (0, (), ())


def test_what_was_cut_and_dropped_is_said() -> None:
    budget = 3_000
    fitted = fit_prompt(parts(), budget, ESTIMATE)
    assert ESTIMATE.count(fitted.text) <= budget
    assert "room description" in fitted.cut
    assert fitted.hidden > 0
    assert all(isinstance(what, str) and what for what in fitted.cut + fitted.dropped)


def test_the_room_for_a_turn_is_num_ctx_less_num_predict() -> None:
    assert prompt_room({"num_ctx": 8192, "num_predict": 64}) == ROOM - 4


_ANY = st.text(alphabet=st.characters(codec="utf-8"), max_size=60)
_CJK = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), max_size=300)
_PARTS = st.builds(
    PromptParts,
    name=st.sampled_from(["Bo", "艾达", "Zoë"]),
    profile=_ANY | _CJK,
    room_name=_ANY,
    room_description=_ANY | _CJK | st.just(HALL * 200),
    exits=st.lists(st.sampled_from(["north", "南", "stair"]), max_size=3),
    also_here=st.lists(st.sampled_from(["Ada", "明"]), max_size=2),
    memories=st.lists(_ANY | _CJK, max_size=40),
    recent_summary=_ANY | _CJK,
    longterm_summary=_ANY | _CJK,
    notes=st.lists(st.tuples(_ANY, _ANY | _CJK), max_size=3),
    knowledge=st.lists(_ANY | _CJK, max_size=4),
    handbook=_ANY,
    backlog=st.integers(0, 5),
    examples=st.lists(st.sampled_from(["look", "say 你好"]), max_size=2),
)


@settings(max_examples=60)
@given(_PARTS, st.integers(300, 3_000))
def test_any_prompt_fits_any_budget_that_holds_its_frame(
    smollm2: TokenCounter, parts: PromptParts, budget: int
) -> None:
    frame = fit_prompt(parts, 0, ESTIMATE).text  # the frame alone
    assume(ESTIMATE.count(frame) <= budget)
    for counter in (smollm2, ESTIMATE):
        fitted = fit_prompt(parts, budget, counter)
        assert smollm2.count(fitted.text) <= budget
        assert fitted.text.endswith(f"~{parts.name}>")
