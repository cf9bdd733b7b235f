"""The speech check on an independent corpus (tests/agents/speech_corpus.json).

The corpus (388 good lines in 40 kinds: many languages and scripts, names, codes, slang,
emoji, chat signs; 108 noise lines in 16 kinds: prompt fragments, template tokens,
gibberish) was written by someone who had not read the speech check. A third of each
kind is held out: the check was tuned on the rest only, then measured once on the
held-out lines (the figures in ``engine.agents.speech_check``'s docstring):

- a capable backend (no ``noise_check``): good lines rejected at most 2% (measured: 0
  of 128; training part 0 of 260);
- the embedded model (``noise_check``): noise lines rejected at least ``NOISE_FLOOR``
  (measured: 27 of 32, 84.4%; training part 59 of 76, 77.6%). It still rejects 73 of
  the 128 good lines (57.0%): its dictionary is English.

Each line is checked as the thinker checks it, against the instructions of a prompt
with every section (``PROMPT``) and no earlier speech.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.agents.prompt import PromptParts, render_prompt
from engine.agents.speech_check import Instructions, check_speech, instruction_lines

CORPUS = json.loads((Path(__file__).parent / "speech_corpus.json").read_text(encoding="utf-8"))
GOOD_CEILING = 0.02
"""The most held-out good lines a capable backend's check may reject."""
NOISE_FLOOR = 0.8
"""The least held-out noise lines the embedded model's check rejects (measured 84.4%,
27 of 32)."""

PROMPT = render_prompt(
    PromptParts(
        name="Moss",
        profile="A gardener who worries about the apple trees.",
        room_name="The Garden",
        room_description="A walled garden of herbs and apple trees, with a bench under the wall.",
        exits=["north", "lobby"],
        also_here=["Eliza", "Traveler"],
        memories=['Eliza says, "Hello Moss, what are you reading?"', "Traveler waves."],
        recent_summary="I talked with Eliza about the roses.",
        longterm_summary="I came to the garden in spring.",
        notes=[("Eliza", "Likes tea; reads in the library.")],
        knowledge=[
            "## Prior Knowledge Summary",
            "### Proven Facts (Verified)",
            "- Do not pick the roses before noon.",
            "## Related past experiences",
            "- I showed Traveler the rose wall.",
        ],
        examples=["say Hello, Eliza. How are you today?", "examine a stone bench", "go north"],
        handbook="People I know: Eliza.\n1. Water the herbs at dawn.",
    )
)
RULES = Instructions.of(instruction_lines(PROMPT))


def entries(group: str, *, heldout: bool) -> list[dict[str, Any]]:
    """The corpus's ``good`` or ``noise`` lines, held out or not."""
    return [entry for entry in CORPUS[group] if entry["heldout"] is heldout]


def rejected(group: str, *, heldout: bool, noise_check: bool) -> list[dict[str, Any]]:
    """The lines of ``group`` the check rejects, with its reason under ``"why"``."""
    out = []
    for entry in entries(group, heldout=heldout):
        verdict = check_speech(entry["text"], RULES, noise_check=noise_check)
        if not verdict.passes:
            out.append({**entry, "why": verdict.why})
    return out


def rate(group: str, *, heldout: bool, noise_check: bool) -> float:
    failed = rejected(group, heldout=heldout, noise_check=noise_check)
    return len(failed) / len(entries(group, heldout=heldout))


def test_the_corpus_is_the_one_measured() -> None:
    assert (len(CORPUS["good"]), len(CORPUS["noise"])) == (388, 108)
    assert (len(entries("good", heldout=True)), len(entries("noise", heldout=True))) == (128, 32)


def test_a_capable_backend_rejects_at_most_2_percent_of_held_out_good_lines() -> None:
    failed = rejected("good", heldout=True, noise_check=False)
    share = len(failed) / len(entries("good", heldout=True))
    assert share <= GOOD_CEILING, [(e["id"], e["why"], e["text"]) for e in failed]


def test_the_embedded_model_still_rejects_most_held_out_noise() -> None:
    share = rate("noise", heldout=True, noise_check=True)
    print(f"held-out noise rejected with noise_check: {share:.1%}")
    assert share >= NOISE_FLOOR


@pytest.mark.parametrize(
    "text",
    [
        "Guten Morgen, wie geht es dir heute?",
        "Bonjour, comment allez-vous ?",
        "¿Dónde está la biblioteca?",
        "我们去花园吧",
        "lol ok brb",
        "Meet me at B-12 near Zarathustra's tower.",
        "hello tok-00001",
    ],
)
def test_speech_in_any_language_with_codes_passes_for_a_capable_backend(text: str) -> None:
    assert check_speech(text, RULES).passes
    assert check_speech(text, RULES, noise_check=False).passes


@pytest.mark.parametrize(
    "text", ["*sigh* fine.", "I <3 this garden", "room #4", "go left -> the well", "~maybe~", "x_x"]
)
def test_chat_signs_are_not_markup(text: str) -> None:
    assert check_speech(text, RULES).passes
