"""Secrets out of what the vault keeps (pure): ``redact`` replaces text that looks like
a credential with ``[redacted]``, keeping enough around it to read what it was::

    password=[redacted]    postgres://bo:[redacted]@db/mill    sk-[redacted]
    Authorization: Bearer [redacted]    AKIA[redacted]    ghp_[redacted]

What counts as a secret:

- private key blocks, ``-----BEGIN ... PRIVATE KEY-----`` to the END line (or, without
  one, to the end of the text);
- credentials in a URL (``scheme://user:password@host``): the password;
- API keys and tokens by their shape: OpenAI-style ``sk-...`` (``sk-proj-...``; at
  least 16 characters after ``sk-``, a digit among them), GitHub ``ghp_``/``gho_``/
  ``ghu_``/``ghs_``/``ghr_``/``github_pat_``, Slack ``xox[abposr]-``, AWS access key
  ids (``AKIA``/``ASIA`` and 16 upper-case letters or digits);
- assignments ``key = value`` or ``key: value`` (the value quoted or not) whose key is,
  or ends with, ``password``, ``passwd``, ``passphrase``, ``pwd``, ``secret``,
  ``token``, ``api_key``, ``access_key``, ``private_key`` (with ``_``, ``-`` or nothing
  inside; ``_key``/``_access_key`` may follow: ``aws_secret_access_key``). A story's
  ``the secret: she loves Bo`` is prose, not a credential: after a bare ``secret`` or
  ``token`` and a colon, an unquoted value is redacted only when it looks like one
  (16 characters or more, or a digit or one of ``_-./+=`` in it);
- ``Bearer <token>`` (8 characters or more with a digit or ``._~+/=``, or 20 or more)
  and the rest of an ``Authorization:`` line after its scheme word.

- Google API keys (``AIza`` and 35 characters) and Stripe secret and restricted keys
  (``sk_live_``/``rk_live_``/``sk_test_``/``rk_test_``), whole whatever their length;
- every vendor shape detect-secrets' plugins know (``engine.memory.secret_detectors``:
  Stripe, Twilio, SendGrid, Mailchimp, npm, PyPI, GitLab, Discord, Telegram, Square,
  Azure, IBM, JWTs ...), the token cut out whole, a vendor's prefix kept
  (``SG.[redacted]``, ``eyJ[redacted]``);
- secrets told in prose (``engine.memory.secret_prose``): "the password is swordfish",
  "my PIN was 4512", "the code to the safe is 4512", "passphrase: open sesame".

``redact(text, allow_fiction=True)`` keeps what prose tells ("the code to the safe is
4512" is the story's, in a world that says so: ``fiction_secrets`` in
``config/memory_compaction.md``) and a bare ``password: swordfish``/``secret: x``, but
still takes every credential shape: keys and tokens, private keys, JWTs, URL
credentials, ``Bearer``, ``key=value`` and quoted ``"password": "x"`` assignments.

A word alone is never a secret: "I keep the password in my heart", "skill",
"task-ready" and "sk" are left as they are. ``redact`` is idempotent, and text holding
none of ``TRIGGERS`` (compared lower-cased) and no token-like run (``secret_detectors.
might_hold``) comes back unchanged, at the cost of a few substring searches: each
family of patterns runs only on text holding one of its own triggers.
"""

from __future__ import annotations

import functools
import re
from typing import Final, TypeVar, cast

from engine.memory import secret_detectors, secret_prose, secret_shapes, secret_told

REDACTED: Final = "[redacted]"

TRIGGERS: Final[tuple[str, ...]] = (
    "private key",
    "://",
    "sk-",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "akia",
    "asia",
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "accesskey",
    "access_key",
    "access-key",
    "privatekey",
    "private_key",
    "private-key",
    "bearer",
    "authorization",
    "aiza",
    "k_live_",
    "k_test_",
    *secret_prose.TRIGGERS,
    *secret_shapes.TRIGGERS,
    *secret_told.TRIGGERS,
)
"""Every match of every pattern of this module and of ``secret_prose`` holds one of
these (ASCII, lower case)."""

_I = re.IGNORECASE | re.ASCII

