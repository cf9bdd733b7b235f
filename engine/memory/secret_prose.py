"""Secrets told in prose (pure): ``redact_prose`` replaces what follows "the password
is", "my PIN was", "the code to the safe is", "passphrase:" ... with ``[redacted]``.

Two kinds of nouns:

- *words*: password, passcode, passphrase (pass phrase), passwd, pwd, watchword, secret
  word, magic word. Their value may be a plain word ("the password is swordfish"), but
  not one that describes instead ("the password is a song", "... is hidden", "... is
  written on the wall": articles, pronouns, prepositions, adverbs, a few adjectives,
  and words ending in -ed, -ing or -ly);
- *codes*: PIN (PIN number, PIN code), combination, a code with what it opens before
  it (safe code, door code, the safe's code) or after it ("the code to the safe", "the
  code for the back door"). Their value holds a digit ("4512", "12-34-56") or is number
  words ("four five one two"): "the combination is perfect", "the error code is 404"
  and "the code of conduct is 12 pages" are prose.

The forms: NOUN [to/for/on/at/into and up to four words] VERB VALUE, where VERB is
``is``, ``was``, ``'s``, ``are``, ``were``, ``will be``, ``has been``, ``remains``,
``became``, ``reads``, ``equals``, ``is now``, ``is set to``, ``was changed to`` ... or
a colon; "set/changed/reset the NOUN to VALUE"; and "VALUE is the NOUN" at the end of
a clause (the value a code, or a plain word that does not describe). A quoted value
goes whole; a passphrase's runs to the end of its clause (or to the next noun); any
other is one token. Nouns match whatever their case. A value already ``[redacted]`` is
left alone, so ``redact_prose`` is idempotent.

Speed: ``mentions`` finds where a noun starts with a few ``str.find``; text naming none
costs nothing more, and the patterns are tried only at the words just before a noun.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from engine.memory.secret_shapes import PLACEHOLDER

REDACTED: Final = "[redacted]"

TRIGGERS: Final[tuple[str, ...]] = (
    "pass",
    "pwd",
    "pin",
    "code",
    "combination",
    "watchword",
    "secret word",
    "secret-word",
    "magic word",
    "magic-word",
)
"""Every match holds one of these (lower case); ``mentions`` is the finer check."""

_HEADS: Final[dict[str, tuple[str, ...]]] = {
    "pass": ("password", "passcode", "passphrase", "passwd", "pass word", "pass-word",
             "pass code", "pass-code", "pass phrase", "pass-phrase"),
    "pwd": ("pwd",),
    "pin": ("pin",),
    "code": ("code",),
    "combination": ("combination",),
    "watchword": ("watchword",),
    "secret": ("secret word", "secret-word"),
    "magic": ("magic word", "magic-word"),
}  # fmt: skip
"""Where a noun can start (at a word's start), by its first letters."""


_WORD_NOUN = r"pass[ -]?(?:word|code|phrase)|passwd|pwd|watchword|secret[ -]word|magic[ -]word"
_OPENS = (
    r"safe|door|front[ -]door|back[ -]door|lock|vault|gate|locker|chest|strongbox|alarm"
    r"|access|security|entry|secret|keypad|wi-?fi|unlock|combination|pin|phone|card|box"
)
_CODE_NOUN = (
    rf"pin(?:[ -](?:number|code|no\.?))?|combination|(?:{_OPENS})(?:'s|’s)?[ -]code"
    r"|code(?=\s+(?:to|for)\s)"
)
_NOUN = rf"(?P<noun>(?:new\s+|old\s+|real\s+)?(?:{_WORD_NOUN}|{_CODE_NOUN}))"
_QUALIFIER = r"(?:[ \t]+(?:to|for|on|at|into)(?:[ \t]+[\w'’-]+){1,4}?)??"
"""What a noun is for ("the code *for the safe*"), within its line, tried shortest first:
"set my password to X yesterday\nThe passage to the cellar" sets it to X."""
_VERB = (
    r"(?:\s*:|\s+(?:(?:is|was|'s|’s|are|were|will\s+be|has\s+been|had\s+been|remains"
    r"|became|becomes|reads|equals)\b(?:\s+(?:now|still|just|actually|simply|always|set\s+to"
    r"|changed\s+to))?|(?:is|was)\s+(?:set|changed)\s+to))"
)
_NUMBER_WORDS = (
    r"zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety|hundred"
)
_TOKEN_CHAR = r"[^\s\"'`,;<>()\[\]{}]"
_VALUE = (
    r"(?P<value>[\"“'‘](?P<quoted>[^\"”'’\n]{1,120})[\"”'’]"
    rf"|(?P<spelled>(?:{_NUMBER_WORDS})(?:[ \t-]+(?:{_NUMBER_WORDS}))+)(?![\w-])"
    rf"|{_TOKEN_CHAR}*[^\s\"'`,;<>()\[\]{{}}.!?:])"
)
_PHRASE_VALUE = (
    r"(?P<value>[\"“'‘](?P<quoted>[^\"”'’\n]{1,120})[\"”'’]"
    r"|(?P<phrase>[^\s.;!?\n\"“”\[](?:(?!\s(?:the\s|my\s|a\s)?(?:pass|pin\b|code\b|combination))"
    r"[^.;!?\n\"“”]){0,118}(?<![\s.;!?\n\"“”])))"
)
"""A passphrase's value runs to the end of its clause, or to the next noun."""
_FORWARD = re.compile(rf"(?<![\w-]){_NOUN}{_QUALIFIER}{_VERB}[ \t]*{_VALUE}", re.IGNORECASE)
_PHRASE = re.compile(
    rf"(?<![\w-])(?P<noun>pass[ -]?phrase){_QUALIFIER}{_VERB}[ \t]*{_PHRASE_VALUE}",
    re.IGNORECASE,
)
_SET = re.compile(
    rf"(?<![\w-])(?:set|sets|setting|change[sd]?|changing|reset|resets)\s+(?:the|my|our|your"
    rf"|his|her|their|its|a)\s+{_NOUN}{_QUALIFIER}\s+to\s+{_VALUE}",
    re.IGNORECASE,
)
_BACKWARD = re.compile(
    rf"(?<!{_TOKEN_CHAR}){_VALUE}\s+(?:is|was|will\s+be)\s+(?:the|my|our|your|his|her|their"
    rf"|its)\s+{_NOUN}(?=\s*(?:[.,;:!?)\"'”’]|\Z|\n)|\s+(?:and|but|or|so|too|now)\b)",
    re.IGNORECASE,
)
_OPENER_WORDS: Final = """a an the this that it its my your his her our their not no never now still also
    just only in on at under behind inside into from by near written hidden kept stored
    somewhere something lost forgotten unknown known changed set too very so"""
_PHRASE_OPENERS: Final = frozenset(_OPENER_WORDS.split())
_DESCRIBING_WORDS: Final = """these those it's mine yours ours theirs none always quite rather of with without
    outside onto above below beneath safe secret wrong right correct incorrect invalid
    valid expired required needed missing empty blank long short strong weak easy hard
    simple same different new old case here there nothing anything everything what
    which who whom whose whatever whichever why how where when if unless because and or
    but nor yet one two some any all every each both either neither more most less
    least many much few several enough good bad fine ok okay unsafe private public
    important useless obvious clear unclear complicated tricky personal shared like as
    than about around between for to bearer basic digest"""
_DESCRIBING: Final = _PHRASE_OPENERS | frozenset(_DESCRIBING_WORDS.split())


def mentions(lowered: str) -> bool:
    """Whether ``lowered`` (the text, lower-cased) names one of the nouns as a word: the
    cheap check before the patterns (a few ``str.find``)."""
    return bool(_heads(lowered))


def redact_prose(text: str) -> str:
    """``text`` with every value told in prose replaced (see the module). Each pattern
    is tried only where a noun starts, and a few words before it."""
    lowered = text.lower()
    if not _heads(lowered):
        return text
    if "phrase" in lowered:
        text = _sub_near(_PHRASE, text, _phrase, _FORWARD_REACH)
    text = _sub_near(_FORWARD, text, _told, _FORWARD_REACH)
    if "set" in lowered or "chang" in lowered:
        text = _sub_near(_SET, text, _told, _SET_REACH)
    if " is " in lowered or " was " in lowered or " be " in lowered:
        text = _sub_near(_BACKWARD, text, _told, _BACKWARD_REACH)
    return text


_FORWARD_REACH: Final = 32
"""Characters before a noun's head where its match may start ("the front door's code")."""
_SET_REACH: Final = 64
_BACKWARD_REACH: Final = 160
_STARTS = re.compile(r"(?<![^\s(\"'“‘])[^\s]")


def _heads(lowered: str) -> list[int]:
    found = []
    for first, heads in _HEADS.items():
        at = lowered.find(first)
        while at >= 0:
            if (at == 0 or not lowered[at - 1].isalnum()) and lowered.startswith(heads, at):
                end = at + len(next(h for h in heads if lowered.startswith(h, at)))
                if first in ("pass", "watchword", "secret", "magic") or not (
                    end < len(lowered) and lowered[end].isalpha()
                ):
                    found.append(at)
            at = lowered.find(first, at + 1)
    return sorted(found)


def _sub_near(
    pattern: re.Pattern[str], text: str, replace: Callable[[re.Match[str]], str], reach: int
) -> str:
    """``pattern.sub(replace, text)`` for the matches that start at a word at most
    ``reach`` characters before a noun's head (and end past it)."""
    parts: list[str] = []
    done = 0
    for head in _heads(text.lower()):
        if head < done:
            continue
        for start in _STARTS.finditer(text, max(done, head - reach), head + 1):
            match = pattern.match(text, start.start())
            if match is not None and match.end() > head:
                parts += [text[done : match.start()], replace(match)]
                done = match.end()
                break
    return "".join(parts) + text[done:] if parts else text


def _phrase(match: re.Match[str]) -> str:
    phrase = match["phrase"]
    first = phrase.split()[0].lower() if phrase is not None else ""
    if phrase is not None and (
        first in _PHRASE_OPENERS or phrase.lower() in _DESCRIBING
        or first.endswith(("ed", "ing", "ly"))
    ):  # fmt: skip
        return match[0]  # "the passphrase is written down", "... is strong", "... updated"
    return _replace(match)


def _told(match: re.Match[str]) -> str:
    return _replace(match) if _is_secret(match) else match[0]


def _replace(match: re.Match[str]) -> str:
    part = "quoted" if match["quoted"] is not None else "value"
    start, end = match.span(part)
    whole = match.string
    return whole[match.start() : start] + REDACTED + whole[end : match.end()]


_SYSTEM_CODE = re.compile(r"(?:postal|post|zip|area|country|error|status|exit)[ -]$", re.I)
"""What makes a code a system's, not a secret: "the postal code for the mill is GH4"."""


def _is_secret(match: re.Match[str]) -> bool:
    value, quoted = match["value"], match["quoted"]
    if _SYSTEM_CODE.search(match.string[max(0, match.start("noun") - 12) : match.start("noun")]):
        return False
    held = PLACEHOLDER.match(match.string, match.start("value"))
    if held is not None and held.end() >= match.end("value"):
        return False  # "password: ********", "password: ${DB_PASSWORD}"
    if quoted is None and match.string[match.end("value") : match.end("value") + 1] == ":":
        return False  # "password: Authorization: Basic x": a label, whose value is taken
    if quoted is not None:
        if re.match(r"\s*:", match.string[match.end("value") :]):
            return False  # '"db_password": "x"': a key, whose value the assignment takes
        return quoted.strip() not in ("", REDACTED)
    if match["spelled"] is not None or any(c.isdigit() for c in value):
        return True
    if re.search(_WORD_NOUN, match["noun"], re.IGNORECASE) is None:
        return False  # a code's value holds a digit or is number words
    if any(not c.isalpha() for c in value) or any(c.isupper() for c in value[1:]):
        return True
    lowered = value.lower()
    return lowered not in _DESCRIBING and not lowered.endswith(("ed", "ing", "ly"))
