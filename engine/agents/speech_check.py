"""Is a ``say`` or ``emote`` speech? (pure, no I/O but reading the shipped word list)

A model that is asked to speak sometimes writes its prompt back instead: a heading
(``Good moves here.``), a label (``you are Eliza Exits again``), a cue (``~Ash>``), a
chat template's token (``<|im_end|>``, ``Assistant:``); the tiny embedded model
(SmolLM2-135M) also writes letters that are no language (``ampersanag ... эта
острона``) or one word over and over. A capable model, or a person, speaks any
language, with names, codes, slang, emoji and chat signs (``*sigh*``, ``<3``, ``room
#4``, ``B-12``, ``->``, ``~maybe~``, ``x_x``), and all of that passes. A speech line
passes when none of these holds, checked in this order (the first one failing is the
verdict's reason):

- ``empty``: no letter, digit or symbol (an emoji) at all: ``?!..``, ``( ) [ ]``;
- ``markup``: the prompt's own markup or a chat template's (``MARKUP``: a line break;
  a ``#`` heading at the start; a cue ``~Name>``; a ``>`` at the start; a tag or
  placeholder, ``<exit>``, ``</s>``, ``<|im_end|>``, ``[INST]``, ``[topic]``; the
  commands list's ``| look`` or ``| reason``; the memory fence ``---`` (or ``===``)
  at either end; a code fence; a bullet or bold label at the start, ``* item``,
  ``**Notes:**``; a JSON reply ``{"``; a role label at the start, ``Assistant:``,
  ``Human:``), or one of the prompt's headings or labels: followed by a colon
  (``Exits:``), a heading of two words or more opening the line (``Good moves here.``),
  or one written with its capital in mid-sentence (``Eliza Exits again``). Chat signs
  elsewhere in a line (``*``, ``_``, ``~``, ``|``, ``->``, ``{}``, a backtick, ``#4``,
  ``3 > 2``, ``<3``) are not markup;
- ``copied``: ``COPY_WORDS`` words in a row shared with the prompt's instructions
  (``instruction_lines``: who the agent is, the commands, the headings, where it
  stands; not its memories, which hold what others said, nor the example moves,
  which are there to be copied);
- ``not words``, only with ``noise_check``: fewer than ``DICTIONARY_SHARE`` of its
  tokens are English words (the shipped list, a name the prompt's instructions spell
  with a capital, or emoji);
- ``stutter``, only with ``noise_check``: one word ``STUTTER`` times or more in a row
  (``the the the the the``);
- ``repeat``: the same text (case, spacing and end punctuation aside) as one of the
  agent's last ``RECENT_SPEECH`` speech lines.

``noise_check`` is for a backend known to write noise, and only that one: the
embedded model (the thinker is told so when it is made, ``Thinker.noise_check`` from
``Simulation.embedded``). The dictionary is English, so it would fail good speech in
any other language, and many good English lines with slang, codes or emoji; every
other backend has the checks that pass good speech in any language.

Measured on ``tests/agents/speech_corpus.json`` (an independent corpus of 388 good
lines and 108 noise lines, in 40 and 16 kinds, written without reading this code;
tuned on its 260 + 76 training lines only, then measured once on the 128 + 32
held-out ones, ``tests/agents/test_speech_corpus.py``):

- every backend: good lines rejected 0 of 128 (0.0%; training 0 of 260), noise
  rejected 17 of 32 (53.1%; training 39 of 76, 51.3%);
- ``noise_check`` (the embedded model): noise rejected 27 of 32 (84.4%; training 59 of
  76, 77.6%), good lines rejected 73 of 128 (57.0%; training 141 of 260, 54.2%, of
  which 117 in other languages than English, the rest names, slang and codes).

(The check before, which applied the dictionary to every backend and took any ``#``,
``*``, ``_``, ``|``, ``->`` ... for markup, rejected 77 of the 128 held-out good lines,
60.2%, and 25 of the 32 noise lines, 78.1%.) What every backend lets through is noise
made of words: an instruction of some other prompt, word salad, a status line.

The dictionary is ``data/words-en.txt.gz``: the 73,515 lower-cased words of Debian's
``wamerican`` package (SCOWL size 50, Kevin Atkinson's permissive licence, public
domain sources; see ``data/words-en.LICENSE``), shipped in the package and read once;
nothing is downloaded.
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Final

from engine.agents.prompt import BASIC_COMMANDS, FENCE

COPY_WORDS: Final = 5
"""Words in a row shared with the prompt's instructions that make a line a copy."""
DICTIONARY_SHARE: Final = 0.8
"""The least share of a line's tokens that must be dictionary words (``noise_check``)."""
STUTTER: Final = 5
"""One word this many times in a row is noise (``noise_check``)."""
RECENT_SPEECH: Final = 5
"""A line equal to one of the agent's last this-many speech lines is a repeat."""
SPEECH_VERBS: Final = frozenset({"say", "emote"})
REASONS: Final = frozenset({"empty", "markup", "copied", "not words", "stutter", "repeat"})
"""What a failing verdict's ``why`` may be."""

