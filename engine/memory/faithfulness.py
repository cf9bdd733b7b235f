"""Does a summary say what its memories say, clause by clause? (pure)

``engine.memory.grounding`` measures a summary as a whole: most of its words are its
memories'. A fluent reply can pass that and still be false: another person did it,
the numbers changed, a dream told as if it happened, a failed attempt told as done,
a "not" added or dropped, an invented scene beside true ones, or the life of someone
else told in the first person. ``unfaithful`` finds these by reading each *clause* of
the summary (a sentence cut at commas, semicolons and the words that join two
events) against the memory lines it matches best (``align``: the most content words
in common):

- *numbers*: every number it names (digits, or number words: "forty-two", "a hundred
  and ten") is a number its memories name;
- *who*: a person named at the start of a clause did what the clause says: most of
  the clause's content words are in the memories that name that person, or next to
  them;
- *failed*: a clause whose best match is a failed attempt (``You tried: ...``) says it
  failed (a negation, "tried", "failed", "could not");
- *dreamed*: a clause whose best match is a dream (``You dream: ...``) says it was one;
- *negation*: a negated clause matches a memory that is negated too (or failed);
- *invented*: no clause of three content words or more has most of them missing
  from every memory;
- *voice*: an English summary does not speak to its agent as "you" instead of "I",
  never names its own agent outside quoted speech, and never says "I am" another.

The clause checks read English (the engine's memory lines are English); a summary in
another language is held to numbers in digits and to grounding as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.memory.wording import STOPWORDS, is_content, sentences, stem, words

ALIGN_AT_LEAST: Final = 2
"""Content words a clause shares with a memory for that memory to be its match."""
WHO_SHARE: Final = 1 / 3
"""The share of a person's clause that the memories about that person must hold."""
INVENTED_WORDS: Final = 3
"""A clause of at least this many content words, most of them in no memory, is invented."""
INVENTED_SHARE: Final = 0.51
INVENTED_MISSING: Final = 3
WHO_TERMS: Final = 3

_CLAUSE_BREAK: Final = re.compile(
    r"\s*[,;()—–]\s*|(?<!\d):\s*|\s+and\s+(?=[A-Z])|"
    r"\s+(?:and then|then|but|so|though|although|while|before|after|"
    r"because|until|when|where|which|who|whereas)\s+",
    re.IGNORECASE,
)
_QUOTED: Final = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|«[^»\n]*»|„[^“”\n]*[“”]")
_FIRST_PERSON: Final = frozenset(
    {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves",
     "i'm", "i'd", "i've", "i'll", "we're", "we'd", "we've", "we'll"}
)  # fmt: skip
_NEGATIONS: Final = frozenset(
    {"not", "no", "never", "nobody", "nothing", "none", "neither", "nor", "without",
     "cannot", "nowhere", "unable", "too", "refuse", "refused", "fail", "failed", "fails",
     "try", "tried", "tries", "trying"}
)  # fmt: skip
"""Words that say something did not happen (or was only attempted)."""
_DREAM: Final = frozenset({"dream", "imagin", "nightmar", "vision", "sleep"})
_FAILED_LINE: Final = re.compile(r"^You tried: .*\n?This failed because:", re.DOTALL)
_DREAM_LINE: Final = re.compile(r"^You dream: ")
_TITLES: Final = frozenset(
    {"mr", "mrs", "ms", "miss", "dr", "old", "young", "captain", "sister", "brother", "father",
     "mother", "sergeant", "commander", "foreman", "granny", "uncle", "aunt", "lady", "lord",
     "sir", "madame", "monsieur", "frau", "herr", "don", "doña", "curator", "professor",
     "stationmaster", "auctioneer", "farmer", "master", "saint", "st"}
)  # fmt: skip
_UNITS: Final = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "dozen": 12,
}  # fmt: skip
_TENS: Final = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES: Final = {"hundred": 100, "thousand": 1000}
_NUMBER_TOKEN: Final = re.compile(r"\d+|[^\W\d_]+")