_PEM = re.compile(
    r"(-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"
    r"(?:.*?(-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)|.*\Z)",
    re.DOTALL,
)
_URL = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)[^\s/]+@")
_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(sk-)(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{16,}"
    r"|(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}"
    r"|(xox[abposr]-)[A-Za-z0-9-]{10,}"
    r"|(AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"
    r"|(AIza)[0-9A-Za-z_-]{35}"
    r"|([rs]k_(?:live|test)_)[0-9A-Za-z]{16,}"
    r")"
)
_KEY = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key)(?:[_-]?(?:access[_-]?)?key)?"
)
_ASSIGNMENT = re.compile(
    rf"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?{_KEY})"  # 1: the key, with what leads to it
    r"(['\"]?[ \t]*[:=][ \t]*)"  # 2: the separator (a JSON key's closing quote first)
    rf"(?!['\"]?[A-Za-z0-9_.-]*?{_KEY}['\"]?[ \t]*[:=])"  # not a key itself: that one is redacted
    r"(?:(\")(?:[^\"\\\n]|\\.)*(\"?)"  # 3, 4: a double-quoted value (or to the line end)
    r"|(')[^'\n]*('?)"  # 5, 6: a single-quoted one
    r"|((?:[^\s\"'`,;&<>)}]|&(?![\w.-]+=))+))",  # 7: an unquoted one ("&" inside, not "&x=")
    _I,
)
_SECRET_KEY_NAME = re.compile(rf"[A-Za-z0-9_.-]*?{_KEY}", _I)
_BEARER = re.compile(
    r"(?<![A-Za-z0-9])(bearer[ \t]+)"
    r"(?:(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=])[A-Za-z0-9._~+/=-]{8,}|[A-Za-z0-9._~+/=-]{20,})",
    _I,
)
_AUTHORIZATION = re.compile(
    r"(?<![A-Za-z0-9])((?:proxy-)?authorization['\"]?[ \t]*[:=][ \t]*['\"]?)"
    r"(?:(basic|bearer|digest|token|negotiate|ntlm)[ \t]+)?[^\"'\r\n]+",
    _I,
)
_CREDENTIAL_LIKE = re.compile(r"[0-9_./+=-]")
_PROSE_KEYS: Final = ("secret", "token")
_FICTION_KEYS: Final = ("password", "passwd", "passphrase", "pwd", "secret", "token")
"""A bare one of these and a colon is prose when fiction is allowed (``password: x``)."""
_VENDOR_PREFIX = re.compile(
    r"(?:[rs]k_(?:live|test)_|AIza|SG\.|eyJ|npm_|pypi-|gl[a-z]+-|GR1348941|sq0csp-|xox[a-z]-"
    r"|AccountKey=|AKC|AC|SK)"
)
_MAX_ROUNDS: Final = 8


_T = TypeVar("_T")


def redact(text: str, *, allow_fiction: bool = False) -> str:
    """``text`` with everything that looks like a secret replaced by ``[redacted]``;
    ``allow_fiction``: what prose tells is kept, credential shapes are not (see above).
    Remembered for the last ``_REMEMBERED`` texts: a bank written again at each commit
    redacts only the entries that changed."""
    return _redacted(text, allow_fiction) if len(text) <= _LONGEST_REMEMBERED \
        else _redact(text, allow_fiction)  # fmt: skip


_REMEMBERED: Final = 65_536
_LONGEST_REMEMBERED: Final = 4_096


def _redact(text: str, allow_fiction: bool) -> str:
    for _ in range(_MAX_ROUNDS):  # until nothing changes: one pattern's replacement can
        redacted = _round(text, allow_fiction)  # bring another's match together
        if redacted == text:
            break
        text = redacted
    return text


_redacted = functools.lru_cache(maxsize=_REMEMBERED)(_redact)


def redact_value(value: _T, *, allow_fiction: bool = False) -> _T:
    """``value`` (JSON-like: dicts, lists, tuples, strings, numbers) with every string
    redacted, and a scalar under a key named like a secret (``"password": "x"``,
    ``"api_key": 123``) replaced by ``[redacted]`` whole (fiction or not)."""
    if isinstance(value, str):
        return cast(_T, redact(value, allow_fiction=allow_fiction))
    if isinstance(value, list | tuple):
        items = [redact_value(item, allow_fiction=allow_fiction) for item in value]
        return cast(_T, tuple(items) if isinstance(value, tuple) else items)
    if isinstance(value, dict):
        return cast(_T, {
            _redact_key(k, allow_fiction): _redact_item(k, v, allow_fiction)
            for k, v in value.items()
        })  # fmt: skip
    return value


def is_secret_key(name: str) -> bool:
    """Whether a field called ``name`` holds a secret (``password``, ``DB_TOKEN``)."""
    return _SECRET_KEY_NAME.fullmatch(name) is not None


def _has(lowered: str, triggers: tuple[str, ...]) -> bool:
    return any(trigger in lowered for trigger in triggers)


_PEM_TRIGGERS: Final = ("private key",)
_URL_TRIGGERS: Final = ("://",)
_SHAPE_TRIGGERS: Final = (
    "sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "akia", "asia",
    "aiza", "k_live_", "k_test_",
)  # fmt: skip
_ASSIGNMENT_TRIGGERS: Final = (
    "password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "api_key",
    "api-key", "accesskey", "access_key", "access-key", "privatekey", "private_key",
    "private-key",
)  # fmt: skip
_BEARER_TRIGGERS: Final = ("bearer",)
_AUTHORIZATION_TRIGGERS: Final = ("authorization",)


