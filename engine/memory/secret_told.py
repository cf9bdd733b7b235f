"""Secrets told in words (pure), for ``secrets.redact`` (issue 44): the values people
say near a credential word, in passing, in any order.

Within its clause (a full stop, a line's end or a semicolon ends one), up to ``REACH``
words after a credential word (password and its misspellings, pw, pass as a label, PIN,
code, combination, key, token, login, Wi-Fi, CVV, and the password and code words of
other languages), or before a password word ("tr0ut&barley is the password", "use
f1ddlestick as the password"), a word that reads as a value
(``secret_shapes.value_like``: a digit and a letter, a letter and a symbol, a case
change inside it) or digits. Between the word and its value may stand glue (articles,
pronouns, prepositions, "just", "oh") and up to three words saying what it is for ("the
key *for the inn* is X"), but after those a link must come (is, 's, takes, opens, a
colon, a dash: "lautet", "est", "é" too). Digits that count or date are not a code:
after "at", "since" ("opens at 0600"), a year after "in" or "from", before the plural
they count ("12 years", "3 of 5"); a lone number of one or two digits is not one
("Key 3"). A lock (door, gate, safe, chest, alarm ...) makes digits a code only in a
clause that opens it ("the strongbox opens on 17-5-44") or as a label ("back door:
8830#"). A plain word is a value only right after a password word and a link ("the
password? it's velvetfox"), or after a label ("recovery phrase for the wallet: timber
orbit ..."); a passphrase's further words go with it. Quoted values after a password
word go whole, each one a link leads to ("isn't 'loaf', it's 'breadcrumb'"). A question
about a credential is answered in the words after its question mark ("the door code
again? nvm got it, 6283"), unless it asks for a name ("what's the wifi called?").
"The code of conduct", "error code 404", "the code postal", "a pin on the map", "the
Wi-Fi name is X" name no secret.

``told_spans`` gives ``(start, end)`` spans of the values alone; with ``assignments_only``
(a world that allows fiction) only a value right after a word and ``=`` or ``:``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from engine.memory.secret_shapes import DATE, MEASURE, PLACEHOLDER, Span, value_like

REACH: Final = 8
"""Words after (or before) a credential word in which its value may be told."""

TRIGGERS: Final[tuple[str, ...]] = (
    "pass", "pw", "pssw", "phrase", "word", "credential", "creds", "contrase", "clave",
    "mot de passe", "mot-de-passe", "kennwort", "wachtwoord", "senha", "parola", "has",
    "senord", "adgangskode", "salasana", "jelsz", "code", "digo", "codice", "kod", "pin",
    "combination", "combo", "keypad", "key", "token", "secret", "login", "log in", "log-in",
    "sign", "wifi", "wi-fi", "wlan", "cvv", "cvc", "puk", "otp", *"0123456789",
)  # fmt: skip
"""Every span this module finds comes with one of these (lower case)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PASSWORD_WORDS: Final = (
    r"pa?s{1,2}[ -]?w(?:or|ro|o|r)?d|passcode|pass[ -]?phrase|key[ -]?phrase|pw"
    r"|pass(?=[ \t]*[=:]|[ \t]+(?=\S*[A-Za-z])\S*[\d!@#$%^&*])"
    r"|watchword|(?:secret|magic|code)[ -]word|phrase|credentials|creds"
    r"|contrase[ñn]a|clave|mot[ -]de[ -]passe|passwort|kennwort|wachtwoord|senha"
    r"|parola(?:[ -]d'ordine)?|has[lł]o|l[öo]senord(?:et)?|adgangskode|salasana|jelsz[óo]"
)
"""Words whose value may be a plain word (``swordfish``); other languages' too, and
"password" misspelt by a letter ("pasword", "passwrd", "pssword"); "pass" as a label
("pass=x", "pass: x") or before a value with a digit or a symbol ("pass Grist&Flour9"). Plurals
name several ("passwords: 2" is a count), so only the singular is one."""
_CODE_WORDS: Final = (
    r"code|pin(?:[ -]?(?:number|code))?|combination|combo|keypad|key|token|secret"
    r"|login|log[ -]?in|sign[ -]?in|wi-?fi|wlan|cvv|cvc|puk|otp|c[oó]digo|codice|kod(?:en)?"
)
_LOCK_WORDS: Final = (
    r"doors?|gates?|safes?|locks?|lockbox|strongbox|strongroom|storeroom|cashbox|box"
    r"|chests?|vaults?|lockers?|padlock|hatch|pad|dial|alarm"
)
_OPENING: Final = re.compile(
    r"\b(?:open|opens|opened|opening|unlock\w*|enter|entering|takes|take|need|needs"
    r"|punch|hit|tap|dial|type|wants|accepts)\b",
    re.IGNORECASE,
)
_NOT_A_SECRET_CODE: Final = re.compile(
    r"(?:error|status|exit|return|area|zip|post|postal|country|dress|building|morse|source|bar"
    r"|qr|penal|civil|tax|colou?r|hex)[ -]code$",
    re.IGNORECASE,
)
"""A code that names a system of rules or numbers, not a secret ("error code 404")."""
_WORD = re.compile(
    rf"(?<![\w/.:=@-])(?:(?P<password>{_PASSWORD_WORDS})|(?P<code>{_CODE_WORDS})"
    rf"|(?P<lock>{_LOCK_WORDS}))(?![\w-])",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[^\s,;()<>\"“”]+")
_CLAUSE_END = re.compile(
    r"[.!](?=\s+[A-Z\d\"'“‘(]|\s*$)|\n|;|(?<=[a-z0-9])\s+(?=(?:We|The|She|He|They|It|You|This|That|There|Then"
    r"|But|And)\s)"
)
"""Where a clause ends: a full stop before a capital (not "Summer2024! is"), a line's
end, a semicolon, or a new sentence begun
without a stop ("... in my heart We passed ...")."""
_COPULA: Final = _words(
    "is was 's are were be it's its it is: = - — – ? ?? oh then es est ist é è er är jest"
)
_DESCRIBING: Final = _words("""
    a an the this that these those it its my your his her our their i you he she we they
    me him them us not no never now still also just only in on at under behind inside into
    from by near with without of for to and or but so if when where which who what why how
    written hidden kept stored somewhere something nothing anything lost forgotten unknown
    known changed set too very same different new old here there one some any all every
    safe secret wrong right correct long short strong weak easy hard simple private shared
    manager manager's rollout bearer basic digest""")


def _digits(token: str) -> bool:
    """Digits as a code is told: ``4471``, ``*7731#``, ``17-5-44``, ``four-one-one-nine``."""
    if DATE.fullmatch(token):
        return False  # "2026-12-07": a date
    return bool(_DIGITS.fullmatch(token) or _SPELLED.fullmatch(token.lower()))


_DIGITS = re.compile(r"[*#]*\d[\d-]*[*#]*")
_NUMBER_WORD = (
    r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety)"
)
_SPELLED = re.compile(rf"{_NUMBER_WORD}(?:-{_NUMBER_WORD})*")


