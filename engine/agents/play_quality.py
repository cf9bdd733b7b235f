"""Is a turn sensible play? (pure, no I/O) — the measure ``scripts/bench.py play`` reports.

A turn is sensible when it ran a valid command that is not a no-op, is not one of the
agent's last three commands, for a ``note``, has a title made of words, and for a
``say`` or ``emote``, is language (``engine.agents.speech_check``).

- Not valid: the turn was skipped, the reply held no command, or the command failed
  (an unknown verb, an exit that is not there).
- A no-op: ``help`` (reading the manual is not playing), or free text with no word in
  it (``say 2111242232``, ``emote ...``).
- A repeat: the same command (its verb and arguments, whatever the reason or case) as
  one of the agent's last ``RECENT_COMMANDS`` commands.
- Speech that is not speech: prompt markup or headings (or a chat template's), text
  copied from the prompt's instructions, one of the agent's last five speech lines
  again, and with ``noise_check`` (the embedded model) fewer than 80% English dictionary
  words or one word over and over (the verdict is ``speech <reason>``: ``speech empty``,
  ``speech markup``, ``speech copied``, ``speech not words``, ``speech stutter``,
  ``speech repeat``).
- A word is a run of letters (any script) of which, in the Latin alphabet, at least one
  is a vowel: ``Kettle``, ``Café``, ``日本`` are words; ``2111242232``, ``xzk``, ``--`` are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from engine.agents.reply import RECENT_COMMANDS
from engine.agents.speech_check import SPEECH_VERBS, Instructions, check_speech

NO_OP_VERBS: Final = frozenset({"help"})
FREE_TEXT_VERBS: Final = frozenset({"say", "emote", "think", "note", "recall"})

_LETTERS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_TOKEN = re.compile(r"\S+")
_LATIN = re.compile(r"[A-Za-z]")
_VOWEL = re.compile(r"[aeiouyAEIOUYàáâäæèéêëìíîïòóôöœùúûüÿ]")


def is_word(token: str) -> bool:
    """A token that is a word, once the punctuation around it is stripped."""
    match = _LETTERS.fullmatch(token.strip(".,;:!?\"'()[]…"))
    if match is None:
        return False
    letters = match.group()
    return _VOWEL.search(letters) is not None or _LATIN.search(letters) is None


def is_words(text: str) -> bool:
    """Every token of ``text`` is a word, and there is at least one."""
    tokens = _TOKEN.findall(text)
    return bool(tokens) and all(map(is_word, tokens))


def has_words(text: str) -> bool:
    """At least one token of ``text`` is a word of two letters or more."""
    return any(is_word(token) and len(token) > 1 for token in _TOKEN.findall(text))


@dataclass(frozen=True, slots=True)
class Verdict:
    sensible: bool
    why: str
    """``sensible``, or the first reason it is not: ``skipped``, ``failed``, ``no-op``,
    ``repeat``, ``junk note title``."""


def judge_turn(
    verb: str | None,
    argument: str,
    *,
    ok: bool,
    key: str | None,
    recent_keys: Sequence[str],
    instructions: Instructions | Iterable[str] = (),
    recent_speech: Sequence[str] = (),
    noise_check: bool = False,
) -> Verdict:
    """Judge one turn.

    ``verb`` and ``argument``: the command as parsed (``verb`` None when no command ran);
    ``ok``: the command succeeded; ``key``: its repeat key; ``recent_keys``: the repeat
    keys of the agent's earlier commands, oldest first; ``instructions``: the turn's
    prompt instructions (``speech_check.instruction_lines``) and ``recent_speech``: the
    agent's earlier ``say``/``emote`` texts, oldest first, for the speech check;
    ``noise_check``: the model is known to write noise (the embedded model,
    ``Thinker.noise_check``), so speech must also be English words.
    """
    if verb is None:
        return Verdict(False, "skipped")
    if not ok:
        return Verdict(False, "failed")
    if verb in NO_OP_VERBS:
        return Verdict(False, "no-op")
    if verb in FREE_TEXT_VERBS:
        title, arrow, body = argument.partition("->")
        if verb == "note" and arrow and not is_words(title):
            return Verdict(False, "junk note title")
        if not has_words(body if arrow else argument):
            return Verdict(False, "no-op")
    if verb in SPEECH_VERBS:
        speech = check_speech(argument, instructions, recent_speech, noise_check=noise_check)
        if not speech.passes:
            return Verdict(False, f"speech {speech.why}")
    if key is not None and key in recent_keys[-RECENT_COMMANDS:]:
        return Verdict(False, "repeat")
    return Verdict(True, "sensible")
