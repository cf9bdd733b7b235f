"""Redaction (pure): each kind of secret goes, enough context stays to read, prose and
near misses stay as they are, a second pass changes nothing, and a secret put anywhere
in random text never survives."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from engine.memory.secrets import REDACTED, TRIGGERS, is_secret_key, redact, redact_value

PEM_BODY = "MIIEowIBAAKCAQEAx3+k/abc\nQWERTYuiop1234567890==\n"

CASES = [
    # OpenAI-style keys
    ("key sk-abcdefghijklmnop1234 here", "key sk-[redacted] here"),
    ("sk-proj-Ab3_cD-efGHijklmnOPqrsTUV_wxyz0123", "sk-[redacted]"),
    ("(sk-ant-api03-AbCdEfGhIjKlMnOp9)", "(sk-[redacted])"),
    # GitHub and Slack tokens
    ("ghp_" + "A1b2" * 9, "ghp_[redacted]"),
    ("gho_" + "x" * 36 + ".", "gho_[redacted]."),
    ("ghs_" + "Z9" * 18, "ghs_[redacted]"),
    ("github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz", "github_pat_[redacted]"),
    ("slack xoxb-1234567890-abcdefghij", "slack xoxb-[redacted]"),
    ("xoxp-12345-67890-abcdef", "xoxp-[redacted]"),
    # assignments, quoted or not
    ("password=hunter2", "password=[redacted]"),
    ("passwd: hunter2 and more", "passwd: [redacted] and more"),
    ("pwd=abc", "pwd=[redacted]"),
    ("secret=xyz", "secret=[redacted]"),
    ("api_key = 'a b c'", "api_key = '[redacted]'"),
    ('token: "open sesame"', 'token: "[redacted]"'),
    ("token: abc123", "token: [redacted]"),
    ("DB_PASSWORD=s3cr3t;next", "DB_PASSWORD=[redacted];next"),
    ('{"password": "x \\" y", "user": "bo"}', '{"password": "[redacted]", "user": "bo"}'),
    ('password="never closed', 'password="[redacted]'),
    ("X-Api-Key: abcdef", "X-Api-Key: [redacted]"),
    ("client_secret=abc&x=1", "client_secret=[redacted]&x=1"),
    ("spring.datasource.password: pa55", "spring.datasource.password: [redacted]"),
    # credentials in a URL
    ("postgres://user:pa55@db.local/mill", "postgres://user:[redacted]@db.local/mill"),
    ("redis://:p@ss@cache:6379/0", "redis://:[redacted]@cache:6379/0"),
    ("see https://bo:x@example.com now", "see https://bo:[redacted]@example.com now"),
    # private keys, to the END line or to the end of the text
    (
        f"a\n-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}-----END RSA PRIVATE KEY-----\nb",
        "a\n-----BEGIN RSA PRIVATE KEY-----\n[redacted]\n-----END RSA PRIVATE KEY-----\nb",
    ),
    (
        f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}and so on",
        "-----BEGIN PRIVATE KEY-----\n[redacted]\n",
    ),
    (
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n{PEM_BODY}-----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n[redacted]\n-----END PGP PRIVATE KEY BLOCK-----",
    ),
    # AWS
    ("id AKIAIOSFODNN7EXAMPLE.", "id AKIA[redacted]."),
    ("ASIAABCDEFGHIJKLMNOP", "ASIA[redacted]"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [redacted]",
    ),
    # bearer tokens and Authorization headers
    ("Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc", "Bearer [redacted]"),
    ("bearer abcdefghijklmnopqrstu", "bearer [redacted]"),
    ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [redacted]"),
    ("authorization=opaque thing\nnext", "authorization=[redacted]\nnext"),
    ('"Authorization": "Bearer abc"', '"Authorization": "Bearer [redacted]"'),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_each_kind_of_secret_is_redacted_with_its_context_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


PROSE = [
    "I keep the password in my heart",
    "The password is a song only Bo knows.",
    "the secret: she loves Bo",
    "Bo's token: a brass coin",
    "skill, task-ready, sk, sk-8, risk-assessment-procedure-for-2-wells",
    "the bearer of bad news",
    "Bearer of the ring",
    "https://example.com:8080/path and mailto:bo@example.com",
    "max_tokens=5 capacity_tokens: 4000 tokens: 3 passwords: 2",
    "ASIAN CUISINE, AKIA, ASIA",
    "xoxb- short",
    "a secretary: Ada",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_and_near_misses_are_left_as_they_are(text: str) -> None:
    assert redact(text) == text


def test_a_secret_inside_a_prose_value_is_still_found() -> None:
    redacted = redact("token: mypassword:abc")
    assert "abc" not in redacted
    assert redacted.startswith("token: ")


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_a_second_pass_changes_nothing(text: str, expected: str) -> None:
    assert redact(expected) == expected


def test_redact_value_redacts_every_string_inside_lists_and_dicts() -> None:
    value = {
        "content": "key sk-abcdefghijklmnop1234",
        "tags": ["password=x", "mill"],
        "password": "hunter2",
        "DB_TOKEN": 1234,
        "nested": [{"url": "ftp://a:b@c"}, ("secret=y", 3, None, True)],
        "count": 2,
        "token=abc": "key",
    }
    assert redact_value(value) == {
        "content": "key sk-[redacted]",
        "tags": ["password=[redacted]", "mill"],
        "password": REDACTED,
        "DB_TOKEN": REDACTED,
        "nested": [{"url": "ftp://a:[redacted]@c"}, ("secret=[redacted]", 3, None, True)],
        "count": 2,
        "token=[redacted]": "key",
    }
    assert redact_value({"password": None, "token": True}) == {"password": None, "token": True}


def test_secret_key_names() -> None:
    assert all(map(is_secret_key, ["password", "DB_PASSWORD", "api-key", "client_secret"]))
    assert not any(map(is_secret_key, ["tokens", "token_count", "passage", "keys", "id"]))


# -- properties ------------------------------------------------------------------------

NEAR_MISSES = st.sampled_from(
    ["pass", "word", "sk", "s k-", "gh", "p_", "tok", "en", "secre", "api", "key", "=", ":",
     ":/", "/", "@", "Bear", "AKI", "-----BEGIN", "PRIVATE", " ", "\n", "x", "Z9", "_", "-",
     '"', "'", "xo", "aws", "Authoriz"]
)  # fmt: skip
TEXT = st.lists(st.one_of(NEAR_MISSES, st.text(max_size=6)), max_size=30).map("".join)


@given(TEXT)
def test_text_without_a_trigger_comes_back_unchanged(text: str) -> None:
    lowered = text.lower()
    assume(not any(trigger in lowered for trigger in TRIGGERS))
    assert redact(text) == text


SOME_TRIGGERS = st.sampled_from(
    ["password=", "token: ", "secret=", "://", "u:p@", "sk-", "ghp_", "Bearer ", "AKIA",
     "Authorization: ", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "xoxb-",
     '"', "'", "[redacted]", "@", ":", "="]
)  # fmt: skip
MIXED = st.lists(
    st.one_of(SOME_TRIGGERS, NEAR_MISSES, st.text("aZ09_-./ \n", max_size=24)), max_size=25
).map("".join)


@given(MIXED)
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


BODY = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=24, max_size=40
)
UPPER = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=16, max_size=16)
PASSWORD = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%*+./?@^_~-", min_size=8, max_size=20)  # fmt: skip


@st.composite
def secrets(draw: st.DrawFn) -> tuple[str, str]:
    """A secret as it may appear in text, and the part of it that must go."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        body = draw(BODY) + "7"
        return f"sk-{draw(st.sampled_from(['', 'proj-']))}{body}", body
    if kind == 1:
        body = draw(BODY)
        return draw(st.sampled_from(["ghp_", "gho_", "ghs_", "github_pat_"])) + body, body
    if kind == 2:
        body = draw(BODY)
        return f"xoxb-{body}", body
    if kind == 3:
        body = draw(UPPER)
        return draw(st.sampled_from(["AKIA", "ASIA"])) + body, body
    if kind == 4:  # a digit: after a bare "secret:" or "token:", letters alone are prose
        body = draw(PASSWORD) + "1"
        key = draw(st.sampled_from(["password", "PASSWD", "pwd", "api_key", "secret", "token"]))
        return f"{key}{draw(st.sampled_from(['=', ': ', ' = ']))}{body}", body
    if kind == 5:
        body = draw(PASSWORD) + " " + draw(PASSWORD)
        return f'"db_password": "{body}"', body
    if kind == 6:
        body = draw(PASSWORD).replace("/", "").replace("@", "") or "x"
        return f"postgres://bo:{body}@db.local/mill", body
    if kind == 7:
        body = draw(BODY) + "\n" + draw(BODY)
        end = draw(st.sampled_from(["\n-----END RSA PRIVATE KEY-----", ""]))
        return f"-----BEGIN RSA PRIVATE KEY-----\n{body}{end}", body
    if kind == 8:
        body = draw(BODY) + ".9"
        return f"Bearer {body}", body
    body = draw(BODY)
    return f"Authorization: Basic {body}", body


BEFORE = st.sampled_from([" ", "\n", "\t", ",", ";", "(", '"', "'", ": "])
AFTER = st.sampled_from([" ", "\n", "\t", ",", ";", ")"])


@given(TEXT, BEFORE, secrets(), AFTER, TEXT)
def test_a_secret_anywhere_in_random_text_never_survives(
    prefix: str, before: str, secret: tuple[str, str], after: str, suffix: str
) -> None:
    text, body = secret
    assume(body not in prefix and body not in suffix)
    assert body not in redact(prefix + before + text + after + suffix)
