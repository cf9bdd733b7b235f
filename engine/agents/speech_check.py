"""Is a ``say`` or ``emote`` language? (pure, no I/O but reading the shipped word list)

A small model that is asked to speak often writes its prompt back instead: a heading
(``Good moves here.``), a label (``you are Eliza Exits again``), a cue (``~Ash>``),
or letters that are no language (``ampersanag ... эта острона``). A speech line
passes when none of these holds, checked in this order (the first one failing is the
verdict's reason):

- ``empty``: no text at all;
- ``markup``: a character or sign of the prompt's own markup (``#``, ``~``, ``>``,
  ``<``, ``[``, ``]``, ``{``, ``}``, ``|``, ``*``, ``_``, a backtick, ``->``,
  ``---``, a line break), or one of its headings or labels: a heading of two words or
  more anywhere (``good moves here``), a label followed by a colon (``Exits:``) or
  written with its capital in mid-sentence (``Eliza Exits again``);
- ``copied``: ``COPY_WORDS`` words in a row shared with the prompt's instructions
  (``instruction_lines``: who the agent is, the commands, the headings, where it
  stands; not its memories, which hold what others said, nor the example moves,
  which are there to be copied);
- ``not words``: fewer than ``DICTIONARY_SHARE`` of its tokens are English words
  (the shipped list, or a name the prompt's instructions spell with a capital);
- ``repeat``: the same text (case, spacing and end punctuation aside) as one of the
  agent's last ``RECENT_SPEECH`` speech lines.

The dictionary is ``data/words-en.txt.gz``: the 73,515 lower-cased words of Debian's
``wamerican`` package (SCOWL size 50, Kevin Atkinson's permissive licence, public
domain sources; see ``data/words-en.LICENSE``), shipped in the package and read once;
nothing is downloaded.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Final

from engine.agents.prompt import BASIC_COMMANDS

COPY_WORDS: Final = 5
"""Words in a row shared with the prompt's instructions that make a line a copy."""
DICTIONARY_SHARE: Final = 0.8
"""The least share of a line's tokens that must be dictionary words."""
RECENT_SPEECH: Final = 5
"""A line equal to one of the agent's last this-many speech lines is a repeat."""
SPEECH_VERBS: Final = frozenset({"say", "emote"})

MARKUP_SIGNS: Final = ("#", "~", ">", "<", "[", "]", "{", "}", "|", "*", "_", "`", "->", "---")
"""What the prompt's markup is made of: no speech needs them."""
LABELS: Final = ("Exits", "Also here", "BASIC COMMANDS")
"""The labels the prompt's situation and commands lines start with."""
EXTRA_WORDS: Final = frozenset({"hm", "hmm", "mmm", "oh", "ah", "aha", "hey", "yay", "ok", "okay"})
"""Interjections the word list lacks."""

_TOKEN = re.compile(r"\S+")
_EDGE = ".,;:!?\"'()…‘’“”-—"
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SUFFIX = re.compile(r"['’]s$")
_HEADING = re.compile(r"^#+\s*(.*?)\s*(?:\([^)]*\))?\s*$")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


@dataclass(frozen=True, slots=True)
class SpeechVerdict:
    passes: bool
    why: str
    """``passes``, or the first reason it fails: ``empty``, ``markup``, ``copied``,
    ``not words``, ``repeat``."""


PASSES: Final = SpeechVerdict(True, "passes")


@lru_cache(maxsize=1)
def dictionary() -> frozenset[str]:
    """The shipped English word list, lower-cased (read once)."""
    data = resources.files("engine.agents").joinpath("data/words-en.txt.gz").read_bytes()
    return frozenset(gzip.decompress(data).decode("utf-8").split()) | EXTRA_WORDS


def is_dictionary_word(token: str, names: Iterable[str] = ()) -> bool:
    """``token`` (punctuation around it aside) is an English word or one of ``names``."""
    word = token.strip(_EDGE).replace("’", "'")
    if not word or _WORD.fullmatch(word) is None:
        return False
    lower = word.lower()
    words = dictionary()
    return (
        lower in words
        or _SUFFIX.sub("", lower) in words
        or word in names
        or _SUFFIX.sub("", word) in names
    )


def word_share(text: str, names: Iterable[str] = ()) -> float:
    """The share of ``text``'s tokens (punctuation alone is none) that are words."""
    known = frozenset(names)
    tokens = [t for t in _TOKEN.findall(text) if t.strip(_EDGE)]
    if not tokens:
        return 0.0
    return sum(is_dictionary_word(t, known) for t in tokens) / len(tokens)