def _digit_count(token: str) -> int:
    return sum(c.isdigit() for c in token) or len(token.split("-"))


def told_spans(text: str, *, assignments_only: bool = False) -> list[Span]:
    """Values told near a credential word (see the module); ``assignments_only``: only
    those right after a word and ``=`` or ``:`` (a credential even in a story)."""
    found: list[Span] = []
    for word in _WORD.finditer(text):
        kind = word.lastgroup or "code"
        before = text[max(0, word.start() - 24) : word.end()]
        if kind == "code" and (_NOT_A_SECRET_CODE.search(before)
                               or _peek(text, word.end()) in (" of", " postal")):  # fmt: skip
            continue  # "the code of conduct", "the combination of flour and water"
        clause_end = _clause_end(text, word.end())
        after = list(_tokens(text, word.end(), clause_end))[: REACH + 1]
        if assignments_only:
            sep = text[word.end() : word.end() + 3].lstrip()
            if sep[:1] in ("=", ":") and after:
                token, span = after[0]
                if token not in ("=", ":") and (value_like(token) or _digits(token)):
                    found.append(span)
            continue
        found += _after(kind, after, text, word.start(), clause_end)
        found += _answer(text, word.end())
        if kind == "password" or _LOGIN.fullmatch(word[0]):
            found += _before(text, word.start(), plain=kind == "password")
        elif _BACKWARD_CODES.fullmatch(word[0]) or (
            kind == "lock" and _OPENING.search(_clause(text, word.start(), clause_end))
        ):
            found += _before(text, word.start(), digits=True)
    return found


