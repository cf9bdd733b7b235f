"""Redaction against the corpus (``secret_corpus``): every secret of every form is gone
from ``redact``'s output, every harmless sentence comes back as it was, a world that
allows fiction keeps what its story tells but no credential, and detect-secrets is
loaded only when a text needs it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from secret_corpus import FICTION, GOOGLE, HARMLESS, JWT, SECRETS, STRIPE_LIVE, Secret

from engine.memory.secrets import REDACTED, redact, redact_value


def test_the_corpus_is_big_enough() -> None:
    assert len(SECRETS) >= 30
    assert len({s.form for s in SECRETS}) >= 10
    assert sum(s.form == "prose" for s in SECRETS) >= 8


@pytest.mark.parametrize("secret", SECRETS, ids=lambda s: f"{s.form}:{s.text[:24]}")
def test_each_secret_of_the_corpus_is_gone(secret: Secret) -> None:
    redacted = redact(secret.text)
    assert secret.secret not in redacted
    assert REDACTED in redacted
    assert redact(redacted) == redacted


@pytest.mark.parametrize("text", HARMLESS)
def test_harmless_sentences_are_left_as_they_are(text: str) -> None:
    assert redact(text) == text


def test_the_issue_s_leaks_are_closed() -> None:
    assert redact("The vault password is hunter2swordfish") == "The vault password is [redacted]"
    assert redact(f"key {GOOGLE}") == "key AIza[redacted]"
    assert redact(f"key {STRIPE_LIVE}") == "key sk_live_[redacted]"
    assert redact(f"token {JWT}") == "token eyJ[redacted]"


def test_all_the_corpus_in_one_text_leaves_nothing() -> None:
    text = "\n".join(s.text for s in SECRETS)
    redacted = redact(text)
    assert [s.text for s in SECRETS if s.secret in redacted] == []


def test_allowed_fiction_keeps_the_story_but_not_a_credential() -> None:
    text = f"{FICTION} The shop's key is {STRIPE_LIVE}; my PIN is 7731; password=hunter2"
    kept = redact(text, allow_fiction=True)
    assert "The code to the safe is 4512." in kept
    assert "my PIN is 7731" in kept
    assert STRIPE_LIVE not in kept
    assert "password=[redacted]" in kept
    assert "4512" not in redact(text)  # off by default
    assert redact_value({"content": FICTION}, allow_fiction=True) == {"content": FICTION}
    assert redact_value({"password": "4512"}, allow_fiction=True) == {"password": REDACTED}


@pytest.mark.parametrize("secret", [s for s in SECRETS if s.form != "prose"], ids=lambda s: s.form)
def test_allowed_fiction_still_takes_every_credential_shape(secret: Secret) -> None:
    assert secret.secret not in redact(secret.text, allow_fiction=True)


def test_importing_redaction_does_not_load_detect_secrets() -> None:
    code = (
        "import sys\n"
        "from engine.memory.secrets import redact\n"
        "assert redact('Bo walked to the mill.') == 'Bo walked to the mill.'\n"
        "assert 'detect_secrets' not in sys.modules and 'requests' not in sys.modules\n"
        "assert redact('k sk_live_' + 'a1B2' * 6) == 'k sk_live_[redacted]'\n"
        "redact('the bot logs in with Mabcdefghijklmnopqrstuvwx.abcdef.' + 'a' * 27)\n"
        "assert 'detect_secrets' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- properties ------------------------------------------------------------------------

PIECES = st.sampled_from(
    [s.text for s in SECRETS] + HARMLESS + [FICTION, " ", "\n", ", ", ". ", "is ", ": "]
)
TEXTS = st.lists(PIECES, max_size=8).map("".join)


@given(TEXTS, st.booleans())
def test_redact_is_idempotent_on_the_corpus(text: str, fiction: bool) -> None:
    once = redact(text, allow_fiction=fiction)
    assert redact(once, allow_fiction=fiction) == once


@given(st.lists(st.sampled_from(HARMLESS), min_size=1, max_size=6), st.sampled_from([" ", "\n"]))
def test_harmless_text_in_any_order_is_left_as_it_is(sentences: list[str], glue: str) -> None:
    text = glue.join(sentences)
    assert redact(text) == text


@given(st.lists(st.sampled_from(HARMLESS), max_size=4), st.sampled_from(SECRETS))
def test_a_secret_among_harmless_sentences_never_survives(
    sentences: list[str], secret: Secret
) -> None:
    text = "\n".join([*sentences, secret.text, *reversed(sentences)])
    redacted = redact(text)
    assert secret.secret not in redacted
    assert all(sentence in redacted for sentence in sentences)


def test_a_value_set_on_one_line_is_redacted_whatever_the_next_line_says() -> None:
    """Found by the test above: the noun's qualifier ran across the line end ("to
    Mellon42 yesterday / The passage *to* the") and took "the" for the value."""
    text = "I set my password to Mellon42 yesterday\nThe passage to the cellar is dark."
    assert (
        redact(text)
        == "I set my password to [redacted] yesterday\nThe passage to the cellar is dark."
    )
