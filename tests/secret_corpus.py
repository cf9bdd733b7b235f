"""The redaction corpus (used by ``memory/test_secrets_corpus.py`` and
``sim/test_knowledge_secrets.py``): secrets as people and programs write them (vendors'
keys and tokens, private keys, URL credentials, assignments, and prose), and harmless
sentences that must come back as they are. Each secret is a ``Secret``: the form it takes, the
sentence it is said in, and the part of it that must never reach a prompt or a file.

The keys are made up, assembled from pieces so that no scanner takes this file for a
leak; each has the shape its vendor gives it (and detect-secrets recognises)."""

from __future__ import annotations

from typing import NamedTuple


class Secret(NamedTuple):
    form: str
    text: str
    secret: str
    """What must not survive redaction."""


def _chars(seed: str, n: int, alphabet: str) -> str:
    """``n`` characters of ``alphabet``, spread by ``seed`` (the same every run)."""
    state = sum(map(ord, seed)) * 7919 + len(seed)
    out = []
    for _ in range(n):
        state = (state * 1103515245 + 12345) % 2**31
        out.append(alphabet[state % len(alphabet)])
    return "".join(out)


ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
LOWER = "abcdefghijkmnopqrstuvwxyz0123456789"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
HEX = "0123456789abcdef"
B64URL = ALNUM + "-_"


def _key(seed: str, n: int, alphabet: str = ALNUM) -> str:
    return _chars(seed, n, alphabet)


AWS_ID = "AK" + "IA" + _key("aws", 16, UPPER)
AWS_STS = "AS" + "IA" + _key("sts", 16, UPPER)
AWS_SECRET = _key("aws-secret", 40, ALNUM + "/+")
GITHUB = "gh" + "p_" + _key("github", 36)
GITHUB_OAUTH = "gh" + "o_" + _key("github-oauth", 36)
GITHUB_PAT = "github" + "_pat_" + _key("pat", 22) + "_" + _key("pat2", 59)
SLACK_BOT = "xo" + "xb-" + "2817365512-" + "40712093618-" + _key("slack", 24, LOWER)
SLACK_USER = "xo" + "xp-" + "1234567890-" + _key("slack-user", 20, LOWER)
SLACK_HOOK_PATH = "T0" + _key("team", 8, UPPER) + "/B0" + _key("bot", 8, UPPER) + "/"
SLACK_HOOK_KEY = _key("hook", 24)
OPENAI = "sk-" + "proj-" + _key("openai", 48, B64URL) + "7"
OPENAI_LEGACY = "sk-" + _key("legacy", 20) + "T3Blbk" + "FJ" + _key("legacy2", 20)
STRIPE_LIVE = "sk" + "_live_" + _key("stripe", 24)
STRIPE_RESTRICTED = "rk" + "_live_" + _key("stripe-rk", 24)
STRIPE_LONG = "sk" + "_live_" + _key("stripe-long", 99)
GOOGLE = "AI" + "za" + "Sy" + _key("google", 33, B64URL)
JWT = (
    "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSIsImlhdCI6MTUxNjIzOTAyMn0"
    "." + _key("jwt-signature", 43, B64URL)
)
PEM_BODY = _key("rsa", 64, ALNUM + "+/") + "\n" + _key("rsa2", 64, ALNUM + "+/")
OPENSSH_BODY = _key("openssh", 70, ALNUM + "+/") + "\n" + _key("openssh2", 40, ALNUM + "+/")
DB_PASSWORD = "Tr0ub4dor-" + _key("db", 6)
URL_PASSWORD = "m1ll-" + _key("url", 8)
BEARER = _key("bearer", 40, B64URL) + "9"
PW_ASSIGN = "hunter2-" + _key("assign", 6)
API_KEY = _key("api-key", 32, HEX)
TWILIO_SID = "AC" + _key("twilio", 32, LOWER)
TWILIO_KEY = "SK" + _key("twilio-key", 32, LOWER)
SENDGRID = "SG." + _key("sendgrid", 22, B64URL) + "." + _key("sendgrid2", 43, B64URL)
MAILCHIMP = _key("mailchimp", 32, LOWER) + "-us14"
NPM = "npm_" + _key("npm", 36)
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + _key("pypi", 80, B64URL)
GITLAB = "gl" + "pat-" + _key("gitlab", 20, B64URL)
DISCORD = "M" + _key("discord", 23) + "." + _key("discord2", 6) + "." + _key("discord3", 27)
TELEGRAM = "5123456789:" + "AA" + _key("telegram", 33, B64URL)
SQUARE = "sq0" + "csp-" + _key("square", 43, B64URL)
AZURE = _key("azure", 86, ALNUM + "+/") + "=="