def _answer(text: str, at: int) -> list[Span]:
    """A question about a credential and its answer in the next words ("the door code
    again? nvm got it, 6283", "Q: password for the archive?\nA: inkwell-fennel-stag"):
    after the question mark, up to ``REACH`` words of the clause that follows, each that
    looks like a value (digits: three or more)."""
    question = text.find("?", at, min(len(text), at + 60))
    if question < 0 or "\n" in text[at:question] or _clause_end(text, at) < question:
        return []
    if _NAMING & {w.lower() for w in re.findall(r"\w+", text[at:question])}:
        return []  # "what's the wifi called? TavernGuest": a name, not a secret
    end = _clause_end(text, question + 1)
    if not text[question + 1 : end].strip():
        end = _clause_end(text, end + 1)  # the answer on the next line
    found = []
    tokens = list(_tokens(text, question + 1, end))[:REACH]
    for position, (token, span) in enumerate(tokens):
        value = token.strip("'‘’`«»").rstrip(".!?:,")
        following = tokens[position + 1][0] if position + 1 < len(tokens) else ""
        if _a_quantity(value, tokens[position - 1][0] if position else "", following):
            continue  # "It's 200 lines."
        if "redacted" in value or PLACEHOLDER.fullmatch(value) or MEASURE.fullmatch(value):
            continue
        words = value.split("-")
        if (value_like(value) or (len(words) >= 3 and all(w.isalpha() for w in words))
                or (_digits(value) and _digit_count(value) >= 3)):  # fmt: skip
            found.append(_trimmed(span, text))
    return found


def _peek(text: str, at: int) -> str:
    """The word after ``at`` ("code *of* conduct")."""
    match = re.match(r"[ \t]+(\w+)", text[at : at + 24])
    return f" {match[1]}" if match else ""


def _after(kind: str, after: list[tuple[str, Span]], text: str, start: int,
           clause_end: int) -> list[Span]:  # fmt: skip
    opened = (
        kind != "lock"
        or bool(_OPENING.search(_clause(text, start, clause_end)))
        or (bool(after) and after[0][0].lower().replace("’", "'") in ("'s", "is", "was", ":"))
    )  # "the door's 8093", "door is 4417"
    if kind == "password":
        quoted = _quoted(text, after[0][1][0] if after else start, start, clause_end)
        if quoted:
            return quoted
    phrase = kind == "password" and _phrase_word(text, start)
    found: list[Span] = []
    counted: list[str] = []
    objects, linked, previous = 0, True, ""
    for position, (token, span) in enumerate(after):
        bare = token.strip("'‘’`«»")
        word = token.rstrip(".!?:=").lower().replace("’", "'")
        value = bare.rstrip(".!?:")
        following = after[position + 1][0] if position + 1 < len(after) else ""
        if "redacted" in bare or PLACEHOLDER.fullmatch(bare):
            previous = token
            continue
        if value_like(value) or _digits(value):
            if not linked or _a_quantity(value, previous, following):
                break  # a value-looking word after other words, or a count: not it
            if opened or previous[-1:] in (":", "=") or (position == 0 and _labelled(text, start)):
                found.append(_trimmed(span, text))
                counted.append(value)
        elif (
            kind == "password"
            and _plain_value(bare)
            and (
                (not objects and ((phrase and position == 0) or (previous and _is_link(previous))))
                or previous[-1:] == ":"  # "Recovery phrase for the guild wallet: timber orbit ..."
            )
        ):
            found.append(_trimmed(span, text))
            if phrase:
                found += _rest_of_phrase(after[position + 1 :], text)
            break
        elif _is_link(token) or word in _GLUE:
            linked = linked or _is_link(token)
        elif word in _NAMING:
            break  # "the Wi-Fi *name* is TavernGuest": what is named is not a secret
        else:
            objects += 1  # what the word is for: "the key *for the inn* is X"
            linked = token[-1:] in "?:="
            if objects > 3:
                break
        previous = token
    if len(counted) == 1 and _digits(counted[0]) and _digit_count(counted[0]) < 3:
        return []  # "Key 3", "Pin 4 on the connector": a number, not a code
    return found