@dataclass(frozen=True)
class Line:
    """A memory line as the clause checks read it."""

    terms: frozenset[str]
    failed: bool
    dreamed: bool
    negated: bool
    names: frozenset[str]
    """The capitalised words in it (who it is about)."""


def read_lines(sources: Sequence[str], summaries: Sequence[str] = ()) -> list[Line]:
    """The memory lines; a failed attempt is two: what was tried (failed) and why it
    failed (a reason, which a summary may well tell as it is). ``summaries`` (a merge's
    parts) are read sentence by sentence, each about every person it names."""
    lines = []
    for summary in summaries:
        for sentence in sentences(summary):
            found = words(sentence)
            named = {w.strip(".,'’") for w in _capitalised(sentence)}
            lines.append(Line(
                terms=frozenset(_terms(sentence)), failed=False, dreamed=False,
                negated=any(_negation(word) for word in found),
                names=frozenset(named - {"I"}),
            ))  # fmt: skip
    for text in sources:
        failed = _FAILED_LINE.match(text)
        parts = text.split("This failed because:", 1) if failed else [text]
        for index, part in enumerate(parts):
            found = words(part)
            lines.append(Line(
                terms=frozenset(_terms(part)),
                failed=bool(failed) and index == 0,
                dreamed=bool(_DREAM_LINE.match(part)),
                negated=bool(failed) or any(_negation(word) for word in found),
                names=frozenset(_people(part)),
            ))  # fmt: skip
    return lines


_PERSON_AT_START: Final = re.compile(
    r"^((?:(?:[A-Z][a-z]*\.?|[A-Z][\w'’-]*)\s+){0,2}?[A-Z][\w'’-]*)\s+[a-z]"
)


def _people(line: str) -> list[str]:
    """Who a memory line is about: the capitalised words it starts with, when a word
    in lower case follows them (``Granny Sloane says, ...``, ``Mr. Adeyemi arrives``);
    ``You`` is the agent itself."""
    found = _PERSON_AT_START.match(line)
    if found is None:
        return []
    named = [w.strip(".,'’") for w in found.group(1).split()]
    return [w for w in named if w.lower() not in _TITLES and w not in ("You", "The", "A", "An")]


def _terms(text: str) -> list[str]:
    return [stem(word) for word in words(text) if is_content(word)]


def _negation(word: str) -> bool:
    return word.endswith("n't") or word in _NEGATIONS


def _capitalised(text: str) -> list[str]:
    return [w for w in re.findall(r"[^\W\d_][\w'’-]*", text) if w[:1].isupper()]


def number_values(text: str, *, words_too: bool = True) -> set[int]:
    """The numbers ``text`` names: runs of digits, and (``words_too``) English number
    words ("forty-two", "a hundred and ten", "two, three, four" are three); "one" alone
    is no number (it is a word: "one of them")."""
    found: set[int] = set()
    current: int | None = None
    last = ""
    """What the number being read ended with: a unit, a ten or a scale."""
    previous = ""

    def flush() -> None:
        nonlocal current, last
        if current is not None:
            found.add(current)
        current, last = None, ""

    for token in _NUMBER_TOKEN.findall(text.lower()):
        if token.isdigit():
            flush()
            found.add(int(token))
        elif not words_too:
            continue
        elif token in _UNITS or (token == "one" and last in ("ten", "scale")):
            value = _UNITS.get(token, 1)
            if current is None or last == "unit":
                flush()
                current = value
            else:
                current += value
            last = "unit"
        elif token in _TENS:
            if current is not None and last == "scale":
                current += _TENS[token]
            else:
                flush()
                current = _TENS[token]
            last = "ten"
        elif token in _SCALES and (current is not None or previous in ("a", "one")):
            current = (current or 1) * _SCALES[token]
            last = "scale"
        elif token == "and" and last == "scale":
            pass
        else:
            flush()
        previous = token
    flush()
    return found