SECRETS: list[Secret] = [
    Secret("aws", f"My access key id is {AWS_ID}, keep it.", AWS_ID),
    Secret("aws", f"export AWS_SESSION={AWS_STS}", AWS_STS),
    Secret("aws", f'aws_secret_access_key = "{AWS_SECRET}"', AWS_SECRET),
    Secret("github", f"push with {GITHUB} tonight", GITHUB),
    Secret("github", f"token={GITHUB_OAUTH}", GITHUB_OAUTH),
    Secret("github", f"the fine-grained one: {GITHUB_PAT}", GITHUB_PAT),
    Secret("slack", f"the bot posts as {SLACK_BOT}", SLACK_BOT),
    Secret("slack", f"({SLACK_USER})", SLACK_USER),
    Secret(
        "slack",
        f"webhook https://hooks.slack.com/services/{SLACK_HOOK_PATH}{SLACK_HOOK_KEY} for alerts",
        SLACK_HOOK_KEY,
    ),
    Secret("openai", f"OPENAI_API_KEY is {OPENAI}", OPENAI),
    Secret("openai", f"an old key {OPENAI_LEGACY} still works", OPENAI_LEGACY),
    Secret("stripe", f"charge cards with {STRIPE_LIVE}.", STRIPE_LIVE),
    Secret("stripe", f"restricted: {STRIPE_RESTRICTED}", STRIPE_RESTRICTED),
    Secret("stripe", f"a longer one {STRIPE_LONG}", STRIPE_LONG[-40:]),
    Secret("google", f"maps use key {GOOGLE} in the header", GOOGLE),
    Secret("jwt", f"session cookie {JWT}", JWT.split(".")[2]),
    Secret(
        "private-key",
        f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----",
        PEM_BODY.splitlines()[1],
    ),
    Secret(
        "private-key",
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{OPENSSH_BODY}\n-----END OPENSSH PRIVATE KEY-----",
        OPENSSH_BODY.splitlines()[0],
    ),
    Secret("url", f"postgres://miller:{DB_PASSWORD}@db.local/mill", DB_PASSWORD),
    Secret("url", f"clone https://ada:{URL_PASSWORD}@git.example.com/ada/mill.git", URL_PASSWORD),
    Secret("bearer", f"curl -H 'Authorization: Bearer {BEARER}' https://api", BEARER),
    Secret("assignment", f"password={PW_ASSIGN}", PW_ASSIGN),
    Secret("assignment", f'{{"api_key": "{API_KEY}"}}', API_KEY),
    Secret("twilio", f"account {TWILIO_SID} sends the texts", TWILIO_SID),
    Secret("twilio", f"api key {TWILIO_KEY}", TWILIO_KEY),
    Secret("sendgrid", f"mail goes out with {SENDGRID}", SENDGRID.split(".")[2]),
    Secret("mailchimp", f"the newsletter key {MAILCHIMP}", MAILCHIMP),
    Secret("npm", f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    Secret("pypi", f"upload with {PYPI}", PYPI[-50:]),
    Secret("gitlab", f"gitlab token {GITLAB}", GITLAB),
    Secret("discord", f"the bot logs in with {DISCORD}", DISCORD.split(".")[2]),
    Secret("telegram", f"telegram bot {TELEGRAM}", TELEGRAM.split(":")[1]),
    Secret("square", f"square secret {SQUARE}", SQUARE),
    Secret(
        "azure",
        f"DefaultEndpointsProtocol=https;AccountName=mill;AccountKey={AZURE};EndpointSuffix=x",
        AZURE[:60],
    ),
    # prose
    Secret("prose", "The vault password is hunter2swordfish", "hunter2swordfish"),
    Secret("prose", "Ada told me the password was swordfish.", "swordfish"),
    Secret("prose", "My PIN is 4512, don't tell Bo.", "4512"),
    Secret("prose", "Her pin number is 7731.", "7731"),
    Secret("prose", "The code to the safe is 90210.", "90210"),
    Secret("prose", "the safe's code is 3388", "3388"),
    Secret("prose", "The combination to the lock is 12-34-56!", "12-34-56"),
    Secret("prose", "passphrase: correct horse battery staple", "horse battery staple"),
    Secret("prose", 'The passphrase is "open sesame now".', "open sesame now"),
    Secret("prose", "The door code was four nine one seven, she said.", "four nine one seven"),
    Secret("prose", "Gr33nLantern is my password.", "Gr33nLantern"),
    Secret("prose", "I set my password to Mellon42 yesterday", "Mellon42"),
    Secret("prose", "The wifi password is 'millstone-99'", "millstone-99"),
    Secret("prose", "the PIN for the card was 6620", "6620"),
]

FICTION = "The code to the safe is 4512."
"""A secret the story tells (kept where a world allows fiction)."""

HARMLESS: list[str] = [
    "I keep the password in my heart",
    "The password is a song only Bo knows.",
    "The password is written on the wall of the cellar.",
    "The passphrase is strong.",
    "the secret: she loves Bo",
    "Bo's token: a brass coin",
    "skill, task-ready, sk, sk-8, risk-assessment-procedure-for-2-wells",
    "the bearer of bad news",
    "The combination is perfect.",
    "The combination of flour and water is 2 parts to 1.",
    "The code is broken.",
    "The error code is 404.",
    "The mill code of conduct is 12 pages long.",
    "The pin is made of brass.",
    "Bo pinned the map to the wall at 3 o'clock.",
    "We passed 12 carts on the road to the market.",
    "The passage to the cellar is dark.",
    "max_tokens=5 capacity_tokens: 4000 tokens: 3 passwords: 2",
    "Ada has 3 passwords to remember and forgets all of them.",
    "Pat's password is safe with me.",
    "The AC unit is on, SK Telecom called, and the AKIA badge is gone.",
    "Consolidated knowledge, well-being of the village, extraordinarily careful.",
    "Meet at 2026-11-28T08:00 by the well; ticket MILL-12345, ISBN 978-3-16-148410-0.",
    "id 123e4567-e89b-12d3-a456-426614174000 and checksum "
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "https://example.com:8080/path and mailto:bo@example.com",
    "She spins wool, and the spinner hums; opinions differ.",
]