def _is_link(token: str) -> bool:
    word = token.rstrip(".!=").lower().replace("’", "'")
    return word in _LINKS or not any(c.isalnum() for c in token) or token[-1:] in ":="


def _labelled(text: str, start: int) -> bool:
    """Whether the word at ``start`` is a label: "back door: 8830#"."""
    match = _WORD.match(text, start)
    return match is not None and text[match.end() : match.end() + 2].lstrip()[:1] == ":"


def _a_quantity(value: str, previous: str, following: str) -> bool:
    """Digits that count or date rather than open: after "at", "in", "since" ... ("opens
    at 0600"), or before the plural they count ("12 years", "300 lines")."""
    if not _digits(value):
        return False
    if previous.lower() in _TIME_WORDS:
        return True
    if previous.lower() in _YEAR_WORDS and re.fullmatch(r"1[0-9]{3}|20[0-9]{2}", value):
        return True  # "changed in 2019"
    word = following.lower()
    if word == "of":
        return True  # "token 3 of 5"
    return len(word) > 3 and word.isalpha() and word.endswith("s") \
        and word not in _GLUE | _LINKS | _DESCRIBING  # fmt: skip


_BACKWARD_CODES: Final = re.compile(
    r"code|pin(?:[ -](?:number|code))?|combination|combo|keypad", re.IGNORECASE
)
"""Code words whose digits may come before them ("enter 0614 on the keypad")."""
_PREPOSITIONS: Final = _words("to for of on at in into from by with near under")
_GLUE: Final = _PREPOSITIONS | _words("""
    a an the my your his her our their its this that i you we they he she it just still now
    actually simply always really honestly oh then also again and or as de del la le du des
    da do für den die das der di van het till för dla al el il lo een""")
"""Words between a credential word and its value that are not what it is for."""
_LINKS: Final = _words("""
    is was 's are were be been being it's its that's what's es est ist é è er är jest
    takes take opens open enter hit punch tap type use need needs try dial press - — – ? ?? : =
    / equals reads lautet heißt wants accepts uses requires → ->""")
"""Words after which a value may follow the words saying what it is for."""
_TIME_WORDS: Final = _words("at since until till before after around about")
_YEAR_WORDS: Final = _words("in by from")
_NAMING: Final = _words("name names called username user id network ssid")


_QUOTED = re.compile(r"(?<!\w)[\"“'‘](?P<value>[^\"”'’\n]{1,120})[\"”'’](?!\w)")


def _quoted(text: str, begin: int, start: int, end: int) -> list[Span]:
    """The quoted values after a password word: the first within ``REACH`` words, and each
    next one a link word leads to ("the password isn't 'loaf', it's 'breadcrumb'")."""
    found: list[Span] = []
    for match in _QUOTED.finditer(text, begin, end):
        if not found and len(text[start : match.start()].split()) > REACH:
            break
        if re.match(r"\s*:", text[match.end() :]):
            break  # '"db_password": "x"': a key, whose value the assignment takes
        gap = text[found[-1][1] + 1 : match.start()] if found else ""
        if found and not any(_is_link(w) and w[:1].isalpha() for w in gap.split()):
            break
        found.append(match.span("value"))
    return found


def _phrase_word(text: str, start: int) -> bool:
    """Whether the credential word at ``start`` names a phrase (passphrase, key phrase)."""
    match = _WORD.match(text, start)
    return match is not None and "phrase" in match[0].lower()


def _rest_of_phrase(rest: list[tuple[str, Span]], text: str) -> list[Span]:
    """A passphrase's further words, up to a word that describes or ends it."""
    found = []
    for token, span in rest:
        word = token.rstrip(".!?:,").lower()
        if word in _DESCRIBING or not (word.isalnum()):
            break
        found.append(_trimmed(span, text))
        if token[-1:] in ".!?,":
            break
    return found