_VERBS = sorted(set(re.findall(r"[:|]\s*([a-z]+)", BASIC_COMMANDS)))
"""The verbs of the prompt's commands list (``look | go <exit> ...``) and its ``| reason``."""
_SLOTS = re.findall(r"\[[^\]]+\]", BASIC_COMMANDS)
"""The commands list's bracketed slots (``[topic]``); its ``<exit>`` are tags."""
_RULE = re.escape(FENCE[0]) + "{3,}|={3,}"

MARKUP: Final[tuple[tuple[str, str], ...]] = (
    ("a line break", r"[\n\r\u2028\u2029]"),
    ("a heading", r"^\s*(?:#{2,}|#\s)"),
    ("a cue", r"~\s*[^\W\d_][^\s~<>]*(?:\s[^\W\d_][^\s~<>]*){0,3}\s*>"),
    ("a cue's end", r"^\s*>"),
    ("a tag or placeholder", r"</?[A-Za-z|!/][^<>\n]{0,40}>"),
    ("a template's bracket", r"\[/?INST\]|\[/[^\]\s]+\]"),
    ("a command slot", "|".join(map(re.escape, _SLOTS))),
    ("the commands list", rf"(?i:\|\s*(?:{'|'.join(_VERBS)})\b)"),
    ("the memory fence", rf"^\s*(?:{_RULE})|(?:{_RULE})\s*$"),
    ("a code fence", r"```"),
    ("a bullet", r"^\s*[*•]\s"),
    ("a bold label", r"\*\*[^*\n]*:\s*\*\*"),
    ("a JSON reply", r'^\s*[\[{]\s*"'),
    ("a role label", r"(?i:^\W*(?:assistant|human|system|user|ai|bot|q|a)\s*:(?:\s|$))"),
)
"""What marks a line as the prompt's markup (or a chat template's), by name; no speech
needs them where they are looked for."""
LABELS: Final = ("Exits", "Also here", "BASIC COMMANDS")
"""The labels the prompt's situation and commands lines start with."""
EXTRA_WORDS: Final = frozenset({"hm", "hmm", "mmm", "oh", "ah", "aha", "hey", "yay", "ok", "okay"})
"""Interjections the word list lacks."""

_MARKUP = re.compile("|".join(f"(?:{pattern})" for _, pattern in MARKUP))
_TOKEN = re.compile(r"\S+")
_EDGE = ".,;:!?\"'()…‘’“”-—"
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_SUFFIX = re.compile(r"['’]s$")
_HEADING = re.compile(r"^#+\s*(.*?)\s*(?:\([^)]*\))?\s*$")
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
_EMOJI_KINDS = frozenset({"So", "Sk", "Mn", "Cf"})
"""Unicode categories of an emoji and what joins or modifies it."""