def _round(text: str, allow_fiction: bool) -> str:
    lowered = text.lower()
    if _has(lowered, _PEM_TRIGGERS):
        text = _PEM.sub(_pem, text)
    if _has(lowered, _URL_TRIGGERS):
        text = _URL.sub(rf"\1{REDACTED}@", text)
    if _has(lowered, _SHAPE_TRIGGERS):
        text = _SHAPES.sub(_shape, text)
    if not allow_fiction and secret_prose.mentions(lowered):
        text = secret_prose.redact_prose(text)
    if _has(lowered, _ASSIGNMENT_TRIGGERS):
        text = _ASSIGNMENT.sub(_assignment_in_fiction if allow_fiction else _assignment, text)
    if _has(lowered, _BEARER_TRIGGERS):
        text = _BEARER.sub(rf"\1{REDACTED}", text)
    if _has(lowered, _AUTHORIZATION_TRIGGERS):
        text = _AUTHORIZATION.sub(_authorization, text)
    for start, end in reversed(secret_detectors.spans(text)):
        text = text[:start] + _vendor(text[start:end]) + text[end:]
    spans = secret_shapes.shape_spans(text) if _has(lowered, secret_shapes.TRIGGERS) else []
    spans += [
        span for span in secret_detectors.keyword_spans(text)
        if not secret_shapes.PLACEHOLDER.fullmatch(text[span[0] : span[1]])
        and not (allow_fiction and text[span[0] - 2 : span[0]].strip() == ":")
    ]  # fmt: skip
    if _has(lowered, secret_told.TRIGGERS):
        spans += secret_told.told_spans(text, assignments_only=allow_fiction)
    if spans:
        text = secret_shapes.redact_spans(text, spans)
    return text


def _vendor(secret: str) -> str:
    prefix = _VENDOR_PREFIX.match(secret)
    return (prefix[0] if prefix else "") + REDACTED


def _pem(match: re.Match[str]) -> str:
    return f"{match[1]}\n{REDACTED}\n{match[2] or ''}"


def _shape(match: re.Match[str]) -> str:
    prefix = next(group for group in match.groups() if group is not None)
    return prefix + REDACTED


def _assignment(match: re.Match[str]) -> str:
    key, separator = match[1], match[2]
    if match[3] is not None:
        return f"{key}{separator}{match[3]}{REDACTED}{match[4]}"
    if match[5] is not None:
        return f"{key}{separator}{match[5]}{REDACTED}{match[6]}"
    value = match[7]
    if value.lower() in ("bearer", "basic", "token", "digest") or value.endswith(":"):
        return match[0]  # "password: Bearer x": the scheme's own rule takes what follows
    if secret_shapes.PLACEHOLDER.fullmatch(value) or (
        value == "#" and separator[-1:] in (" ", "\t")
    ):
        return match[0]  # "password: ********", "password: ${DB_PASSWORD}", "x=  # comment"
    if key.lower() in _PROSE_KEYS and "=" not in separator and not _looks_like_one(value):
        return key + separator + _ASSIGNMENT.sub(_assignment, value)  # prose: look inside
    return key + separator + REDACTED


def _assignment_in_fiction(match: re.Match[str]) -> str:
    key, separator = match[1], match[2]
    if key.lower() in _FICTION_KEYS and separator.strip() == ":":
        return match[0]  # "password: swordfish" in a story; "password=x" is a credential
    return _assignment(match)


def _looks_like_one(value: str) -> bool:
    return len(value) >= 16 or _CREDENTIAL_LIKE.search(value) is not None


def _authorization(match: re.Match[str]) -> str:
    rest = match[0][match.end(2) - match.start() if match[2] else len(match[1]) :].strip()
    if secret_shapes.PLACEHOLDER.fullmatch(rest):
        return match[0]  # "Authorization: Bearer <token>" in a how-to
    scheme = f"{match[2]} " if match[2] else ""
    return f"{match[1]}{scheme}{REDACTED}"


def _redact_key(key: object, allow_fiction: bool) -> object:
    return redact(key, allow_fiction=allow_fiction) if isinstance(key, str) else key


def _redact_item(key: object, value: object, allow_fiction: bool) -> object:
    if (
        isinstance(key, str)
        and is_secret_key(key)
        and isinstance(value, str | int | float)
        and not isinstance(value, bool)
    ):
        return REDACTED
    return redact_value(value, allow_fiction=allow_fiction)