@dataclass(frozen=True, slots=True)
class Instructions:
    """What a speech line is checked against, taken from the prompt."""

    lines: tuple[str, ...] = ()
    """The instruction text, one line each (``instruction_lines``)."""
    headings: tuple[str, ...] = ()
    """Heading and label texts (``Good moves here``, ``Exits``)."""
    names: frozenset[str] = frozenset()
    """Capitalised words of the instructions (the agent's, the room's, the people's
    names), which count as words."""

    @classmethod
    def of(cls, lines: Iterable[str]) -> Instructions:
        rows = tuple(line.strip() for line in lines if line.strip())
        headings = [m.group(1) for m in map(_HEADING.match, rows) if m and m.group(1)]
        names = {name for row in rows for name in _NAME.findall(row)}
        return cls(rows, tuple(dict.fromkeys([*headings, *LABELS])), frozenset(names))


def prompt_instructions(prompt: str) -> Instructions:
    """``Instructions.of(instruction_lines(prompt))``, kept while the prompt's instruction
    lines stay the same (an agent's turns in one room)."""
    return _instructions(tuple(instruction_lines(prompt)))


@lru_cache(maxsize=256)
def _instructions(lines: tuple[str, ...]) -> Instructions:
    return Instructions.of(lines)


def instruction_lines(prompt: str) -> list[str]:
    """The lines of an agent's prompt (``engine.agents.prompt``) that instruct it: its
    identity, the commands, every heading, and where it stands (``You are ...``,
    ``Exits: ...``); not its memories, summaries, notes or example moves."""
    lines = [row for row in prompt.splitlines() if row.startswith(("#", "You are ", "Exits:"))]
    return [*BASIC_COMMANDS.splitlines(), *lines]


def _words(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def _runs(words: Sequence[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).strip(_EDGE + " ")


def has_markup(text: str, headings: Iterable[str] = LABELS) -> bool:
    """``text`` holds a sign of the prompt's markup, or one of ``headings`` as a heading:
    followed by a colon, a heading of several words anywhere, or one whose capital
    comes in mid-sentence ("you are Eliza Exits again")."""
    if "\n" in text or any(sign in text for sign in MARKUP_SIGNS):
        return True
    return any(pattern.search(text) for pattern in _heading_patterns(tuple(headings)))


@lru_cache(maxsize=64)
def _heading_patterns(headings: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The three ways a heading shows in a line, each one regex for all ``headings``."""
    split = [heading.split() for heading in headings]
    bodies = [r"\s+".join(map(re.escape, words)) for words in split if words]
    several = [r"\s+".join(map(re.escape, words)) for words in split if len(words) > 1]
    if not bodies:
        return ()
    anyone = "|".join(bodies)
    patterns = [
        re.compile(rf"\b(?:{anyone})\s*:", re.IGNORECASE),
        re.compile(rf"[^\W\d_][,;]?\s+(?:{anyone})\b"),
    ]
    if several:
        patterns.append(re.compile(rf"\b(?:{'|'.join(several)})\b", re.IGNORECASE))
    return tuple(patterns)


def copies(text: str, instructions: Sequence[str], size: int = COPY_WORDS) -> bool:
    """``text`` shares ``size`` words in a row with one of the ``instructions`` lines."""
    mine = _runs(_words(text), size)
    return bool(mine) and any(mine & _runs(_words(line), size) for line in instructions)


def check_speech(
    text: str,
    instructions: Instructions | Iterable[str] = (),
    recent: Sequence[str] = (),
) -> SpeechVerdict:
    """Whether the ``say`` or ``emote`` text ``text`` is language, against the prompt's
    ``instructions`` (an ``Instructions``, or its lines) and the agent's ``recent``
    speech lines (oldest first)."""
    if isinstance(instructions, Instructions):
        rules = instructions
    else:
        rules = Instructions.of(instructions)
    if not text.strip(_EDGE + " \t"):
        return SpeechVerdict(False, "empty")
    if has_markup(text, rules.headings):
        return SpeechVerdict(False, "markup")
    if copies(text, rules.lines):
        return SpeechVerdict(False, "copied")
    if word_share(text, rules.names) < DICTIONARY_SHARE:
        return SpeechVerdict(False, "not words")
    line = _normal(text)
    if any(line == _normal(earlier) for earlier in recent[-RECENT_SPEECH:]):
        return SpeechVerdict(False, "repeat")
    return PASSES


def speech_text(line: str) -> tuple[str, str] | None:
    """``(verb, text)`` when the command ``line`` is a ``say`` or ``emote`` (``"hi``
    and ``:waves`` too; any ``| reason`` left out), else None."""
    command = line.partition("|")[0].strip()
    if command[:1] == '"':
        text = command[1:].strip()
        if len(text) > 1 and text.endswith('"') and '"' not in text[:-1]:
            text = text[:-1].rstrip()
        return "say", text
    if command[:1] == ":":
        return "emote", command[1:].strip()
    verb, _, rest = command.partition(" ")
    verb = verb.lower()
    return (verb, rest.strip()) if verb in SPEECH_VERBS else None