@dataclass(frozen=True, slots=True)
class SpeechVerdict:
    passes: bool
    why: str
    """``passes``, or the first reason it fails (``REASONS``): ``empty``, ``markup``,
    ``copied``, ``not words``, ``stutter``, ``repeat``."""


PASSES: Final = SpeechVerdict(True, "passes")


@lru_cache(maxsize=1)
def dictionary() -> frozenset[str]:
    """The shipped English word list, lower-cased (read once)."""
    data = resources.files("engine.agents").joinpath("data/words-en.txt.gz").read_bytes()
    return frozenset(gzip.decompress(data).decode("utf-8").split()) | EXTRA_WORDS


def is_dictionary_word(token: str, names: Iterable[str] = ()) -> bool:
    """``token`` (punctuation around it aside) is an English word or one of ``names``,
    or emoji (no letters, but no noise either)."""
    word = token.strip(_EDGE).replace("’", "'")
    if word and _is_emoji(word):
        return True
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


def _is_emoji(token: str) -> bool:
    """``token`` is symbols such as emoji (with their joiners and modifiers) only."""
    kinds = {unicodedata.category(ch) for ch in token}
    return "So" in kinds and kinds <= _EMOJI_KINDS


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
    """``text`` holds one of ``MARKUP`` (the prompt's markup, a chat template's), or one
    of ``headings`` as a heading: followed by a colon, a heading of several words opening
    the line, or one whose capital comes in mid-sentence ("you are Eliza Exits again")."""
    if _MARKUP.search(text):
        return True
    return any(pattern.search(text) for pattern in _heading_patterns(tuple(headings)))


@lru_cache(maxsize=64)
def _heading_patterns(headings: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    """The three ways a heading shows in a line, each one regex for all ``headings``.

    A heading of several words counts only where it opens the line and ends there or at
    a full stop, a colon or a bracket (``Good moves here.``): "Are you also here for the
    fair?" and "in the recent past" are speech."""
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
        opening = rf"^\W*(?:{'|'.join(several)})\s*(?:$|[.:(\[])"
        patterns.append(re.compile(opening, re.IGNORECASE))
    return tuple(patterns)


def copies(text: str, instructions: Sequence[str], size: int = COPY_WORDS) -> bool:
    """``text`` shares ``size`` words in a row with one of the ``instructions`` lines."""
    mine = _runs(_words(text), size)
    return bool(mine) and any(mine & _runs(_words(line), size) for line in instructions)


def has_content(text: str) -> bool:
    """``text`` holds a letter, a digit or a symbol such as an emoji (not only
    punctuation, spaces or invisible characters)."""
    return any(ch.isalnum() or unicodedata.category(ch) == "So" for ch in text)


def stutters(text: str, times: int = STUTTER) -> bool:
    """One word of ``text`` comes ``times`` times or more in a row (case aside)."""
    run, last = 0, None
    for word in _words(text):
        run = run + 1 if word == last else 1
        if run >= times:
            return True
        last = word
    return False


def check_speech(
    text: str,
    instructions: Instructions | Iterable[str] = (),
    recent: Sequence[str] = (),
    *,
    noise_check: bool = False,
) -> SpeechVerdict:
    """Whether the ``say`` or ``emote`` text ``text`` is speech, against the prompt's
    ``instructions`` (an ``Instructions``, or its lines) and the agent's ``recent``
    speech lines (oldest first). ``noise_check``: the backend is known to write noise
    (the embedded model): a line must also be mostly English dictionary words and not
    stutter."""
    if isinstance(instructions, Instructions):
        rules = instructions
    else:
        rules = Instructions.of(instructions)
    if not has_content(text):
        return SpeechVerdict(False, "empty")
    if has_markup(text, rules.headings):
        return SpeechVerdict(False, "markup")
    if copies(text, rules.lines):
        return SpeechVerdict(False, "copied")
    if noise_check:
        if word_share(text, rules.names) < DICTIONARY_SHARE:
            return SpeechVerdict(False, "not words")
        if stutters(text):
            return SpeechVerdict(False, "stutter")
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
