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

A word alone is never a secret: "I keep the password in my heart", "skill",
"task-ready" and "sk" are left as they are. ``redact`` is idempotent, and text holding
none of ``TRIGGERS`` (compared lower-cased) comes back unchanged.
"""

from __future__ import annotations

import re
from typing import Final, TypeVar, cast

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
)
"""Every match of every pattern holds one of these (ASCII, lower case)."""

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
    r")"
)
_KEY = (
    r"(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key)(?:[_-]?(?:access[_-]?)?key)?"
)
_ASSIGNMENT = re.compile(
    rf"(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]*?{_KEY})"  # 1: the key, with what leads to it
    r"(['\"]?[ \t]*[:=][ \t]*)"  # 2: the separator (a JSON key's closing quote first)
    rf"(?![A-Za-z0-9_.-]*?{_KEY}['\"]?[ \t]*[:=])"  # not a key itself: that one is redacted
    r"(?:(\")(?:[^\"\\\n]|\\.)*(\"?)"  # 3, 4: a double-quoted value (or to the line end)
    r"|(')[^'\n]*('?)"  # 5, 6: a single-quoted one
    r"|([^\s\"'`,;&<>)}]+))",  # 7: an unquoted one
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
_MAX_ROUNDS: Final = 8

_T = TypeVar("_T")


def redact(text: str) -> str:
    """``text`` with everything that looks like a secret replaced by ``[redacted]``."""
    for _ in range(_MAX_ROUNDS):  # until nothing changes: one pattern's replacement can
        redacted = _round(text)  # bring another's match together (almost never twice)
        if redacted == text:
            break
        text = redacted
    return text


def redact_value(value: _T) -> _T:
    """``value`` (JSON-like: dicts, lists, tuples, strings, numbers) with every string
    redacted, and a scalar under a key named like a secret (``"password": "x"``,
    ``"api_key": 123``) replaced by ``[redacted]`` whole."""
    if isinstance(value, str):
        return cast(_T, redact(value))
    if isinstance(value, list | tuple):
        items = [redact_value(item) for item in value]
        return cast(_T, tuple(items) if isinstance(value, tuple) else items)
    if isinstance(value, dict):
        return cast(_T, {_redact_key(k): _redact_item(k, v) for k, v in value.items()})
    return value


def is_secret_key(name: str) -> bool:
    """Whether a field called ``name`` holds a secret (``password``, ``DB_TOKEN``)."""
    return _SECRET_KEY_NAME.fullmatch(name) is not None


def _round(text: str) -> str:
    text = _PEM.sub(_pem, text)
    text = _URL.sub(rf"\1{REDACTED}@", text)
    text = _SHAPES.sub(_shape, text)
    text = _ASSIGNMENT.sub(_assignment, text)
    text = _BEARER.sub(rf"\1{REDACTED}", text)
    return _AUTHORIZATION.sub(_authorization, text)


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
    if key.lower() in _PROSE_KEYS and "=" not in separator and not _looks_like_one(value):
        return key + separator + _ASSIGNMENT.sub(_assignment, value)  # prose: look inside
    return key + separator + REDACTED


def _looks_like_one(value: str) -> bool:
    return len(value) >= 16 or _CREDENTIAL_LIKE.search(value) is not None


def _authorization(match: re.Match[str]) -> str:
    scheme = f"{match[2]} " if match[2] else ""
    return f"{match[1]}{scheme}{REDACTED}"


def _redact_key(key: object) -> object:
    return redact(key) if isinstance(key, str) else key


def _redact_item(key: object, value: object) -> object:
    if (
        isinstance(key, str)
        and is_secret_key(key)
        and isinstance(value, str | int | float)
        and not isinstance(value, bool)
    ):
        return REDACTED
    return redact_value(value)
