"""Vendors' credential shapes, found by detect-secrets' plugins (pure, no network).

``spans(text)`` runs each plugin of ``PLUGINS`` over ``text``: every match of the
plugin's ``denylist`` (its regular expressions) that the plugin's own ``analyze_string``
confirms (the JWT plugin checks that the token decodes) is a secret. Where it lies is
the match's first group of ``MIN_SECRET`` characters or more (the value of ``aws ...
key = "..."``), else the whole match less the delimiters some patterns take with it
(``analyze_string`` alone says only what the groups hold: ``glpat`` for a GitLab token),
and it reaches to the end of its token (a pattern of a fixed length, Stripe's 24
characters, must not leave a longer key's tail behind). Never ``analyze_line``, nor any
scanning or baseline machinery: those may call a vendor to verify a key.

detect-secrets is imported on the first ``find`` that gets past ``might_hold``, not with
this module: importing it takes about 0.15 s (it brings ``requests``, though nothing
here sends a request), which no command that never meets a token should pay.

``might_hold`` is the cheap precheck: every plugin's match holds a run of 11 or more
token characters (letters, digits, ``_+/=.-``) with a digit in it or an upper-case
letter after its first character, so text without one (prose: ``"consolidated"``,
``"well-being"``) is not shown to the plugins at all.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable
from typing import Final, Protocol

PLUGINS: Final[tuple[tuple[str, str], ...]] = (
    ("artifactory", "ArtifactoryDetector"),
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("cloudant", "CloudantDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cloud_iam", "IbmCloudIamDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("softlayer", "SoftlayerDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)
"""detect-secrets' regex plugins used (module in ``detect_secrets.plugins``, class).
Left out: private keys (its plugin finds the header line only: ``secrets`` takes the
whole block), basic auth in URLs and keywords (``secrets``' own patterns, which keep
the context readable), high-entropy strings (they flag hashes and ids) and public IP
addresses (not secrets)."""

MIN_SECRET: Final = 8
"""A group shorter than this is a pattern's prefix (``glpat``), not the secret."""

_RUN = re.compile(r"[A-Za-z0-9_+/=.-]{11,}")
_LONG_RUN: Final = 20
_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_+/=-]*")
_DELIMITERS: Final = " \t\r\n\"'=:"


class _Plugin(Protocol):
    denylist: Iterable[re.Pattern[str]]

    def analyze_string(self, string: str) -> Iterable[str]: ...


def might_hold(text: str) -> bool:
    """Whether ``text`` holds a run that some plugin could match (see the module)."""
    for match in _RUN.finditer(text):
        run = match[0]
        if len(run) >= _LONG_RUN:
            return True
        if ("AKC" in run or "AP" in run) and (
            any(c.isdigit() for c in run) or any(c.isupper() for c in run[1:])
        ):
            return True
    return False


def spans(text: str) -> list[tuple[int, int]]:
    """Where the secrets the plugins find in ``text`` lie: sorted, none overlapping."""
    if not might_hold(text):
        return []
    found: list[tuple[int, int]] = []
    for plugin in _plugins():
        for regex in plugin.denylist:
            for match in regex.finditer(text):
                if any(plugin.analyze_string(match[0])):
                    found.append(_span(match))
    return _merged(found)


def _span(match: re.Match[str]) -> tuple[int, int]:
    group = next((g for g in range(1, (match.re.groups or 0) + 1)
                  if match[g] is not None and len(match[g]) >= MIN_SECRET), 0)  # fmt: skip
    start, end = match.span(group)
    text = match.string
    while start < end and text[start] in _DELIMITERS:
        start += 1
    while end > start and text[end - 1] in _DELIMITERS:
        end -= 1
    tail = _TOKEN_TAIL.match(text, end)
    return start, tail.end() if tail else end


def _merged(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


@functools.cache
def _plugins() -> tuple[_Plugin, ...]:
    plugins: list[_Plugin] = []
    for module_name, class_name in PLUGINS:
        module = importlib.import_module(f"detect_secrets.plugins.{module_name}")
        plugins.append(getattr(module, class_name)())
    return tuple(plugins)


_KEYWORDS: Final = ("pass", "pwd", "secret", "key", "contrase")
"""detect-secrets' ``KeywordDetector`` denylist, by the letters every entry holds."""


def keyword_spans(text: str) -> list[tuple[int, int]]:
    """Values detect-secrets' ``KeywordDetector`` finds in assignments (``db_pass = x``,
    ``api_key: x``, ``"password": "x"``, its config-file forms), each a single word that
    is not a placeholder: where they lie. Run only on text with ``=`` or ``:`` and one of
    its words (importing detect-secrets costs about 0.15 s)."""
    lowered = text.lower()
    if not ("=" in text or ":" in text) or not any(k in lowered for k in _KEYWORDS):
        return []
    found = []
    for regex, group in _keyword_regexes().items():
        for match in regex.finditer(text):
            value, name = match[group], _KEY_NAME.match(match[0])
            if not value or any(c.isspace() for c in value) or "redacted" in value:
                continue
            if name is not None and _CREDENTIAL_NAME.search(name[0]):
                found.append(match.span(group))
    return _merged(found)


_KEY_NAME = re.compile(r"[\w.-]+")
_CREDENTIAL_NAME = re.compile(
    r"(?:^|[_.-])(?:pass|passwd|password|pwd|secret|contrase[ñn]a|(?:api|auth|priv|private"
    r"|service|account|db|database|client)[_-]?key)$",
    re.IGNORECASE,
)
"""A key whose name ends in a credential word ("db_pass", "api_key"): not "secretary" nor
"passwords", which the detector's word-suffix lets through."""


@functools.cache
def _keyword_regexes() -> dict[re.Pattern[str], int]:
    keyword = importlib.import_module("detect_secrets.plugins.keyword")
    return dict(keyword.CONFIG_DENYLIST_REGEX_TO_GROUP)