def clauses(text: str) -> list[str]:
    """``text``'s clauses: sentences cut at commas, semicolons and joining words."""
    return [part for sentence in sentences(text) for part in _CLAUSE_BREAK.split(sentence)
            if part and part.strip()]  # fmt: skip


def align(clause_terms: set[str], lines: Sequence[Line]) -> Line | None:
    """The memory line sharing the most content words with a clause (at least
    ``ALIGN_AT_LEAST``; on a tie, the first that did not fail, else the first)."""
    best: Line | None = None
    shared = ALIGN_AT_LEAST - 1
    for line in lines:
        count = len(clause_terms & line.terms)
        if count > shared or (count == shared and best is not None and best.failed
                              and not line.failed):  # fmt: skip
            best, shared = line, count
    return best


def unfaithful(
    summary: str, sources: Sequence[str], names: Sequence[str] = (), *, agent: str = "",
    english: bool = True, summaries: Sequence[str] = (),
) -> str | None:  # fmt: skip
    """Why ``summary`` says what its memories ``sources`` (and, for a merge, the two
    ``summaries`` it merges) do not (None: it does not), ``names`` being what else it may
    name, ``agent`` whose memories they are."""
    said = [*sources, *summaries, *names]
    wrong = number_values(summary, words_too=english) - number_values(
        " ".join(said), words_too=english
    )
    if wrong:
        return f"names numbers its memories do not ({', '.join(map(str, sorted(wrong)[:3]))})"
    if not english:
        return None
    unquoted = _QUOTED.sub(" ", summary)
    voice = set(words(unquoted))
    if not _FIRST_PERSON & voice and {"you", "your", "you're", "you've", "you'd"} & voice:
        return "speaks to its agent as 'you', not in the first person"
    own = _own_names(agent, names)
    if own & set(_capitalised(unquoted)):
        return f"speaks of {agent} in the third person"
    posing = _posing(unquoted, agent, names) if agent else None
    if posing:
        return f"speaks as {posing}, not as {agent}"
    failed = _failed_as_done(unquoted, sources)
    if failed:
        return failed
    lines = read_lines(sources, summaries)
    known = set().union(*(line.terms for line in lines), *(_terms(n) for n in names))
    for clause in clauses(unquoted):
        problem = _clause_problem(clause, lines, known)
        if problem:
            return problem
    return _who(unquoted, lines)


def _words_of(text: str) -> set[str]:
    """Stems of every word of two letters or more but stopwords (a command's ``go``)."""
    return {stem(word) for word in words(text) if len(word) > 1 and word not in STOPWORDS}


def _failed_as_done(text: str, sources: Sequence[str]) -> str | None:
    """A clause that tells, unnegated, an attempt the memories say failed (every word of
    its command: ``You tried: sound foghorn``), and that never succeeded."""
    tried = []
    done: list[set[str]] = []
    for source in sources:
        if _FAILED_LINE.match(source):
            command = source.split("\n", 1)[0].removeprefix("You tried:")
            tried.append(_words_of(command))
        else:
            done.append(_words_of(source))
    attempts = [c for c in tried if c and not any(c <= line for line in done)]
    if not attempts:
        return None
    for clause in clauses(text):
        found = words(clause)
        mine = {stem(word) for word in found}
        if any(_negation(word) for word in found):
            continue
        if any(command <= mine for command in attempts):
            return f"tells a failed attempt as done ({clause.strip()!r})"
    return None


def _own_names(agent: str, names: Sequence[str]) -> set[str]:
    """The words of ``agent``'s name no other name has (``Cale`` of ``Brother Cale``
    beside ``Brother Anselm``); ``names`` may list the agent itself."""
    others = {w for name in names if name.strip() != agent.strip() for w in _capitalised(name)}
    return {w for w in _capitalised(agent) if w not in others and w.lower() not in _TITLES}


_I_AM: Final = re.compile(r"\bI(?:['’]m| am)\s+((?:[A-Z][\w'’-]*\s*){1,3})")