def _plain_value(token: str) -> bool:
    """A plain word that may be a password ("the password? it's velvetfox"): letters,
    not a word that describes or links."""
    word = token.rstrip(".!?:").lower()
    if _dashed(word):
        return True  # "key phrase: lantern-orchard-velvet-nine"
    if not word.isalpha() or word in _DESCRIBING | _COPULA | _GLUE:
        return False
    return not word.endswith(("ed", "ing", "ly"))


def _before(text: str, start: int, *, digits: bool = False, plain: bool = False) -> list[Span]:
    """A value a clause names before its password or login word ("X is the password",
    "use rainbarrel77 to log in"); with ``plain``, a quoted value, a phrase of words
    joined by dashes, or a plain word right before "is the password" too; with
    ``digits``, the digits before a code or a lock it opens ("enter 0614 on the keypad",
    "you'll need 4410 to open the safe")."""
    begin = max(_clause_start(text, start), start - 80)
    if plain:
        quoted = list(_QUOTED.finditer(text, begin, start))
        if quoted and not re.match(r"\s*:", text[quoted[-1].end() :]):
            return [quoted[-1].span("value")]  # 'say "the river forgets" ... pass phrase'
        told = _PLAIN_BEFORE.search(text, begin, start)
        if told is not None and _plain_value(told["value"]):
            return [told.span("value")]  # "crowfeather is the password"
    tokens = list(_tokens(text, begin, start))[-REACH:]
    labels = [k for k, (token, _) in enumerate(tokens) if token[-1:] in (":", "=")]
    if labels:  # another field and its value ("passwords: 2 The combination ...")
        tokens = tokens[labels[-1] + 2 :]
    found: list[Span] = []
    objects = 0
    for token, span in reversed(tokens):
        bare = token.strip("'‘’`").rstrip(".!?:,")
        word = bare.lower()
        if "redacted" in bare:
            continue
        if _digits(bare) if digits else value_like(bare) or (plain and _dashed(bare)):
            found.append(_trimmed(span, text))
        elif word in _GLUE or word in _LINKS or not word:
            continue
        else:
            objects += 1  # "enter 0614 on the *gatehouse* keypad"
            if objects > (2 if digits else 0):
                break
    return found


_PLAIN_BEFORE = re.compile(
    r"(?<![\w'-])(?P<value>[A-Za-z]{3,})\s+(?:is|was)\s+(?:still\s+)?(?:the|my|our|your|his|her"
    r"|their|its)\s+(?:\w+\s+)?$"
)
_LOGIN = re.compile(r"login|log[ -]?in|sign[ -]?in", re.IGNORECASE)


def _dashed(token: str) -> bool:
    """Three words or more joined by dashes: a passphrase ("lantern-orchard-velvet")."""
    parts = token.split("-")
    return len(parts) >= 3 and all(part.isalpha() for part in parts)


def _tokens(text: str, start: int, end: int) -> Iterable[tuple[str, Span]]:
    for match in _TOKEN.finditer(text, start, end):
        yield match[0], match.span()


def _trimmed(span: Span, text: str) -> Span:
    start, end = span
    while end > start and text[end - 1] in ".!?:,'’`":
        end -= 1
    while start < end and text[start] in "'‘`":
        start += 1
    return start, end


CLAUSE_MOST: Final = 400
"""Characters a clause is looked for in, either way from a word: a long text without a
stop costs each credential word in it this much, never the whole text."""


def _clause_end(text: str, at: int) -> int:
    limit = min(len(text), at + CLAUSE_MOST)
    match = _CLAUSE_END.search(text, at, limit)
    return match.start() if match else limit


def _clause_start(text: str, at: int) -> int:
    begin = max(0, at - CLAUSE_MOST)
    starts = [m.end() for m in _CLAUSE_END.finditer(text, begin, at)]
    return starts[-1] if starts else begin


def _clause(text: str, at: int, end: int) -> str:
    return text[_clause_start(text, at) : end]