def _posing(text: str, agent: str, names: Sequence[str]) -> str | None:
    """Another character's name the summary says "I am" (``I am Ash`` in Wren's)."""
    own = set(_capitalised(agent))
    people = {w for name in names for w in _capitalised(name)} - own
    for match in _I_AM.finditer(text):
        claimed = [w.strip(".,;:!?") for w in match.group(1).split()]
        if claimed and claimed[0] in people and claimed[0] not in own:
            return claimed[0]
    return None


def _clause_problem(clause: str, lines: Sequence[Line], known: set[str]) -> str | None:
    found = words(clause)
    terms = {stem(word) for word in found if is_content(word)}
    missing = [term for term in terms if term not in known]
    if (
        len(terms) >= INVENTED_WORDS
        and len(missing) >= INVENTED_SHARE * len(terms)
        and len(missing) >= INVENTED_MISSING
    ):
        return f"tells what no memory holds ({clause.strip()!r})"
    negated = any(_negation(word) for word in found)
    line = align(terms, lines)
    if line is None:
        return None
    if line.dreamed and not {stem(w) for w in found} & _DREAM:
        return f"tells a dream as if it happened ({clause.strip()!r})"
    if line.failed and not negated:
        return f"tells a failed attempt as done ({clause.strip()!r})"
    return None


_PREPOSITIONS: Final = frozenset(
    {"in", "at", "on", "to", "from", "with", "by", "for", "of", "into", "near", "past",
     "behind", "beside", "under", "over", "through", "across", "toward", "towards"}
)  # fmt: skip
SUBJECT_WITHIN: Final = 5
"""A clause's subject is among its first this many words."""


_LEADING: Final = frozenset(
    {"and", "later", "then", "also", "meanwhile", "afterwards", "finally", "soon", "now",
     "today", "tonight", "tomorrow", "yesterday", "once", "next", "first", "here", "there"}
)  # fmt: skip
"""Words a clause may start with before its subject."""


def _subject(tokens: Sequence[str], people: set[str]) -> str | None:
    """The person a clause starts by naming as its subject: its first name after
    titles, a few leading words (``_LEADING``) and a place it starts with (``In
    Fishmarket Square Lidia told me``); not one owning something (``Rao's scrubber``),
    nor one after a verb (``will see Mr. Pell``: done to, not doing)."""
    in_place = False
    for token in tokens[:SUBJECT_WITHIN]:
        bare = token.strip('.,;:!?"“”')
        lower = bare.lower()
        if not bare or lower in _TITLES:
            continue
        if lower in _PREPOSITIONS:
            in_place = True
            continue
        if bare[:1].isupper():
            if in_place or bare.endswith(("'s", "’s")):
                continue  # a place's name, or an owner
            return bare if bare in people and bare != "I" else None
        if in_place and lower in ("the", "a", "an", "my", "his", "her", "their", "our"):
            continue
        if in_place and tokens.index(token) > 0:
            in_place = False
            continue
        if lower not in _LEADING:
            return None
    return None


def _who(text: str, lines: Sequence[Line]) -> str | None:
    """A person named at a clause's start did what the clause says."""
    people = {name for line in lines for name in line.names if name.lower() not in STOPWORDS}
    for clause in clauses(text):
        subject = _subject(clause.split(), people)
        if subject is None:
            continue
        who = {subject}
        terms = {stem(w) for w in words(clause) if is_content(w)} - {
            stem(w) for name in who for w in words(name)
        }  # fmt: skip
        if len(terms) < WHO_TERMS:
            continue
        near: set[str] = set()
        for index, line in enumerate(lines):
            if line.names & who:
                for other in lines[max(0, index - 1) : index + 2]:
                    near |= other.terms
        if len(terms & near) < WHO_SHARE * len(terms) - 1e-9:
            return (
                f"says {', '.join(sorted(who))} did what the memories do not ({clause.strip()!r})"
            )
    return None
